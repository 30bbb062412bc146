# auto_explain with log_analyze and log_timing: the plans it logs carry
# TSC node times, and nested statements (PL/pgSQL via SPI) are timed
# correctly: each nested plan is TSC-timed, the nested plans fit inside
# the outer query, and the outer node that called the function accounts
# for their time (which cross-checks the TSC conversion against
# clock_gettime, auto_explain's duration).  Both load orders: auto_explain
# LOADed after fasttime was preloaded, and preloaded before it.  Those
# cases time exactly (fasttime.node_timing = exact, set in the session);
# the default is profiled timing, which a long query under auto_explain
# with nothing set shows, on any clock: its plan-level line follows in the
# server log (and, on 18 and later, EXPLAIN (ANALYZE, CLOCK_SOURCE) says
# "Node Timing: profiled").
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin/lib";
use FtTest;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = ft_node('auto_explain');
$node->start;
my ($rc, $status) = ft_sql($node, 'SET fasttime.clock_source = try_tsc; SHOW fasttime.clock_source_status');

ft_sql($node, q{
	CREATE TABLE t AS SELECT g, g % 50 AS k FROM generate_series(1, 20000) g;
	CREATE INDEX ON t (k);
	VACUUM ANALYZE t;
	CREATE FUNCTION inner_count(n int) RETURNS bigint LANGUAGE plpgsql AS $$
	DECLARE r bigint;
	BEGIN
		SELECT count(*) INTO r FROM t a JOIN t b USING (g) WHERE a.k = n % 50;
		RETURN r;
	END $$;
});

my $ae = join(' ',
	'SET auto_explain.log_min_duration = 0;',
	'SET auto_explain.log_analyze = on;',
	'SET auto_explain.log_timing = on;',
	'SET auto_explain.log_nested_statements = on;',
	'SET auto_explain.log_format = json;',
	'SET client_min_messages = debug1;',
	'SET max_parallel_workers_per_gather = 0;');
my $profiled_line = qr/profiled node timing in the plan of this query: exact for the first [0-9.]+ ms, then \d+ ticks of \d+[^;]* ms[^;]*; a node holding 10 % of the time: \+-[0-9.]+ %/;

