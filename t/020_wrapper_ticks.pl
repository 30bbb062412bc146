# Profiled timing: a tick that lands in a profiled call's wrapper, in the
# wrapper's own code rather than in the node's, is time the uninstrumented
# query does not spend.  It is credited to no node: not to the caller (on
# top of the chain before the node is linked and after it is unlinked), not
# to the node (on top while its result is counted), and EXPLAIN
# (CLOCK_SOURCE) shows it on its own ("Time In Wrappers").  So the nodes'
# times and that time add up to no more than the Execution Time, and a node
# calling a child millions of times is not made to look costlier than it is
# (bench/shares.sh, the plain query under perf, is where that was seen).
#
# A signal lands in the wrapper's own code only now and then, so the
# fault-injection build delivers a tick in every profiled call's wrapper
# (fasttime.fault_tick_in_wrapper): after the switch, nearly all the time
# is then the wrappers', and none of it may reach a node.
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

my $node = ft_node('wrapper_ticks', install_path => $fault, conf => [ 'autovacuum = off' ]);
$node->start;
ft_sql($node, q{
	CREATE TABLE w AS SELECT g FROM generate_series(1, 60000) g;
	CREATE TABLE inner_t AS SELECT g AS k FROM generate_series(1, 300) g;
	VACUUM ANALYZE;
});

# EXPLAIN (CLOCK_SOURCE), which shows the wrappers' time, is 18's and
# later; before, only the plan's times can show that none of it reached
# a node
my $v = $node->safe_psql('postgres', 'SHOW server_version_num');
my $clock_source = $v >= 180000;
my $options = $clock_source ? 'ANALYZE, CLOCK_SOURCE, BUFFERS OFF, FORMAT JSON' : 'ANALYZE, BUFFERS OFF, FORMAT JSON';

my $prof = 'SET max_parallel_workers_per_gather = 0; SET fasttime.clock_source = try_tsc;
	SET fasttime.node_timing = profile; SET fasttime.profile_after = 0;
	SET fasttime.profile_interval = 1;';

sub json_of
{
	my ($out) = @_;
	my ($j) = $out =~ /(\[\s*\{.*\}\s*\])/s;
	return defined $j ? eval { decode_json($j)->[0] } : undef;
}

# every node's Actual Total Time x Actual Loops, in pre-order
sub totals
{
	my ($p, $acc) = @_;
	push @$acc, [ $p->{'Node Type'}, ($p->{'Actual Total Time'} // 0) * ($p->{'Actual Loops'} // 1) ];
	totals($_, $acc) for @{ $p->{Plans} // [] };
	return $acc;
}

for my $case (
	[ 'count', 'SELECT count(*) FROM w' ],
	[ 'nested loop', 'SELECT count(*) FROM inner_t a, inner_t b WHERE a.k + b.k > 3' ])
{
	my ($name, $query) = @$case;
	for my $inject (1, 0)
	{
		my $set = $inject ? 'SET fasttime.fault_tick_in_wrapper = on;' : '';
		my ($rc, $out, $err) = ft_sql($node, "$prof $set
			EXPLAIN ($options) $query");
		my $doc = json_of($out);
		my $what = "$name, " . ($inject ? 'a tick in every wrapper' : 'real ticks only');
		ok($rc == 0 && $doc, "$what: EXPLAIN runs") or diag($err);
		next unless $doc;
		my $exec = $doc->{'Execution Time'} // -1;
		my $root = $doc->{Plan}{'Actual Total Time'} // 0;
		my $nodes = totals($doc->{Plan}, []);
		my $root_t = $nodes->[0][1];
		ok(!grep({ $_->[1] > $root_t + 0.01 } @$nodes[ 1 .. $#$nodes ]),
			"$what: no node above the root");
		if (!$clock_source)
		{
			# with a tick in every wrapper from the first tick (1 ms) on,
			# the nodes keep little more than the prefix
			ok($inject ? $root <= 0.5 * $exec + 2 : $root <= $exec + 0.01,
				"$what: " . ($inject ? 'the wrappers\' time reached no node' : 'the plan within the Execution Time')
				  . " (root $root of $exec ms)");
			next;
		}
		is($doc->{'Node Timing'}, 'profile', "$what: profiled");
		my ($ticks, $wticks, $wms) =
		  map { $doc->{$_} // -1 } ('Profile Ticks', 'Profile Ticks In Wrappers', 'Time In Wrappers');
		ok($wticks >= 0 && $wticks <= $ticks && $wms >= 0,
			"$what: ticks in wrappers ($wticks) are some of the ticks ($ticks)");
		ok($root + $wms <= $exec + 0.5,
			"$what: the plan's time and the wrappers' add up to no more than the Execution Time ($root + $wms against $exec ms)");
		if ($inject)
		{
			my $prefix = $doc->{'Exact Prefix'} // 0;
			ok($wticks > 1000, "$what: the injected ticks are the wrappers' ($wticks)");
			# after the switch nearly everything is the wrappers', by construction
			ok($wms >= 0.5 * ($exec - $prefix) - 2,
				"$what: most of the profiled time is the wrappers' ($wms ms of $exec, prefix $prefix ms)")
			  or diag($out);
			ok($root <= $exec - 0.5 * $wms + 0.5,
				"$what: none of it reached the plan's nodes (root $root ms)");
		}
	}
}

$node->stop;
done_testing();
