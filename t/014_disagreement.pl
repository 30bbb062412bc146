# A TSC that keeps disagreeing with clock_gettime (fault-injection build,
# in a private installation: the node clock jumps an hour forward inside
# every query, re-armed before each), as after a live migration: the
# client of EXPLAIN hears of it with each EXPLAIN whose clocks disagreed
# (a WARNING each, at most 3 a backend), the client
# of a query auto_explain times never (it asked for no node times), the
# server log a bounded number of times (the first disagreement, then a LOG
# line at most every 10 s, saying how many it left out), and after 3
# disagreements the backend times plan nodes
# with clock_gettime for good, whatever fasttime.clock_source says (tsc,
# try_tsc, auto), logging that once with why and what to do.  SHOW,
# fasttime_status() and its parallel workers follow; a new session starts
# on the TSC again.  Nothing measured is changed.  Exact timing
# (fasttime.node_timing = exact, set in each session: the default is
# profiled timing), every call timed.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin/lib";
use FtTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my ($fault, $why) = ft_fault_install();
plan skip_all => "no fault-injection build: $why" unless $fault;

# machine kind (a): a kernel on the TSC and cheap reads, so that auto
# chooses the TSC too (the real TSC must be usable: checked below)
local $ENV{FASTTIME_FAULT_FACTS} = 'machine_a';
my $node = ft_node('disagreement', install_path => $fault);
$node->start;
ft_sql($node, 'CREATE EXTENSION fasttime');
my ($rc, $out, $err) = ft_sql($node, "SELECT value FROM fasttime_status() WHERE name = 'tsc_usable'");
if ($out ne 'true')
{
	note("the TSC is not usable here ($out): nothing to disagree");
	$node->stop;
	done_testing();
	exit 0;
}
ft_sql($node, q{
	CREATE TABLE ft AS SELECT g FROM generate_series(1, 60000) g;
	VACUUM ANALYZE ft;
});
my $pg_major = $node->safe_psql('postgres', 'SHOW server_version_num') / 10000;

my $serial = 'SET max_parallel_workers_per_gather = 0;';
my $exact = 'SET fasttime.node_timing = exact;';
my $par = ft_parallel_settings();
my $jump = 'SET fasttime.fault_tick_amount_ns = 3.6e12; SET fasttime.fault_tick_mode = jump_forward;';
# re-arming the fault (any SET of a fault setting) before each query makes
# the clock jump inside it, at its 300th node-clock read
my $query = "SET fasttime.fault_tick_at = 300;\nEXPLAIN (ANALYZE, COSTS OFF, FORMAT JSON) SELECT count(*) FROM ft;\n";

my $fallback_re = qr/LOG:  this backend times plan nodes with clock_gettime from now on, whatever fasttime\.clock_source says/;
my $again_re = qr/LOG:  the TSC disagreed with clock_gettime during a query again/;
my $warning_re = qr/WARNING:  fasttime: the TSC disagreed with clock_gettime during this query/;
my $first_re = qr/LOG:  fasttime: the TSC disagreed with clock_gettime during a query\n/;
my $worker_first_re = qr/LOG:  fasttime: the TSC disagreed with clock_gettime during a query in a parallel worker/;

# the lines of a piece of server log written by one process
sub lines_of
{
	my ($log, $pid) = @_;
	return join("\n", grep { /\[$pid\]/ } split /\n/, $log);
}

# "key:value" lines of a psql output, as a hash
sub keyed
{
	my ($text) = @_;
	my %v;
	for (split /\n/, $text) { $v{$1} = $2 if /^(\w+):(.*)$/; }
	return %v;
}