# ---- the default: profiled timing ----------------------------------------
# What a user gets with nothing set (neither fasttime.node_timing nor
# profile_after nor clock_source, whichever clock auto chose here): a
# query running well past profile_after (20 ms) is profiled, so
# auto_explain's plan is followed by profiled timing's line.  This fails
# where the default is exact timing.
my $default_long = 'SELECT count(*) FROM t a, t b WHERE a.g <= 1500 AND b.g <= 4000 AND a.k + b.k >= 0';
{
	my ($rc1, $defaults) = ft_sql($node,
		"SELECT current_setting('fasttime.node_timing') || ' ' || current_setting('fasttime.profile_after')");
	is($defaults, 'profile 20ms', 'the defaults: node_timing = profile, profile_after = 20 ms');
	my $off = -s $node->logfile;
	my ($rc, $out, $err) = ft_sql($node, "LOAD 'auto_explain'; $ae $default_long");
	is($rc, 0, 'default settings, logged: the query ran') or diag($err);
	my $log = ft_log_since($node, $off);
	my ($ms) = $log =~ /duration: ([\d.]+) ms  plan:/;
	like($log, $profiled_line,
		'default settings: a long query (' . ($ms // '?') . ' ms) is profiled, its line follows in the log');
	SKIP:
	{
		skip 'EXPLAIN (CLOCK_SOURCE) is 18 and later', 1
		  if $node->safe_psql('postgres', 'SHOW server_version_num') < 180000;
		($rc, $out, $err) = ft_sql($node,
			"SET max_parallel_workers_per_gather = 0; EXPLAIN (ANALYZE, CLOCK_SOURCE, COSTS OFF) $default_long");
		like($out, qr/^Node Timing: profiled \(exact for the first [0-9.]+ ms, then \d+ ticks/m,
			'default settings: EXPLAIN (ANALYZE, CLOCK_SOURCE) of the long query says "Node Timing: profiled"')
		  or diag("$out\n$err");
	}
}

# the rest needs the TSC
if ($status ne 'tsc')
{
	note("the TSC is not usable on this machine (status $status): the TSC-timed cases are left out");
	$node->stop;
	done_testing();
	exit 0;
}

# The plans auto_explain logged in a piece of server log, each as
# [duration ms, decoded JSON].
sub logged_plans
{
	my ($log) = @_;
	my @plans;
	# continuation lines of a log entry start with a tab
	while ($log =~ /duration: ([\d.]+) ms  plan:\n\t(\{.*?\n\t\})\n/sg)
	{
		my ($ms, $text) = ($1, $2);
		my $doc = eval { decode_json($text) };
		push @plans, [ $ms, $doc ] if $doc;
	}
	return @plans;
}

# Every node of a plan tree.
sub nodes_of
{
	my ($n) = @_;
	return ($n, map { nodes_of($_) } @{ $n->{Plans} // [] });
}

sub nested_case
{
	my ($what, $load) = @_;
	my $nrows = 30;
	my $off = -s $node->logfile;
	my $mark = ft_tsc_mark();
	my ($rc, $out, $err) = ft_sql($node,
		"$load $ae SET fasttime.clock_source = tsc; SET fasttime.node_timing = exact;\n"
		  . "SELECT g, inner_count(g) FROM t WHERE g <= $nrows");
	is($rc, 0, "$what: query with nested statements ran") or diag($err);
	ft_no_warning($err, $mark, $what);

	my @plans = logged_plans(ft_log_since($node, $off));
	my @inner = grep { ($_->[1]{'Query Text'} // '') =~ /^SELECT count\(\*\)\s+FROM t a/ } @plans;
	my @outer = grep { ($_->[1]{'Query Text'} // '') =~ /inner_count\(g\)/ } @plans;
	is(scalar @inner, $nrows, "$what: auto_explain logged every nested statement ($nrows)");
	is(scalar @outer, 1, "$what: auto_explain logged the outer statement");
	return unless @outer && @inner;

	# every logged plan has node times, sane against its duration
	my @bad;
	for my $p (@plans)
	{
		my ($ms, $doc) = @$p;
		my @n = nodes_of($doc->{Plan});
		push @bad, "no node times: $doc->{'Query Text'}"
		  unless grep { defined $_->{'Actual Total Time'} } @n;
		for my $x (@n)
		{
			my ($s, $t, $l) = @{$x}{ 'Actual Startup Time', 'Actual Total Time', 'Actual Loops' };
			next unless defined $t;
			push @bad, "$x->{'Node Type'}: negative ($s..$t)" if $s < 0 || $t < 0;
			push @bad, "$x->{'Node Type'}: $t x $l ms > duration $ms ms"
			  if $t * $l > $ms + 0.01 * ($l > 1 ? $l : 1);
		}
	}
	ok(!@bad, "$what: every logged plan has sane node times") or diag(join("\n", @bad[0 .. ($#bad < 5 ? $#bad : 5)]));

	# inner <= outer, and the outer scan that calls the function accounts
	# for the nested time (TSC node time vs clock_gettime durations)
	my $outer_ms = $outer[0][0];
	my $sum = 0;
	$sum += $_->[0] for @inner;
	my @over = grep { $_->[0] > $outer_ms } @inner;
	ok(!@over, "$what: no nested statement took longer than the outer one");
	cmp_ok($sum, '<=', $outer_ms + 0.05,
		sprintf('%s: nested durations (%.3f ms in all) fit in the outer duration (%.3f ms)',
			$what, $sum, $outer_ms));
	# the top node evaluates the function (a scan projecting it)
	my $caller = $outer[0][1]{Plan};
	my $caller_ms = $caller ? $caller->{'Actual Total Time'} * $caller->{'Actual Loops'} : -1;
	ok($caller_ms >= 0.9 * $sum - 0.1 && $caller_ms <= $outer_ms + 0.01,
		sprintf('%s: the calling node\'s TSC time (%.3f ms) covers the nested statements (%.3f ms), within the outer duration',
			$what, $caller_ms, $sum));

	# the nested queries were TSC-timed (one DEBUG1 line per query)
	my @timed = $err =~ /fasttime: [1-9]\d* plan nodes timed with the TSC in backend at ExecutorStart/g;
	cmp_ok(scalar @timed, '>=', $nrows + 1, "$what: outer and nested queries TSC-timed");
}

nested_case('auto_explain LOADed', "LOAD 'auto_explain';");

# log_timing off: rows only, no times, nothing for fasttime to do (on the
# default node timing, as a user has it: without timing there is nothing
# to profile either)
{
	my $off = -s $node->logfile;
	my ($rc, $out, $err) = ft_sql($node,
		"LOAD 'auto_explain'; $ae SET auto_explain.log_timing = off; SELECT count(*) FROM t");
	my @plans = logged_plans(ft_log_since($node, $off));
	ok(@plans && !grep({ defined $_->{'Actual Total Time'} } nodes_of($plans[0][1]{Plan}))
		  && defined $plans[0][1]{Plan}{'Actual Rows'},
		'log_timing = off: rows logged without times');
	unlike($err, qr/timed with the TSC/, 'log_timing = off: fasttime times nothing');
}

# profiled timing under auto_explain: the logged plan is as stock prints
# it, without the error bars of profiled nodes, which EXPLAIN prints only
# when asked (CLOCK_SOURCE, an option auto_explain does not pass)
{
	my $off = -s $node->logfile;
	my ($rc, $out, $err) = ft_sql($node,
		"LOAD 'auto_explain'; $ae SET fasttime.node_timing = profile; SET fasttime.profile_after = 0; "
		  . "SELECT count(*) FROM t a JOIN t b USING (k) WHERE a.g <= 2000");
	is($rc, 0, 'profiled under auto_explain: the query ran') or diag($err);
	my @plans = logged_plans(ft_log_since($node, $off));
	my @marked = grep { exists $_->{'Profile Ticks'} || exists $_->{'Profile Error'} }
	  map { nodes_of($_->[1]{Plan}) } @plans;
	ok(@plans && !@marked, 'profiled under auto_explain: no error bars in the logged plan');
}

# profiled timing under auto_explain: the plan-level line (the exact
# prefix, the ticks, the error of a node holding 10 %) follows in the
# server log, for a query auto_explain logs and that switched to ticks;
# not for one shorter than log_min_duration, nor under exact timing
{
	my $long = 'SELECT count(*) FROM t a, t b WHERE a.g <= 400 AND b.g <= 4000 AND a.k + b.k >= 0';
	my $prof = 'SET fasttime.node_timing = profile; SET fasttime.profile_after = 0;';
	my $line = $profiled_line;
	my $off = -s $node->logfile;
	my ($rc, $out, $err) = ft_sql($node, "LOAD 'auto_explain'; $ae $prof $long");
	is($rc, 0, 'profiled, logged: the query ran') or diag($err);
	like(ft_log_since($node, $off), $line, 'profiled, logged: the Node Timing line follows in the log');
	$off = -s $node->logfile;
	($rc, $out, $err) = ft_sql($node,
		"LOAD 'auto_explain'; $ae $prof SET auto_explain.log_min_duration = '100s'; $long");
	unlike(ft_log_since($node, $off), qr/profiled node timing in the plan/,
		'profiled, shorter than log_min_duration: no line');
	$off = -s $node->logfile;
	($rc, $out, $err) = ft_sql($node, "LOAD 'auto_explain'; $ae SET fasttime.node_timing = exact; $long");
	unlike(ft_log_since($node, $off), qr/profiled node timing in the plan/, 'exact: no line');
}

# auto_explain preloaded before fasttime (its hooks then run inside ours)
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'auto_explain, fasttime'\n");
$node->restart;
nested_case('auto_explain preloaded first', '');

# On 19, auto_explain prints the extension options that
# auto_explain.log_extension_options names from its own ExecutorEnd,
# which runs inside fasttime's in this load order: the query's note must
# still be there (development builds before 2026-12-06 forgot it first,
# and the plan said "Timing Source: unknown").
SKIP:
{
	skip 'auto_explain.log_extension_options is PostgreSQL 19 and later', 2
	  if $node->safe_psql('postgres', 'SHOW server_version_num') < 190000;
	my $off = -s $node->logfile;
	my ($rc19, $out19, $err19) = ft_sql($node,
		"$ae SET auto_explain.log_format = text; SET auto_explain.log_extension_options = 'clock_source'; $default_long");
	my $log = ft_log_since($node, $off);
	like($log, qr/Timing Source: (tsc|clock_gettime)/,
		'19, auto_explain preloaded first, log_extension_options = clock_source: the plan names its clock')
	  or diag($err19);
	unlike($log, qr/fasttime did not see this statement start/,
		'19, auto_explain preloaded first: the query\'s note is there when auto_explain prints');
}

$node->stop;
done_testing();
