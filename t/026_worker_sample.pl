# The tick worker's sample is the call on top of the backend's chain at
# the tick's instant, which the worker reads in the backend's slot, not
# the node executing where the backend later finds the tick.  The backend
# finds it at its next check of the flags, which can come a transition or
# more late (its check missed on the flags' line, the worker's store
# landed late): with the sample taken there, ticks that land in a parent's
# work between its child's calls went to the child.
#
# With a fault build (fasttime.fault_worker_take_late = N: the backend
# passes over the tick at N transitions before it takes it), an Aggregate
# computing a costly expression of each row of a cheap Function Scan must
# keep most of the time: with the sample taken where the backend takes the
# tick, the scan held nearly all of it (checked on 15, before the worker
# read the chain's top).  N = 0 is the control.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin/lib";
use FtTest;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my ($fault, $why) = ft_fault_install();
plan skip_all => "no fault-injection build: $why" unless $fault;

my $node = ft_node('worker_sample', install_path => $fault,
	conf => [ 'autovacuum = off', 'fasttime.tick_source = worker' ]);
$node->start;
ft_sql($node, 'CREATE EXTENSION fasttime');

my $state = '';
for (1 .. 100)
{
	my ($rc, $out) = ft_sql($node,
		q{SELECT value FROM fasttime_status() WHERE name = 'tick_worker'});
	chomp($state = $out);
	last if $state eq 'running';
	usleep(100_000);
}
is($state, 'running', 'the tick worker runs in the fault build\'s server');

my $wt = q{SELECT 'wt=' || value FROM fasttime_status() WHERE name = 'profile_worker_ticks';
	SELECT 'pt=' || value FROM fasttime_status() WHERE name = 'profile_ticks';};

# three md5s of each row in the Aggregate, one tuplestore read in the scan
my $query = q{EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON)
	SELECT sum(length(md5(md5(md5(g::text))))) FROM generate_series(1, 300000) g};

for my $late (0, 1, 3)
{
	# A run the worker did not tick is no test of its sample: the
	# watchdog hands a run whose worker went quiet for 100 ms (starved on
	# a busy host) to timer signals for the rest of it.  Such a run is made
	# again, up to three times; the last is judged whatever it was.
	my ($rc, $out, $err, $ticks, $all);
	for my $try (1 .. 3)
	{
		($rc, $out, $err) = ft_sql($node, qq{
			SET max_parallel_workers_per_gather = 0;
			SET work_mem = '64MB';
			SET fasttime.node_timing = profile;
			SET fasttime.profile_after = 0;
			SET fasttime.fault_worker_take_late = $late;
			$wt $query; $wt});
		my @w = $out =~ /wt=(\d+)/g;
		$ticks = @w == 2 ? $w[1] - $w[0] : 0;
		my @p = $out =~ /pt=(\d+)/g;
		$all = @p == 2 ? $p[1] - $p[0] : 0;
		last if $rc != 0 || ($ticks >= 20 && $ticks >= 0.5 * $all);
		diag("take late by $late: try $try: the worker ticked $ticks of $all ticks, again");
	}
	is($rc, 0, "take late by $late: EXPLAIN ANALYZE runs") or diag($err);
	my ($j) = $out =~ /(\[\s*\{.*\}\s*\])/s;
	my $doc = defined $j ? eval { decode_json($j)->[0] } : undef;
	my $agg = $doc ? $doc->{Plan} : {};
	my $scan = ($agg->{Plans} // [])->[0] // {};
	my ($ta, $ts) = map { $_ // 0 } ($agg->{'Actual Total Time'}, $scan->{'Actual Total Time'});
	# (a worker starved for 100 ms hands the run to signals: most ticks,
	# not all, are the worker's)
	ok($ticks >= 20 && $ticks >= 0.5 * $all,
		"take late by $late: the worker ticked the run ($ticks of $all ticks)");
	is($scan->{'Node Type'} // '', 'Function Scan', "take late by $late: the plan is an Aggregate over a Function Scan");
	ok($ta >= $ts, "take late by $late: the scan is not longer than its Aggregate ($ts of $ta ms)");
	ok($ta > 0 && $ts <= 0.4 * $ta,
		"take late by $late: the Aggregate, computing the md5s, holds most of the time (the scan $ts of $ta ms)");
}

done_testing();
