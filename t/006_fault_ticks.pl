# A node clock that misbehaves (fault-injection build, in a private
# installation): the TSC jumps forward or back once, or each read crawls.
# EXPLAIN ANALYZE keeps working and no time is negative.  While the clocks
# agree, no node claims more than the Execution Time (times the processes
# summed at it; each worker's own times within it too).  A big
# disagreement draws the WARNING "the TSC disagreed with clock_gettime",
# and the times are shown as the TSC measured them: fasttime never
# rewrites a number after the fact.  The server stays up.  Those cases
# time exactly (fasttime.node_timing = exact, set in each session: the
# default is profiled timing); the profiled cases at the end set profile.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin/lib";
use FtTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my ($fault, $why) = ft_fault_install();
plan skip_all => "no fault-injection build: $why" unless $fault;

my $node = ft_node('fault_ticks', install_path => $fault);
$node->start;
my ($rc, $out, $err) = ft_sql($node, 'SHOW fasttime.fault_tick_mode');
is($out, 'none', 'the server runs the fault build (fasttime.fault_tick_mode exists)');
($rc, $out) = ft_sql($node, 'SET fasttime.clock_source = tsc; SHOW fasttime.clock_source_status');
if ($out ne 'tsc')
{
	note("tick faults need the TSC, not in effect here ($out)");
	done_testing();
	exit 0;
}
ft_sql($node, q{
	CREATE TABLE ft AS SELECT g, md5(g::text) AS t FROM generate_series(1, 60000) g;
	VACUUM ANALYZE ft;
	CREATE FUNCTION inner_q(n int) RETURNS bigint LANGUAGE plpgsql AS $$
	DECLARE r bigint;
	BEGIN
		SELECT count(*) INTO r FROM generate_series(1, n * 20);
		RETURN r;
	END $$;
});
my $pm_start = $node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');

my $serial = 'SET max_parallel_workers_per_gather = 0;';
my $par = ft_parallel_settings();
my $query = 'EXPLAIN (ANALYZE, VERBOSE, FORMAT JSON) SELECT count(*), max(a.t) FROM ft a JOIN ft b USING (g) WHERE a.g % 3 = 0';

