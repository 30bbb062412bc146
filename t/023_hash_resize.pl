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
		hash_starts_at_its_end($h, "$name, run $round");
	}
}

# A Hash returns once a loop, when its build is over: stock's first-tuple
# time (InstrStopNode's, at MultiExecHash's end) is the build, so its
# Actual Startup Time is its Actual Total Time.  The build frame adds an
# exact build's time when it leaves the chain, after that InstrStopNode,
# which read 0 then: startup read 0.000 for every Hash built in the exact
# prefix (nearly every hash join of under 20 ms).  A profiled Hash may
# miss a tick landing after InstrStopNode (the first probe's): 5 %.
sub hash_starts_at_its_end
{
	my ($h, $what) = @_;
	my ($s, $t) = ($h->{'Actual Startup Time'} // -1, $h->{'Actual Total Time'} // -1);
	ok($t > 0 && $s >= 0.95 * $t && $s <= $t,
		"$what: the Hash's startup is its build, as stock's ($s of $t ms)");
}

# Hashes built in the exact prefix: a small join, whose run ends in it,
# and one of 3 rescans rebuilding their Hash (a parameter below it)
($rc, $out, $err) = ft_sql($node, q{
	CREATE TABLE td AS SELECT g AS i FROM generate_series(1, 5000) g;
	VACUUM ANALYZE td;
});
is($rc, 0, 'prefix: set-up') or diag($err);
for my $q ([ 'a small join', 'SELECT count(*) FROM td a JOIN td b USING (i)' ],
	[ 'rebuilt in 3 loops', 'SELECT o, (SELECT count(*) FROM td a JOIN (SELECT i FROM td WHERE i > o) b USING (i)) FROM generate_series(1, 3) o' ])
{
	my ($name, $sql) = @$q;
	for my $timing ('profile', 'exact')
	{
		($rc, $out, $err) = ft_sql($node,
			"$settings SET fasttime.node_timing = $timing; EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON) $sql;",
			extra_params => [ '-At' ]);
		is($rc, 0, "$name, $timing: EXPLAIN ANALYZE runs") or diag($err);
		my $doc = eval { decode_json($out) };
		my $h = $doc ? find_node($doc->[0]{Plan}, 'Hash') : undef;
		ok($h, "$name, $timing: a Hash") or next;
		hash_starts_at_its_end($h, "$name, $timing");
	}
}

# A query run inside the Hash Join's call, by a function in its join
# filter, while the build is still open (the outer side read its first
# row before the build, so the first probe comes before any node call):
# the run ends the build first.  Left open, the nested run's end linked
# the build frame again, and the rest of the Hash Join's first call --
# here nearly every probe, the filter passing only the last rows -- went
# to the Hash.  auto_explain instruments the nested statements, so they
# are profiled runs of their own; the Hash (of 20,000 rows, or of the
# million) must hold under half of the Hash Join's time, whose probes
# each run a query (the function takes both sides' columns, so it stays
# in the join filter).
($rc, $out, $err) = ft_sql($node, q{
	CREATE TABLE one AS SELECT 1 AS x;
	CREATE TABLE tc AS SELECT g AS i FROM generate_series(1, 20000) g;
	VACUUM ANALYZE one, tc;
	CREATE FUNCTION late(n int, m int) RETURNS bool LANGUAGE plpgsql AS $$
	DECLARE r bool;
	BEGIN
		SELECT n > 19990 AND m > 0 INTO r FROM one;
		RETURN r;
	END $$;
});
is($rc, 0, 'nested: set-up') or diag($err);
($rc, $out, $err) = ft_sql($node,
	"$settings SET fasttime.node_timing = profile; SET fasttime.profile_after = 0;
	LOAD 'auto_explain'; SET auto_explain.log_min_duration = '1h'; SET auto_explain.log_analyze = on;
	SET auto_explain.log_nested_statements = on;
	EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON)
	SELECT count(*) FROM tc JOIN ta ON tc.i = ta.i AND late(tc.i, ta.i);",
	extra_params => [ '-At' ]);
is($rc, 0, 'nested: EXPLAIN ANALYZE runs') or diag($err);
{
	my $doc = eval { decode_json($out) };
	my $plan = $doc ? $doc->[0]{Plan} : undef;
	my $hj = $plan ? find_node($plan, 'Hash Join') : undef;
	my $h = $plan ? find_node($plan, 'Hash') : undef;
	SKIP:
	{
		skip 'not a Hash Join filtering with late()', 1
		  unless $hj && $h && ($hj->{'Join Filter'} // '') =~ /late/;
		cmp_ok($h->{'Actual Total Time'}, '<', 0.5 * $hj->{'Actual Total Time'},
			"nested: the Hash ($h->{'Actual Total Time'} ms) holds its build, not the probes "
			  . "that run queries (the Hash Join $hj->{'Actual Total Time'} ms)");
	}
}

$node->stop;
done_testing();