# ---- one session, 10 disagreeing queries, under each setting -------------
# (auto only where it chooses the TSC: from PostgreSQL 19 on it follows the
# server's own clock, timing_clock_source, which may be the system clock)
my @settings = ('tsc', 'try_tsc');
($rc, $out) = ft_sql($node, 'SET fasttime.clock_source = auto; SHOW fasttime.clock_source_status');
if ($out eq 'tsc')
{
	push @settings, 'auto';
}
else
{
	note("auto does not choose the TSC here ($out): its fallback is not tested");
}
for my $setting (@settings)
{
	my $off = -s $node->logfile;
	my $sql = "SET fasttime.clock_source = $setting; $exact $serial $jump
		SELECT 'pid:' || pg_backend_pid();
		SELECT 'status0:' || current_setting('fasttime.clock_source_status');\n"
	  . ($query x 10) . "
		SELECT 'status1:' || current_setting('fasttime.clock_source_status');
		SET fasttime.clock_source = tsc;
		SELECT 'status2:' || current_setting('fasttime.clock_source_status');
		SELECT name || ':' || coalesce(value, '<null>') FROM fasttime_status()
		 WHERE name IN ('tsc_disagreements', 'tsc_fallback', 'effective_source', 'tsc_timed_queries');\n"
	  . ($pg_major >= 18
		? "EXPLAIN (ANALYZE, CLOCK_SOURCE, COSTS OFF, TIMING ON) SELECT count(*) FROM ft;\n"
		: '');
	($rc, $out, $err) = ft_sql($node, $sql);
	is($rc, 0, "$setting: the session ran") or diag($err);
	my %v = keyed($out);
	is($v{status0}, 'tsc', "$setting: the session starts on the TSC");

	my @plans = $out =~ /"Execution Time"/g;
	is(scalar @plans, 10, "$setting: all 10 queries ran EXPLAIN ANALYZE");
	unlike($out, qr/"Actual (Startup|Total) Time": -/, "$setting: no negative time");
	my @w = $err =~ /$warning_re/g;
	is(scalar @w, 3, "$setting: each of the 3 disagreeing EXPLAINs warned its client, no later one") or diag($err);

	is($v{tsc_disagreements}, '3', "$setting: 3 disagreements counted, then no query timed with the TSC");
	is($v{tsc_timed_queries}, '3', "$setting: 3 queries timed with the TSC, the other 7 with clock_gettime");
	is($v{status1}, 'clock_gettime', "$setting: after the fallback, clock_source_status is clock_gettime");
	is($v{status2}, 'clock_gettime', "$setting: and stays so after SET fasttime.clock_source = tsc");
	is($v{effective_source}, 'clock_gettime', "$setting: fasttime_status() effective_source is clock_gettime");
	like($v{tsc_fallback} // '',
		qr/^this backend fell back to clock_gettime for the rest of its life: the TSC disagreed with clock_gettime 3 times in this backend/,
		"$setting: fasttime_status() tsc_fallback says why");
	if ($pg_major >= 18)
	{
		like($out, qr/Timing Source: clock_gettime \(this backend fell back to clock_gettime/,
			"$setting: EXPLAIN (CLOCK_SOURCE) says why the TSC did not time the plan");
	}

	my $log = lines_of(ft_log_since($node, $off), $v{pid});
	my @fb = $log =~ /$fallback_re/g;
	is(scalar @fb, 1, "$setting: the fallback is logged once") or diag($log);
	like($log, qr/$fallback_re[^\n]*\n[^\n]*DETAIL:  The TSC disagreed with clock_gettime 3 times in this backend, by more than 0\.1 % plus 0\.050 ms; over the last, [\d.]+ ms of clock_gettime time, the TSC advanced [\d.]+ ms \(disagreements not logged since the last one reported: 0\)\.\n[^\n]*HINT:  [^\n]*fasttime\.clock_source = clock_gettime/,
		"$setting: the fallback's LOG line says why (DETAIL) and what to do (HINT)");
	my @again = $log =~ /$again_re/g;
	my @logged_w = $log =~ /$warning_re/g;
	ok(@again + @logged_w <= 3 && @fb == 1,
		"$setting: the server log reports at most the 3 disagreements and the fallback (" . scalar(@logged_w) . ' WARNING, '
		  . scalar(@again) . ' LOG, ' . scalar(@fb) . ' fallback)');
}

# ---- nested statements: the fallback takes effect at once ----------------
# Under auto_explain with nested statements, each statement of a PL/pgSQL
# loop is a query of its own, timed and compared; the clock jumps back and
# forth by an hour inside each (switching the mode re-arms the fault, from
# a PL/pgSQL assignment, which is no query).  The 3rd disagreement makes
# the backend fall back, and the statements after it, within the same
# top-level statement, are timed with clock_gettime.  (The top-level
# statement itself was timed with the TSC from before the fallback, and
# its own comparison spans the jumps: a 4th disagreement, its own.  It is
# written as a LIMIT over a table's scan, so that its plan is not small:
# fasttime leaves a plan of fewer than 8 estimated node calls to stock,
# node_timing.c, as it does the query reading the pid.)
{
	my $off = -s $node->logfile;
	($rc, $out, $err) = ft_sql($node, q{
		CREATE FUNCTION nested_jumps(n int) RETURNS bigint LANGUAGE plpgsql AS $$
		DECLARE
			r bigint;
			t bigint := 0;
			dummy text;
		BEGIN
			FOR k IN 1..n LOOP
				dummy := set_config('fasttime.fault_tick_mode',
									CASE WHEN k % 2 = 1 THEN 'jump_back' ELSE 'jump_forward' END, false);
				SELECT count(*) INTO r FROM ft;
				t := t + r;
			END LOOP;
			RETURN t;
		END $$;
		SET fasttime.clock_source = tsc; SET fasttime.node_timing = exact;
		SET max_parallel_workers_per_gather = 0;
		SET fasttime.fault_tick_amount_ns = 3.6e12; SET fasttime.fault_tick_at = 3;
		LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0;
		SET auto_explain.log_analyze = on; SET auto_explain.log_nested_statements = on;
		SELECT 'pid:' || pg_backend_pid();
		SELECT 'sum:' || nested_jumps(6) FROM ft LIMIT 1;
		SELECT name || ':' || coalesce(value, '<null>') FROM fasttime_status()
		 WHERE name IN ('tsc_disagreements', 'tsc_timed_queries');
		SELECT 'status:' || current_setting('fasttime.clock_source_status');
		DROP FUNCTION nested_jumps(int);
	});
	is($rc, 0, 'nested: the session ran') or diag($err);
	my %v = keyed($out);
	is($v{sum}, '360000', 'nested: the loop ran its 6 statements');
	is($v{tsc_timed_queries}, '4', 'nested: the top-level statement and 3 nested ones timed with the TSC, the 3 after the fallback not')
	  or diag($err);
	ok($v{tsc_disagreements} eq '3' || $v{tsc_disagreements} eq '4',
		"nested: no disagreement after the fallback but the top-level statement's ($v{tsc_disagreements})");
	is($v{status}, 'clock_gettime', 'nested: fallen back');
	# no EXPLAIN: the client asked for no node times and hears nothing;
	# the server log, where auto_explain writes the plans, has it all
	unlike($err, qr/WARNING/, 'nested: no WARNING reached the client under auto_explain') or diag($err);
	my $log = lines_of(ft_log_since($node, $off), $v{pid});
	my @first = $log =~ /$first_re/g;
	is(scalar @first, 1, 'nested: the first disagreement is logged once, at LOG') or diag($log);
	like($log, qr/$first_re[^\n]*DETAIL:  Over [\d.]+ ms of clock_gettime time, the TSC advanced -?[\d.]+ ms\. The plan node times of that query were taken with the TSC and are shown as measured\.\n[^\n]*HINT:  [^\n]*fasttime\.clock_source = clock_gettime/,
		'nested: the LOG line says by how much (DETAIL) and what to do (HINT)');
	unlike($log, $warning_re, 'nested: no WARNING in the server log either');
	my @fb = $log =~ /$fallback_re/g;
	is(scalar @fb, 1, 'nested: the fallback is logged once');
}

# ---- auto_explain first, EXPLAIN later -----------------------------------
# Queries auto_explain times disagree first (logged, the client not
# warned); each EXPLAIN that disagrees warns its client: a user who asks
# for node times hears that they may be wrong, whatever the server log
# said before.
{
	my $off = -s $node->logfile;
	my $sql = "SET fasttime.clock_source = tsc; $exact $serial $jump SET fasttime.fault_fallback_after = 100;
		LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0; SET auto_explain.log_analyze = on;
		SELECT 'pid:' || pg_backend_pid();\n"
	  . ("SET fasttime.fault_tick_at = 300;\nSELECT 'count:' || count(*) FROM ft;\n" x 2)
	  . "\\warn explain\n"
	  . ($query x 2)
	  . "SELECT 'disagreements:' || value FROM fasttime_status() WHERE name = 'tsc_disagreements';";
	($rc, $out, $err) = ft_sql($node, $sql);
	is($rc, 0, 'auto_explain, then EXPLAIN: the session ran') or diag($err);
	my %v = keyed($out);
	is($v{disagreements}, '4', 'auto_explain, then EXPLAIN: 4 disagreements counted');
	my ($before, $after) = split /^explain$/m, $err, 2;
	unlike($before // '', qr/WARNING/, 'auto_explain, then EXPLAIN: no WARNING for the queries auto_explain timed')
	  or diag($err);
	my @w = ($after // '') =~ /$warning_re/g;
	is(scalar @w, 2, 'auto_explain, then EXPLAIN: each of the 2 EXPLAINs that disagree warns its client') or diag($err);
	my $log = lines_of(ft_log_since($node, $off), $v{pid});
	my @first = $log =~ /$first_re/g;
	is(scalar @first, 1, 'auto_explain, then EXPLAIN: the first disagreement logged at LOG') or diag($log);
	my @plans = $log =~ /LOG:  duration: [\d.]+ ms  plan:/g;
	cmp_ok(scalar @plans, '>=', 2, 'auto_explain, then EXPLAIN: auto_explain logged the plans');
}

# ---- a new session is back on the TSC ------------------------------------
($rc, $out) = ft_sql($node, "SET fasttime.clock_source = tsc;
	SELECT 'status:' || current_setting('fasttime.clock_source_status');
	SELECT name || ':' || coalesce(value, '<null>') FROM fasttime_status()
	 WHERE name IN ('tsc_disagreements', 'tsc_fallback');");
my %fresh = keyed($out);
is($fresh{status}, 'tsc', 'a new session is back on the TSC');
is($fresh{tsc_fallback}, '<null>', 'a new session has not fallen back');
is($fresh{tsc_disagreements}, '0', 'a new session has counted no disagreement');

# ---- parallel: workers follow their leader -------------------------------
# The workers do all the scanning (no leader participation), and the
# clock jumps at the 6th read of each process, which the leader reaches
# too: every process of each query disagrees.  The leader's EXPLAIN warns
# its client in each of the 3 queries before the fallback; the workers
# report to the server log only.  The 3rd disagreeing query runs
# in a transaction that is rolled back: the fallback, handed to the
# workers in a setting, must outlive that.
{
	my $off = -s $node->logfile;
	my $sql = "SET fasttime.clock_source = tsc; $exact $par SET parallel_leader_participation = off;
		$jump SET client_min_messages = debug1;
		SELECT 'pid:' || pg_backend_pid();\n";
	my $pquery = "SET fasttime.fault_tick_at = 6;\nEXPLAIN (ANALYZE, COSTS OFF, FORMAT JSON) SELECT count(*) FROM ft;\n";
	for my $i (1 .. 6)
	{
		$sql .= "\\warn q$i\n";
		$sql .= $i == 3 ? "BEGIN;\n$pquery" . "ROLLBACK;\n" : $pquery;
	}
	$sql .= "\\warn end\n";
	($rc, $out, $err) = ft_sql($node, $sql);
	is($rc, 0, 'parallel: the session ran') or diag($err);
	my %v = keyed($out);
	my %q;
	for my $part (split /^(?=q\d\n|end\n)/m, $err)
	{
		$q{$1} = $part if $part =~ /^(q\d)\n/;
	}
	my @launched = $out =~ /"Workers Launched": (\d+)/g;
	ok(@launched == 6 && !grep({ $_ == 0 } @launched), "parallel: 6 queries, each with workers (@launched)");
	my @first3 = grep { ($q{$_} // '') =~ $warning_re } qw(q1 q2 q3);
	is(scalar @first3, 3, "parallel: each of the first 3 queries draws a WARNING (@first3)");
	my @later = grep { ($q{$_} // '') =~ $warning_re } qw(q4 q5 q6);
	is(scalar @later, 0, "parallel: no query after the fallback draws a WARNING, not even from its workers (@later)");
	my @twice = grep { my @n = ($q{$_} // '') =~ /$warning_re/g; @n > 1 } qw(q1 q2 q3);
	is(scalar @twice, 0, "parallel: one WARNING a query, none from its workers (@twice)");
	my $after = join('', map { $q{$_} // '' } qw(q4 q5 q6));
	my @wtsc = $after =~ /plan nodes timed with the TSC in parallel worker/g;
	my @wcg = $after =~ /plan nodes on fasttime's wrappers, timer clock_gettime, in parallel worker/g;
	my @btsc = $after =~ /plan nodes timed with the TSC in backend/g;
	ok(@wtsc == 0 && @wcg > 0 && @btsc == 0,
		'parallel: after the fallback (rolled back with its transaction), the leader and its workers time with clock_gettime ('
		  . scalar(@wcg) . ' worker walks on clock_gettime, ' . scalar(@wtsc) . ' on the TSC)')
	  or diag($after);
	my $log = ft_log_since($node, $off);
	my @fb = lines_of($log, $v{pid}) =~ /$fallback_re/g;
	is(scalar @fb, 1, 'parallel: the leader logged its fallback once');
	# (what a worker sends its leader is logged again by the leader: the
	# lines written by the workers themselves are counted)
	my @again = $log =~ /parallel worker $again_re\n[^\n]*DETAIL:  [^\n]*in this parallel worker\. [^\n]*Its leader has reported a disagreement already\./g;
	my @wfirst = $log =~ /parallel worker $worker_first_re/g;
	ok(@again >= 1 && @again + @wfirst <= 6,
		'parallel: the workers of queries 1 to 3 (2 each) reported to the server log (' . scalar(@again) . ' after their leader, '
		  . scalar(@wfirst) . ' before)');
	my @warned = $log =~ /parallel worker $warning_re/g;
	is(scalar @warned, 0, 'parallel: no worker warned (they cannot tell EXPLAIN from auto_explain)');
}

# ---- the LOG lines' rate limit -------------------------------------------
# With the fallback put off (a fault setting), every EXPLAIN warns its
# client; the WARNINGs are in the server log too, and they count as the
# reports the LOG lines' rate limit spaces out.  Run as auto_explain's
# queries, whose client hears nothing: disagreements 2 to 5 come within
# 10 s of the first and are not logged; the 6th, after 10 s, is, and says
# 4 were left out; the 7th, at once after it, is not.
{
	my $off = -s $node->logfile;
	my $ae_query = "SET fasttime.fault_tick_at = 300;\nSELECT 'count:' || count(*) FROM ft;\n";
	my $sql = "SET fasttime.clock_source = tsc; $exact $serial $jump SET fasttime.fault_fallback_after = 100;
		LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0; SET auto_explain.log_analyze = on;
		SELECT 'pid:' || pg_backend_pid();\n"
	  . ($ae_query x 5)
	  . "SELECT pg_sleep(10.5);\n"
	  . ($ae_query x 2)
	  . "SELECT 'disagreements:' || value FROM fasttime_status() WHERE name = 'tsc_disagreements';
		SELECT 'status:' || current_setting('fasttime.clock_source_status');";
	($rc, $out, $err) = ft_sql($node, $sql);
	is($rc, 0, 'rate limit: the session ran') or diag($err);
	my %v = keyed($out);
	is($v{disagreements}, '7', 'rate limit: 7 disagreements counted');
	is($v{status}, 'tsc', 'rate limit: no fallback before fasttime.fault_fallback_after');
	unlike($err, qr/WARNING/, 'rate limit: no WARNING reached the client of auto_explain\'s queries');
	my $log = lines_of(ft_log_since($node, $off), $v{pid});
	my @first = $log =~ /$first_re/g;
	is(scalar @first, 1, 'rate limit: the first disagreement logged at LOG') or diag($log);
	my @again = $log =~ /$again_re/g;
	is(scalar @again, 1, 'rate limit: one LOG line for the 6 later disagreements') or diag($log);
	like($log, qr/$again_re\n[^\n]*DETAIL:  Over [\d.]+ ms of clock_gettime time, the TSC advanced [\d.]+ ms\. [^\n]*Disagreements in this backend so far: 6; not logged since the last one logged: 4 \(at most one is logged every 10 s\)\./,
		'rate limit: the LOG line says how many were not logged since the last');
	unlike($log, $fallback_re, 'rate limit: no fallback logged');
}

# ---- a wrong frequency, and the conversion that counts -------------------
# fasttime's frequency 1 % off, unnoticed (FASTTIME_FAULT_FACTS token
# freq_skew_1pct): where fasttime converts the node times (up to 18, and 19
# on the system clock), the per-query check must catch it, since every
# node time is 1 % off; where they are written as the server's own TSC
# ticks (19's TSC clock in effect), the server's conversion makes them,
# they are right, and the check must say nothing: it judges the
# conversion the times were made with.
{
	$node->stop;
	local $ENV{FASTTIME_FAULT_FACTS} = 'machine_a,freq_skew_1pct';
	$node->start;
	($rc, $out, $err) = ft_sql($node, "SET fasttime.clock_source = tsc; $exact $serial
		SELECT 'unit:' || coalesce(max(value) FILTER (WHERE name = 'node_time_unit'), 'nanoseconds')
		  FROM fasttime_status();
		EXPLAIN (ANALYZE, COSTS OFF, FORMAT JSON) SELECT count(*) FROM generate_series(1, 6000000) g WHERE g % 7 <> 3;
		EXPLAIN (ANALYZE, COSTS OFF, FORMAT JSON) SELECT count(*) FROM generate_series(1, 6000000) g WHERE g % 7 <> 3;
		SELECT 'disagreements:' || value FROM fasttime_status() WHERE name = 'tsc_disagreements';
		SELECT 'status:' || current_setting('fasttime.clock_source_status');");
	is($rc, 0, 'frequency 1 % off: the session ran') or diag($err);
	my %v = keyed($out);
	my @execs = $out =~ /"Execution Time": ([\d.]+)/g;
	# 1 % of a query must stand well clear of the tolerance: 50 us + 0.1 %,
	# plus up to 1 ms of each stamp's doubt on a busy machine
	my $short = grep { $_ < 400 } @execs;
	if ($v{status} ne 'tsc')
	{
		note("the TSC is not in effect under the skewed facts ($v{status})");
	}
	elsif ($short)
	{
		note("a query ran under 400 ms (@execs): 1 % of it may hide within the tolerance");
	}
	elsif (($v{unit} // '') eq 'tsc_ticks')
	{
		is($v{disagreements}, '0', "frequency 1 % off, times in the server's TSC ticks: no disagreement (@execs ms)")
		  or diag($err);
		unlike($err, $warning_re, "frequency 1 % off, times in the server's TSC ticks: no WARNING");
	}
	else
	{
		is($v{disagreements}, '2', "frequency 1 % off, times converted by fasttime: both queries disagree (@execs ms)")
		  or diag($err);
		like($err, $warning_re, 'frequency 1 % off, times converted by fasttime: the EXPLAIN warns');
	}
}

unlike(slurp_file($node->logfile), qr/terminated by signal|PANIC|server process .* was terminated/,
	'no backend crashed');
$node->stop;
done_testing();