# per-worker times (VERBOSE) within the Execution Time
sub workers_sane
{
	my ($json) = @_;
	my ($top, @nodes) = eval { ft_explain_nodes($json) };
	return 'no plan' unless $top;
	my $exec = $top->{'Execution Time'};
	my @bad;
	for my $e (@nodes)
	{
		for my $w (@{ $e->[0]{Workers} // [] })
		{
			my ($s, $t) = @{$w}{ 'Actual Startup Time', 'Actual Total Time' };
			next unless defined $t;
			push @bad, "worker $w->{'Worker Number'} $e->[0]{'Node Type'}: $s..$t (execution $exec)"
			  if $s < 0 || $t < 0 || $t > $exec + 0.01;
		}
	}
	return join('; ', @bad);
}

# fault_case DESCRIPTION WARNING(yes|no|any) SETUP
sub fault_case
{
	my ($desc, $warn, $setup) = @_;
	my ($rc, $json, $err) = ft_sql($node, "SET fasttime.clock_source = tsc; SET fasttime.node_timing = exact; $setup\n$query");
	if ($rc != 0)
	{
		fail("$desc: EXPLAIN ANALYZE runs");
		diag($err);
		return;
	}
	my ($ok, $msg) = ft_check_explain($json);
	if ($warn eq 'yes')
	{
		unlike($json, qr/"Actual (Startup|Total) Time": -/,
			"$desc: no negative time (the jump is shown as measured)");
		ok($err =~ /WARNING:  fasttime: the TSC disagreed with clock_gettime/,
			"$desc: WARNING that the TSC disagreed") or diag($err);
		return;
	}
	ok($ok, "$desc: no negative time, none above the Execution Time ($msg)");
	if ($setup =~ /parallel_setup_cost/)
	{
		my $bad = workers_sane($json);
		ok($json =~ /"Workers Launched": [1-9]/ && $bad eq '',
			"$desc: workers launched, per-worker times sane") or diag($bad);
	}
	my $warned = $err =~ /WARNING:  fasttime: the TSC disagreed with clock_gettime/;
	if ($warn eq 'yes')
	{
		ok($warned, "$desc: WARNING that the TSC disagreed") or diag($err);
	}
	elsif ($warn eq 'no')
	{
		unlike($err, qr/WARNING/, "$desc: no WARNING");
	}
}

my $hour = 'SET fasttime.fault_tick_amount_ns = 3.6e12;';
my $weeks = 'SET fasttime.fault_tick_amount_ns = 1e15;';    # 11.6 days
for my $mode ([ 'serial', $serial ], [ 'parallel', $par ])
{
	my ($m, $s) = @$mode;
	fault_case("$m, no fault", 'no', $s);
	fault_case("$m, jump forward 1 h at read 3 (the first node read)", 'yes',
		"$s $hour SET fasttime.fault_tick_at = 3; SET fasttime.fault_tick_mode = jump_forward;");
	fault_case("$m, jump forward 1 h at read 300", 'yes',
		"$s $hour SET fasttime.fault_tick_at = 300; SET fasttime.fault_tick_mode = jump_forward;");
	fault_case("$m, jump back 1 h at read 300", 'yes',
		"$s $hour SET fasttime.fault_tick_at = 300; SET fasttime.fault_tick_mode = jump_back;");
	fault_case("$m, jump forward 11 days at read 300", 'yes',
		"$s $weeks SET fasttime.fault_tick_at = 300; SET fasttime.fault_tick_mode = jump_forward;");
	fault_case("$m, jump back 11 days at read 300", 'yes',
		"$s $weeks SET fasttime.fault_tick_at = 300; SET fasttime.fault_tick_mode = jump_back;");
	fault_case("$m, jump back 1 us at read 300 (CPU skew)", 'no',
		"$s SET fasttime.fault_tick_amount_ns = 1000; SET fasttime.fault_tick_at = 300; SET fasttime.fault_tick_mode = jump_back;");
	fault_case("$m, jump at read 1 (the query's own start stamp)", 'no',
		"$s $hour SET fasttime.fault_tick_at = 1; SET fasttime.fault_tick_mode = jump_forward;");
	fault_case("$m, jump at read 2 (inside the start stamp's bracket: retried)", 'no',
		"$s $hour SET fasttime.fault_tick_at = 2; SET fasttime.fault_tick_mode = jump_forward;");
	fault_case("$m, slow reads (1 us each)", 'no', "$s SET fasttime.fault_tick_mode = slow;");
}

# a jump of decades (a garbage TSC): still correct.  (Adding such an
# interval to a PostgreSQL 15 timespec takes ft_instr_time_add_ns's
# out-of-line path: one division, not a loop per second.)
fault_case('serial, jump forward 31 years at read 300', 'yes',
	"$serial SET fasttime.fault_tick_amount_ns = 1e18; SET fasttime.fault_tick_at = 300; SET fasttime.fault_tick_mode = jump_forward;");

# nested statements that auto_explain logs, with the jump inside them
{
	my $off = -s $node->logfile;
	my ($rc, $json, $err) = ft_sql($node, "SET fasttime.clock_source = tsc; SET fasttime.node_timing = exact; $serial LOAD 'auto_explain';
		SET auto_explain.log_min_duration = 0; SET auto_explain.log_analyze = on;
		SET auto_explain.log_nested_statements = on; SET auto_explain.log_format = json;
		$hour SET fasttime.fault_tick_at = 400; SET fasttime.fault_tick_mode = jump_forward;
		EXPLAIN (ANALYZE, FORMAT JSON) SELECT inner_q(g) FROM ft WHERE g < 40;");
	unlike($json, qr/"Actual (Startup|Total) Time": -/,
		'jump inside auto_explain-logged nested statements: no negative outer time');
	my @w = $err =~ /WARNING:  fasttime: the TSC disagreed/g;
	is(scalar @w, 1, 'nested jump: one WARNING for the EXPLAIN, whose nested statements disagree too') or diag($err);
	my $log = ft_log_since($node, $off);
	my (@bad, $n);
	while ($log =~ /duration: ([\d.]+) ms  plan:\n\t(\{.*?\n\t\})\n/sg)
	{
		my ($ms, $text) = ($1, $2);
		$n++;
		while ($text =~ /"Actual Total Time": ([\d.-]+),\n\s*"Actual Rows": \d+,\n\s*"Actual Loops": (\d+)/g)
		{
			push @bad, "node $1 x $2 ms" if $1 < 0;
		}
	}
	ok($n && !@bad, "nested jump: every plan auto_explain logged (" . ($n // 0) . ") has no negative time")
	  or diag(join("\n", @bad[ 0 .. ($#bad < 5 ? $#bad : 5) ]));
}

# profiled timing on a slow clock: the exact prefix is bounded by reads.
# Each node-clock read takes 20 us, so a Seq Scan returning 20,000 rows
# makes ~40,000 reads (0.8 s), within fasttime.profile_after = 2000 ms: a
# prefix bounded by time alone would time every call exactly.  Bounded by
# reads (the switch is due once the reads, at the measured 20 us a read,
# have cost a quarter of the run so far), the run switches to ticks
# part-way and the wrapper's exact start reads stop short of the calls.
# When is the first tick?  The read bound is the calls whose reads cost a
# quarter of profile_after (~12,500 here).  The scan is estimated at
# 20,000 rows, past it: its first tick comes after one interval (1 ms),
# which switches, a few dozen calls in.  A Function Scan of 20,000 rows
# whose filter the planner guesses keeps a third is estimated below it:
# its first tick comes at a quarter of profile_after (0.5 s), ~12,500
# calls in.  The plans' counts stay whole.
{
	ft_sql($node, 'CREATE EXTENSION IF NOT EXISTS fasttime');
	my $prof = "SET fasttime.clock_source = tsc; $serial SET fasttime.node_timing = profile;
		SET fasttime.profile_after = 2000; SET fasttime.profile_interval = 1;";
	my $reads = "SELECT value FROM fasttime_status() WHERE name = 'fault_wrapper_start_reads_ordered';";
	my $q = "EXPLAIN (ANALYZE, FORMAT JSON) SELECT count(*) FROM ft WHERE g <= 20000; $reads";
	my $q_low = "EXPLAIN (ANALYZE, FORMAT JSON) SELECT count(*) FROM generate_series(1, 20000) g WHERE g % 10 >= 0; $reads";
	my $slow = "SET fasttime.fault_tick_amount_ns = 20000; SET fasttime.fault_tick_mode = slow;";
	my ($rc, $out, $err) = ft_sql($node, "$prof $q");
	my ($reads_fast) = $out =~ /\n(\d+)\s*$/;
	ok($rc == 0 && defined $reads_fast && $reads_fast > 20000,
		'profiled, fast clock, short run: every call timed exactly (' . ($reads_fast // '?') . ' start reads)')
	  or diag($err);
	($rc, $out, $err) = ft_sql($node, "$prof $slow $q");
	my ($reads_slow) = $out =~ /\n(\d+)\s*$/;
	ok($rc == 0 && defined $reads_slow && $reads_slow >= 1 && $reads_slow < 2000,
		'profiled, slow clock, a plan estimated past the read bound: the exact prefix ends at the first tick, after one interval (' . ($reads_slow // '?') . ' start reads of ~20,000 calls)')
	  or diag($err);
	like($out, qr/"Actual Rows": 20000(?:\.0+)?,/, 'profiled, slow clock: the scan still counts every row');
	($rc, $out, $err) = ft_sql($node, "$prof $slow $q_low");
	my ($reads_low) = $out =~ /\n(\d+)\s*$/;
	ok($rc == 0 && defined $reads_low && $reads_low > 1000 && $reads_low < 17000,
		'profiled, slow clock, a plan estimated below the read bound: the exact prefix ends by reads at a quarter of profile_after (' . ($reads_low // '?') . ' start reads of ~20,000 calls)')
	  or diag($err);
	like($out, qr/"Plan Rows": 6667(?:\.0+)?,.*"Actual Rows": 20000(?:\.0+)?,/s,
		'profiled, slow clock: the function scan, estimated at a third, still counts every row');
}

# profiled timing's switch landing between an exact call's test of its
# frame's mode and the link of its frame, where a tick can land: the
# switch cannot see that call in flight, and makes its frame profiled with
# the rest.  The call must still count its time once: the root's first
# call (it lasts the whole run), and a Hash Join's first call (it builds
# the hash table, and stays exact to its end so as to contain its Hash).
# Counted twice, the root or the join would hold more than the Execution
# Time.
{
	my $prof = "SET fasttime.clock_source = tsc; $serial SET fasttime.node_timing = profile;
		SET fasttime.profile_after = 0; SET fasttime.profile_interval = 1;
		SET enable_mergejoin = off; SET enable_nestloop = off;";
	my $q = 'EXPLAIN (ANALYZE, FORMAT JSON) SELECT count(*), max(a.t) FROM ft a JOIN ft b USING (g)
		WHERE a.g % 3 = 0 AND length(b.t || md5(b.g::text)) > 0';
	for my $where ('first_call', 'core_call')
	{
		my ($rc, $out, $err) = ft_sql($node, "$prof SET fasttime.fault_switch_in_link = $where; $q");
		my ($ok, $msg) = $rc == 0 ? ft_check_explain($out) : (0, $err);
		ok($ok, "the switch between a call's mode test and its link ($where): no node above the Execution Time ($msg)");
		my ($top, @nodes) = $rc == 0 ? eval { ft_explain_nodes($out) } : ();
		my ($join) = grep { ($_->[0]{'Node Type'} // '') eq 'Hash Join' } @nodes;
		my $hash = $join ? (grep { ($_->{'Node Type'} // '') eq 'Hash' } @{ $join->[0]{Plans} // [] })[0] : undef;
		ok($join && $hash && $join->[0]{'Actual Total Time'} + 0.01 >= $hash->{'Actual Total Time'},
			"the switch between a call's mode test and its link ($where): the join contains its Hash ("
			  . ($join ? $join->[0]{'Actual Total Time'} : '?') . ' >= ' . ($hash ? $hash->{'Actual Total Time'} : '?') . ' ms)');
	}
}

# afterwards: a new session is clean, the server never restarted
fault_case('new session after the faults', 'no', $serial);
is($node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()'), $pm_start,
	'the server stayed up (same postmaster start time)');
unlike(slurp_file($node->logfile), qr/terminated by signal|PANIC|server process .* was terminated/,
	'no backend crashed');
$node->stop;
done_testing();
