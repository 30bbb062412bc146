# fasttime without shared_preload_libraries: LOAD 'fasttime' in a session
# (and session_preload_libraries) works, and its parallel workers, which
# load the library themselves, adopt their leader's clock facts instead of
# measuring again: the leader logs "clock facts detected" once, each worker
# "adopted its leader's clock facts", and no worker ever detects.  The
# check of fasttime.clock_source in a function's SET clause measures
# nothing.  The EXPLAIN ANALYZEs time exactly (fasttime.node_timing =
# exact, set after the LOAD: the default is profiled timing), so that every
# process's DEBUG1 line says how it timed every call.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin/lib";
use FtTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = ft_node('load', preload => 0);
$node->start;

my ($rc, $out, $err) = ft_sql($node, q{
	CREATE TABLE big AS SELECT g, g % 1000 AS k FROM generate_series(1, 200000) g;
	VACUUM ANALYZE big;
	SHOW shared_preload_libraries;
});
is($out, '', 'fasttime is not preloaded');

my $par = ft_parallel_settings();
my $debug = 'SET client_min_messages = debug1; SET log_min_messages = debug1;';
my $detect_re = qr/fasttime: clock facts detected in ([\d.]+) ms/;
my $adopt_re = qr/fasttime: parallel worker adopted its leader's clock facts/;

