# A Hash's build under profiled timing ends where stock's does: when
# MultiExecHash returns, not when its child returns its last row.  After
# the last row, a Hash whose planner expected too few rows grows its
# bucket array and places every tuple again (ExecHashIncreaseNumBuckets:
# EXPLAIN shows "Buckets: N (originally M)"), time that stock's Hash
# holds.  Profiled timing times the build through a frame the child's
# calls link and end; ended at the child's last row, that time went to
# the Hash Join, and the Hash read about four fifths of the build (271 ms
# of a 350 ms first row, 2M rows, checked on 18).  Here the inner side is
# estimated at a two-hundredth of its 1M rows: under profiled timing from
# the first tick and under exact timing (the control), the Hash must
# hold at least 95 % of the Hash Join's first-row time, which is the
# build and one probe, and no more than the Hash Join's total.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin/lib";
use FtTest;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = ft_node('hash_resize', conf => [ 'autovacuum = off' ]);
$node->start;
my ($rc, $out, $err) = ft_sql($node, q{
	CREATE EXTENSION fasttime;
	CREATE TABLE ta AS SELECT g AS i FROM generate_series(1, 1000000) g;
	CREATE TABLE tb AS SELECT g AS i FROM generate_series(1, 1000000) g;
	VACUUM ANALYZE ta, tb;
});
is($rc, 0, 'set-up') or diag($err);

my $settings = q{SET work_mem = '1GB'; SET max_parallel_workers_per_gather = 0;
	SET enable_mergejoin = off; SET enable_nestloop = off;};
my $query = 'SELECT count(*) FROM ta JOIN (SELECT i FROM tb WHERE (i * 2) / 2 = i) s USING (i)';

sub find_node
{
	my ($p, $type) = @_;
	return $p if ($p->{'Node Type'} // '') eq $type;
	for my $c (@{ $p->{Plans} // [] })
	{
		my $n = find_node($c, $type);
		return $n if $n;
	}
	return undef;
}

for my $mode ([ 'profiled', 'SET fasttime.node_timing = profile; SET fasttime.profile_after = 0;' ],
	[ 'exact', 'SET fasttime.node_timing = exact;' ])
{
	my ($name, $set) = @$mode;
	for my $round (1 .. 2)
	{
		($rc, $out, $err) = ft_sql($node,
			"$settings $set EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON) $query;",
			extra_params => [ '-At' ]);
		is($rc, 0, "$name, run $round: EXPLAIN ANALYZE runs") or diag($err);
		my $doc = eval { decode_json($out) };
		my $plan = $doc ? $doc->[0]{Plan} : undef;
		my $hj = $plan ? find_node($plan, 'Hash Join') : undef;
		my $h = $plan ? find_node($plan, 'Hash') : undef;
		ok($hj && $h, "$name, run $round: a Hash Join over a Hash") or next;
		cmp_ok($h->{'Original Hash Buckets'} // 0, '<', $h->{'Hash Buckets'} // 0,
			"$name, run $round: the Hash grew its buckets ($h->{'Original Hash Buckets'} to $h->{'Hash Buckets'})");
		my ($hash_ms, $first_ms, $total_ms) =
		  ($h->{'Actual Total Time'}, $hj->{'Actual Startup Time'}, $hj->{'Actual Total Time'});
		ok($hash_ms >= 0.95 * $first_ms && $hash_ms <= $total_ms + 0.01,
			sprintf('%s, run %d: the Hash holds %.1f ms of the Hash Join\'s first row at %.1f ms (total %.1f)',
				$name, $round, $hash_ms, $first_ms, $total_ms));
	}
}

$node->stop;
done_testing();
