# Profiled timing across queries that write their times in different
# units (nested statements timed too: auto_explain with log_analyze and
# log_nested_statements).  On PostgreSQL 19 the unit of a query's instr_time follows the
# server's timing_clock_source when the query starts: nanoseconds with the
# system clock, TSC ticks with the server's TSC clock.  A function may run
# its queries under another setting than its caller's (SET
# timing_clock_source in the function, or in its SET clause).  A tick
# that lands in such a nested query credits the frames of the outer query
# too (every call under way), and each frame must be credited in its own
# query's unit: credited in the nested query's, the outer nodes read
# their time off by the ratio of the two units (the TSC's frequency in
# GHz), well above the Execution Time when the TSC ticks faster than 1 GHz.
#
# Whether the server can run its TSC clock depends on the machine (19
# wants RDTSCP and an invariant TSC), so the fault-injection build makes
# the difference of units on any machine and version
# (fasttime.fault_nested_units: a query nested in a profiled run writes its
# times in ticks half as long as the run's); on 19, where the server's TSC
# clock can be switched on, the real thing is checked as well.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin/lib";
use FtTest;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my ($fault, $why) = ft_fault_install();
plan skip_all => "no fault-injection build: $why" unless $fault;

my $node = ft_node('nested_units', install_path => $fault, conf => [ 'autovacuum = off' ]);
$node->start;
ft_sql($node, q{
	CREATE EXTENSION fasttime;
	CREATE FUNCTION inner_work(n int) RETURNS bigint LANGUAGE plpgsql AS $$
	DECLARE c bigint;
	BEGIN
		SELECT count(*) INTO c FROM generate_series(1, n) g WHERE md5(md5(g::text)) <> '';
		RETURN c;
	END $$;
});
my $v = $node->safe_psql('postgres', 'SHOW server_version_num');
my $prof = "SET max_parallel_workers_per_gather = 0;
	SET fasttime.node_timing = profile; SET fasttime.profile_after = 0; SET fasttime.profile_interval = 1;
	LOAD 'auto_explain'; SET auto_explain.log_min_duration = '100s'; SET auto_explain.log_analyze = on;
	SET auto_explain.log_nested_statements = on;";
my $query = 'EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON) SELECT sum(inner_work(5000)) FROM generate_series(1, 40) g';

# the outer plan within its Execution Time, and its root holding most of
# it (the nested queries, where the time is, run inside the Aggregate)
sub check_outer
{
	my ($desc, $settings) = @_;
	my ($rc, $out, $err) = ft_sql($node, "$prof $settings $query");
	if ($rc != 0)
	{
		fail("$desc: EXPLAIN ANALYZE runs");
		diag($err);
		return;
	}
	my ($ok, $msg) = ft_check_explain($out);
	ok($ok, "$desc: no outer node above the Execution Time ($msg)");
	my $doc = decode_json($out)->[0];
	my ($exec, $root) = ($doc->{'Execution Time'}, $doc->{Plan}{'Actual Total Time'});
	ok($root >= 0.7 * $exec && $root <= $exec + 0.01,
		"$desc: the Aggregate holds the nested queries' time, within the Execution Time ($root of $exec ms)");
}

my ($rc, $status) = ft_sql($node, 'SET fasttime.clock_source = try_tsc; SHOW fasttime.clock_source_status');
SKIP:
{
	skip "the fault doubles the TSC unit, and the TSC is not in effect here ($status)", 6
	  unless $status eq 'tsc';
	check_outer('TSC, same units', 'SET fasttime.clock_source = try_tsc;');
	check_outer('TSC, nested queries in units half as long', 'SET fasttime.clock_source = try_tsc; SET fasttime.fault_nested_units = on;');
	check_outer('TSC, nested queries in units half as long, again', 'SET fasttime.clock_source = try_tsc; SET fasttime.fault_nested_units = on;');
}

# PostgreSQL 19: the server's own clock differs between the outer query
# and the nested ones
SKIP:
{
	skip 'timing_clock_source is PostgreSQL 19 and later', 4 if $v < 190000;
	my ($rc2, $tsc_ok) = ft_sql($node, q{
		DO $$ BEGIN SET timing_clock_source = tsc; EXCEPTION WHEN OTHERS THEN RAISE NOTICE 'no'; END $$;
		SELECT current_setting('timing_clock_source')});
	skip "the server's TSC clock cannot be used on this machine", 4 unless $tsc_ok eq 'tsc';
	ft_sql($node, q{
		CREATE FUNCTION inner_tsc(n int) RETURNS bigint LANGUAGE plpgsql
		SET timing_clock_source = tsc AS $$
		BEGIN
			RETURN inner_work(n);
		END $$;
	});
	for my $ft ('try_tsc', 'clock_gettime')
	{
		my ($rc3, $out, $err) = ft_sql($node, "$prof SET fasttime.clock_source = $ft; SET timing_clock_source = system;
			EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON) SELECT sum(inner_tsc(5000)) FROM generate_series(1, 40) g");
		my ($ok, $msg) = $rc3 == 0 ? ft_check_explain($out) : (0, $err);
		ok($ok, "19, outer on the system clock, nested on the TSC clock, fasttime $ft: no outer node above the Execution Time ($msg)");
		my $doc = $rc3 == 0 ? decode_json($out)->[0] : {};
		my ($exec, $root) = ($doc->{'Execution Time'} // 0, $doc->{Plan}{'Actual Total Time'} // -1);
		ok($root >= 0.7 * $exec && $root <= $exec + 0.01,
			"19, outer on the system clock, nested on the TSC clock, fasttime $ft: the Aggregate holds the nested time ($root of $exec ms)");
	}
}

$node->stop;
done_testing();
