# A cursor keeps the clock its query began on: its nodes are on the
# wrappers of that clock (fasttime.clock_source at DECLARE).  Fetched
# inside a profiled query begun under the other clock, its calls run in
# that query's run, whose ticks and switch compare their own readings with
# the cursor's calls' starts: TSC cycles against nanoseconds.  Here the
# cursor is declared under one clock and drained (MOVE ALL, from a PL/pgSQL
# function) by the first row of a profiled EXPLAIN ANALYZE begun under the
# other, so that the run switches from exact to profiled timing while the
# cursor's exact calls are in flight.  With the readings mixed, the
# cursor's Seq Scan read 145,000 s in auto_explain's log (a cursor on
# clock_gettime, the query on the TSC; the other way round, its time up to
# the switch was lost).  Its Seq Scan, doing nearly all of its work, must
# read between half and all of the cursor's duration; the query's own plan
# must hold its nodes within its Execution Time.  The same clock on both
# sides is the control.  Where the TSC is not usable (try_tsc falls back),
# the mixed cases are skipped.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin/lib";
use FtTest;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = ft_node('cursor_clocks', conf => [ 'autovacuum = off' ]);
$node->start;

my ($rc, $out, $err) = ft_sql($node, q{
	CREATE EXTENSION fasttime;
	CREATE TABLE t(x int);
	INSERT INTO t SELECT g FROM generate_series(1, 2000000) g;
	VACUUM ANALYZE t;
	CREATE FUNCTION drain(c refcursor) RETURNS bigint LANGUAGE plpgsql AS $$
	DECLARE
		n bigint;
	BEGIN
		EXECUTE format('MOVE FORWARD ALL IN %I', c);
		GET DIAGNOSTICS n = ROW_COUNT;
		RETURN n;
	END
	$$;
});
is($rc, 0, 'set-up') or diag($err);

($rc, $out) = ft_sql($node,
	"SET fasttime.clock_source = try_tsc; SHOW fasttime.clock_source_status;");
my $have_tsc = ($rc == 0 && $out =~ /^tsc/);

my $ae = join(' ',
	"LOAD 'auto_explain';",
	'SET auto_explain.log_min_duration = 0;',
	'SET auto_explain.log_analyze = on;',
	'SET auto_explain.log_timing = on;',
	'SET auto_explain.log_format = json;',
	'SET max_parallel_workers_per_gather = 0;',
	'SET fasttime.node_timing = profile;');

my $cursor = 'SELECT x FROM t WHERE x % 3 <> 7 AND x % 5 <> 9';
# the first row drains the cursor: inside the run's exact prefix
my $outer = "SELECT count(*) FROM (SELECT CASE WHEN x = 1 THEN drain('c') END FROM t) s";

for my $c ([ 'clock_gettime', 'try_tsc' ], [ 'try_tsc', 'clock_gettime' ],
	[ 'clock_gettime', 'clock_gettime' ], [ 'try_tsc', 'try_tsc' ])
{
	my ($decl, $run) = @$c;
	my $name = "cursor on $decl, drained in a query on $run";
  SKIP:
	{
		skip "$name: the TSC is not usable here", 8
		  if !$have_tsc && ($decl eq 'try_tsc' || $run eq 'try_tsc');
		my $off = -s $node->logfile;
		my $mark = ft_tsc_mark();
		($rc, $out, $err) = ft_sql($node,
			"$ae BEGIN; SET LOCAL fasttime.clock_source = $decl;\n"
			  . "DECLARE c CURSOR FOR $cursor;\n"
			  . "SET LOCAL fasttime.clock_source = $run;\n"
			  . "EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON) $outer;\n"
			  . "CLOSE c; COMMIT;");
		is($rc, 0, "$name: ran") or diag($err);
		my ($ok, $why) = ft_check_explain($out);
		ok($ok, "$name: the query's plan within its Execution Time ($why)");
		my ($top) = eval { ft_explain_nodes($out) };
		my $agg = $top ? $top->{Plan} : undef;
		my $scan = $agg ? $agg->{Plans}[0] : undef;
		ok($scan && $scan->{'Actual Total Time'} <= $agg->{'Actual Total Time'} + 0.01,
			"$name: the query's Seq Scan no longer than its Aggregate");

		my $log = ft_log_since($node, $off);
		my ($ms, $doc);
		while ($log =~ /duration: ([\d.]+) ms  plan:\n\t(\{.*?\n\t\})\n/sg)
		{
			my ($d, $text) = ($1, $2);
			my $j = eval { decode_json($text) };
			if ($j && ($j->{'Query Text'} // '') =~ /^DECLARE c/)
			{
				($ms, $doc) = ($d, $j);
				last;
			}
		}
		ok(defined $doc, "$name: auto_explain logged the cursor's plan")
		  or skip "$name: no plan", 4;
		my $plan = $doc->{Plan};
		is($plan->{'Node Type'}, 'Seq Scan', "$name: the cursor's plan is one Seq Scan");
		is($plan->{'Actual Rows'} * ($plan->{'Actual Loops'} // 1), 2000000,
			"$name: it returned every row");
		my $node_ms = $plan->{'Actual Total Time'} * ($plan->{'Actual Loops'} // 1);
		ok($node_ms >= 0.5 * $ms && $node_ms <= $ms * 1.001 + 0.01,
			sprintf('%s: the Seq Scan reads %.1f ms of the cursor\'s %.1f ms (between half and all)',
				$name, $node_ms, $ms));
		ft_no_warning($err, $mark, $name);
	}
}

$node->stop;
done_testing();