# ---- LOAD, then serial EXPLAIN ANALYZE ----------------------------------
($rc, $out, $err) = ft_sql($node, "$debug LOAD 'fasttime'; SET fasttime.clock_source = try_tsc;
	SHOW fasttime.clock_source_status;");
is($rc, 0, 'LOAD fasttime and SET fasttime.clock_source') or diag($err);
my $status = (split /\n/, $out)[-1] // '';
my @d = $err =~ /$detect_re/g;
is(scalar @d, 1, "facts detected once, on first need (here SHOW clock_source_status) (@d ms)");

# ---- the setting's check neither calibrates nor talks --------------------
# A function's SET clause runs fasttime.clock_source's check at every call:
# with the facts not detected yet (not preloaded), "tsc" is accepted
# without calibrating, and "try_tsc" draws no NOTICE.  A SET statement of
# its own does detect them, to refuse an unusable "tsc" at once.  (The
# functions are created before fasttime is loaded, so that creating them
# checks nothing either.)
ft_sql($node, q{
	CREATE FUNCTION f_tsc() RETURNS int LANGUAGE sql
	  SET fasttime.clock_source = tsc AS 'SELECT 1';
	CREATE FUNCTION f_try() RETURNS int LANGUAGE sql
	  SET fasttime.clock_source = try_tsc AS 'SELECT 1';
});
($rc, $out, $err) = ft_sql($node, "SET client_min_messages = debug1; LOAD 'fasttime';
	SELECT f_tsc(); SELECT f_tsc(); SELECT f_try(); SELECT f_try(); SELECT f_tsc();");
is($rc, 0, 'functions with SET fasttime.clock_source = tsc / try_tsc run after LOAD') or diag($err);
@d = $err =~ /$detect_re/g;
is(scalar @d, 0, 'their SET clauses do not detect the facts (no calibration)');
unlike($err, qr/NOTICE|WARNING/, 'their SET clauses draw no NOTICE');
($rc, $out, $err) = ft_sql($node, "SET client_min_messages = debug1; LOAD 'fasttime';
	SELECT f_try(); SET fasttime.clock_source = tsc;");
@d = $err =~ /$detect_re/g;
ok(@d == 1 && ($rc == 0 || $err =~ /cannot be "tsc" on this machine/),
	'an interactive SET fasttime.clock_source = tsc detects the facts, to refuse it at once if need be')
  or diag($err);
# ALTER SYSTEM stores the value for every later session and the next
# start, where a refused "tsc" would stop a preloading server: it detects
# the facts too, to refuse it now
($rc, $out, $err) = ft_sql($node, "SET client_min_messages = debug1; LOAD 'fasttime';
	ALTER SYSTEM SET fasttime.clock_source = tsc;");
@d = $err =~ /$detect_re/g;
ok(@d == 1 && ($rc == 0 || $err =~ /cannot be "tsc" on this machine/),
	'ALTER SYSTEM SET fasttime.clock_source = tsc after LOAD detects the facts, to refuse it at once if need be')
  or diag($err);
# (with fasttime loaded: up to 16 ALTER SYSTEM RESET of a parameter not
# loaded fails, "unrecognized configuration parameter", and
# postgresql.auto.conf would keep "tsc")
($rc, $out, $err) = ft_sql($node, "LOAD 'fasttime'; ALTER SYSTEM RESET fasttime.clock_source;");
is($rc, 0, 'ALTER SYSTEM RESET fasttime.clock_source') or diag($err);
ft_sql($node, 'DROP FUNCTION f_tsc(); DROP FUNCTION f_try();');

# ---- "tsc" in postgresql.conf of a server that does not preload it -------
# The backend reads it as a placeholder and LOAD takes it over when
# fasttime defines the setting, inside the LOAD's transaction: accepted as
# it is, neither calibrating there nor talking (before 3620c04 each such
# backend detected the facts at LOAD, and warned where the TSC is
# unusable).  Where the TSC is unusable nodes are timed with clock_gettime.
$node->append_conf('postgresql.conf', 'fasttime.clock_source = tsc');
$node->reload;
$node->poll_query_until('postgres', 'SHOW fasttime.clock_source', 'tsc')
  or die 'the reload did not make fasttime.clock_source tsc';
($rc, $out, $err) = ft_sql($node, "SET client_min_messages = debug1; LOAD 'fasttime';
	SELECT 'after load';");
is($rc, 0, 'tsc in postgresql.conf, not preloaded: LOAD runs') or diag($err);
@d = $err =~ /$detect_re/g;
is(scalar @d, 0, 'tsc in postgresql.conf, not preloaded: LOAD takes the value over without detecting the facts');
unlike($err, qr/WARNING|NOTICE|ERROR/, 'tsc in postgresql.conf, not preloaded: LOAD says nothing') or diag($err);
($rc, $out, $err) = ft_sql($node, "BEGIN; LOAD 'fasttime'; SHOW fasttime.clock_source;
	SELECT current_setting('fasttime.clock_source_status'); COMMIT;");
like($out, qr/^tsc\n(tsc|clock_gettime)$/,
	'tsc in postgresql.conf, not preloaded: the setting is tsc, in effect the TSC or clock_gettime') or diag($err);
unlike($err, qr/WARNING|ERROR/, 'tsc in postgresql.conf, not preloaded: LOAD in a transaction block says nothing')
  or diag($err);
$node->append_conf('postgresql.conf', 'fasttime.clock_source = auto');
$node->reload;
$node->poll_query_until('postgres', 'SHOW fasttime.clock_source', 'auto')
  or die 'the reload did not make fasttime.clock_source auto';
if ($status ne 'tsc')
{
	note("TSC not usable here ($status): the rest needs it");
	done_testing();
	exit 0;
}

($rc, $out, $err) = ft_sql($node, "$debug LOAD 'fasttime'; SET fasttime.clock_source = tsc;
	SET fasttime.node_timing = exact; SET max_parallel_workers_per_gather = 0;
	EXPLAIN (ANALYZE, FORMAT JSON) SELECT k, count(*) FROM big GROUP BY k ORDER BY k;");
my ($ok, $msg) = ft_check_explain($out);
ok($ok, "after LOAD, serial EXPLAIN ANALYZE under tsc: times sane ($msg)");
like($err, qr/fasttime: [1-9]\d* plan nodes timed with the TSC in backend/, 'after LOAD, nodes are TSC-timed');

# ---- parallel: the first query after LOAD, then more, then after ROLLBACK --
my $off = -s $node->logfile;
my $mark = ft_tsc_mark();
($rc, $out, $err) = ft_sql($node, "$debug LOAD 'fasttime'; $par SET fasttime.clock_source = try_tsc;
	SET fasttime.node_timing = exact;
	EXPLAIN (ANALYZE, FORMAT JSON) SELECT count(*) FROM big a JOIN big b USING (g);
	EXPLAIN (ANALYZE, FORMAT JSON) SELECT count(*) FROM big;
	BEGIN;
	EXPLAIN (ANALYZE, FORMAT JSON) SELECT count(*) FROM big;
	ROLLBACK;
	EXPLAIN (ANALYZE, FORMAT JSON) SELECT count(*) FROM big WHERE k < 500;");
is($rc, 0, 'parallel queries after LOAD ran') or diag($err);
my @launched = $out =~ /"Workers Launched": (\d+)/g;
my $workers = 0;
$workers += $_ for @launched;
is(scalar @launched, 4, 'four parallel plans');
ok($workers >= 4, "workers launched ($workers)");
my @adopted = $err =~ /$adopt_re/g;
is(scalar @adopted, $workers, 'every worker adopted its leader\'s facts');
@d = $err =~ /$detect_re/g;
is(scalar @d, 1, 'only the leader detected the facts, once');
my @wtimed = $err =~ /fasttime: [1-9]\d* plan nodes timed with the TSC in parallel worker at ExecutorRun/g;
is(scalar @wtimed, $workers, 'every worker timed its nodes with the TSC');
like($err, qr/plan nodes timed with the TSC in parallel worker at ExecutorRun \(1 switched\)/,
	'the parallel hash join was re-timed in the workers');
my $jumped = ft_no_warning($err, $mark, 'parallel queries after LOAD') == 2;
my $bad = 0;
for my $json (split /(?<=\])\n(?=\[)/, $out)
{
	my ($ok1, $m) = ft_check_explain($json, as_measured => $jumped);
	$bad++, diag($m) unless $ok1;
}
is($bad, 0, 'all four plans have sane node times');

my $log = ft_log_since($node, $off);
my @wdetect = $log =~ /parallel worker DEBUG:  fasttime: clock facts detected/g;
is(scalar @wdetect, 0, 'server log: no parallel worker detected facts');
my @wtimedlog = $log =~ /parallel worker DEBUG:  fasttime: [1-9]\d* plan nodes timed with the TSC in parallel worker/g;
ok(@wtimedlog >= $workers, 'server log: the workers\' TSC lines are there, so their DEBUG1 reaches it');

# ---- session_preload_libraries: each session loads it, workers adopt ----
ft_sql($node, "ALTER DATABASE postgres SET session_preload_libraries = 'fasttime'");
($rc, $out, $err) = ft_sql($node, "$debug $par SET fasttime.clock_source = tsc; SET fasttime.node_timing = exact;
	EXPLAIN (ANALYZE, FORMAT JSON) SELECT count(*) FROM big;");
($ok, $msg) = ft_check_explain($out);
ok($ok, "session_preload_libraries: parallel EXPLAIN ANALYZE sane ($msg)");
my ($l) = $out =~ /"Workers Launched": (\d+)/;
@adopted = $err =~ /$adopt_re/g;
ok(defined $l && $l > 0 && @adopted == $l,
	"session_preload_libraries: every worker adopted the facts (" . scalar(@adopted) . " of " . ($l // '?') . ")");
ft_sql($node, 'ALTER DATABASE postgres RESET session_preload_libraries');

# ---- the SQL functions load the library on their own ------------------
($rc, $out, $err) = ft_sql($node, "CREATE EXTENSION fasttime;
	SELECT value || ' ' || current_setting('fasttime.clock_source_status')
	  FROM fasttime_status() WHERE name = 'effective_source';");
like($out, qr/^(tsc tsc|clock_gettime clock_gettime)$/,
	'fasttime_status() without preload or LOAD reports the source in effect') or diag($err);

# nothing crashed
unlike(slurp_file($node->logfile), qr/terminated by signal|PANIC/, 'no backend crashed');
$node->stop;
done_testing();
