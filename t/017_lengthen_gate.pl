# Profiled timing's ticks lengthen in a long run: after
# FT_PROF_TICKS_PER_STEP ticks at one interval a tick asks for twice the
# interval and shuts the fast path's gate, so that the next node call
# takes the slow path, which re-arms the timeout (only main code may).  A
# tick that asks while the slow path is opening the gate -- after its walk
# of the chain, before its store -- has its shutting undone, and must
# still get its re-arm: otherwise, in a plan whose calls all take the fast
# path from then on (an aggregate over a scan), the run keeps the short
# interval to its end, ticking twice as often as asked.
#
# The fault-injection build delivers the asking tick exactly there
# (fasttime.fault_lengthen_in_gate_open), and logs each re-arm it makes
# then; on 18 and later EXPLAIN (CLOCK_SOURCE) also shows the longest
# interval the run ticked at.  The window is the timer signal's, so the
# runs tick with signals (fasttime.tick_source = signal): the tick
# worker's ticks are taken in main code, which asks at the end of the
# opening itself.
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

my $node = ft_node('lengthen_gate', install_path => $fault, conf => [ 'autovacuum = off' ]);
$node->start;
ft_sql($node, q{
	CREATE EXTENSION fasttime;
	CREATE TABLE t AS SELECT g FROM generate_series(1, 150000) g;
	VACUUM ANALYZE t;
});
my $v = $node->safe_psql('postgres', 'SHOW server_version_num');
my $prof = 'SET max_parallel_workers_per_gather = 0; SET fasttime.clock_source = try_tsc;
	SET fasttime.node_timing = profile; SET fasttime.profile_after = 0;
	SET fasttime.profile_interval = 1; SET fasttime.profile_interval_max = 2;
	SET fasttime.tick_source = signal;';
my $query = "SELECT count(*) FROM t WHERE md5(md5(g::text)) <> ''";
my $options = $v >= 180000 ? 'ANALYZE, CLOCK_SOURCE, FORMAT JSON' : 'ANALYZE, FORMAT JSON';

for my $run (1 .. 2)
{
	my $off = -s $node->logfile;
	my ($rc, $out, $err) = ft_sql($node,
		"$prof SET fasttime.fault_lengthen_in_gate_open = on; EXPLAIN ($options) $query");
	is($rc, 0, "run $run: EXPLAIN ANALYZE runs") or diag($err);
	my ($ok, $msg) = ft_check_explain($out);
	ok($ok, "run $run: no node above the Execution Time ($msg)");
	my $exec = eval { decode_json($out)->[0]{'Execution Time'} } // 0;
	my $log = ft_log_since($node, $off);
	like($log, qr/profiled timing's tick re-armed at 2 ms/,
		"run $run: the tick that asked inside the gate's opening got its longer interval ($exec ms run)");
	if ($v >= 180000)
	{
		my $longest = eval { decode_json($out)->[0]{'Profile Longest Interval'} } // '?';
		is($longest, 2, "run $run: EXPLAIN (CLOCK_SOURCE) shows the run ticking at 2 ms");
	}
}

# The switch from the exact prefix asks for the profiled interval too: a
# plan not expected to end its prefix by reads ticks it every 5 ms at the
# default profile_after (20 ms), and the tick that switches asks main code
# to re-arm at profile_interval.  A switch that lands while a tick that
# stopped itself in a wait is being resumed (the 1 s backstop's tick can)
# must not have that request cleared by the resume: the run would tick
# every 5 ms to its end.  The fault build switches exactly there
# (fasttime.fault_switch_in_resume): an InitPlan sleeps 30 ms, the 5 ms
# tick finds the backend waiting and stops, the InitPlan's return resumes
# it.  About 40,000 estimated calls keep the plan below the read bound
# (no first tick after one interval) and above its hundredth (profiled).
if ($v >= 180000)
{
	for my $run (1 .. 2)
	{
		my ($rc, $out, $err) = ft_sql($node,
			"SET max_parallel_workers_per_gather = 0; SET fasttime.clock_source = try_tsc;
			 SET fasttime.node_timing = profile; SET fasttime.profile_after = 20;
			 SET fasttime.profile_interval = 1; SET fasttime.profile_interval_max = 1;
			 SET fasttime.fault_switch_in_resume = on;
			 EXPLAIN (ANALYZE, CLOCK_SOURCE, FORMAT JSON) SELECT count(*) FROM t
			  WHERE g <= 40000 AND md5(repeat(g::text, 40)) <> (SELECT pg_sleep(0.03)::text)");
		is($rc, 0, "switch in resume, run $run: EXPLAIN ANALYZE runs") or diag($err);
		my $j = eval { decode_json($out)->[0] } // {};
		is($j->{'Node Timing'}, 'profile', "switch in resume, run $run: the run switched");
		is($j->{'Profile Longest Interval'}, 1,
			"switch in resume, run $run: its ticks came at the profiled interval, not the prefix's 5 ms ($j->{'Profile Ticks'} ticks, $j->{'Execution Time'} ms)");
	}
}

$node->stop;
done_testing();
