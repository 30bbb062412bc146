# Profiled timing keeps plans self-consistent: over several profiled runs
# (fasttime.node_timing = profile, switched at its first tick) of serial
# plans of many shapes (scans, joins with rescans and Memoize, Hash and
# bitmap nodes, sorts, windows, LIMIT, subplans and initplans, CTEs,
# recursion, partitions, aggregates over large inputs, nested loops with a
# skewed inner side, nested statements 20 PL/pgSQL levels deep, a
# PL/pgSQL set-returning function running a query per outer row, a run
# long enough for the ticks to lengthen), with the TSC and with clock_gettime, no child reads
# longer than its parent -- inclusive times, Actual Total Time x Actual
# Loops, allowing for EXPLAIN's rounding -- unless exact timing shows the
# same pair that way too; and no root reads longer than the Execution
# Time (a Bitmap Heap Scan at the root, whose first call builds its bitmap
# exactly across many ticks, once had those ticks credited to it again).
# Rows and loops are the same as exact timing's in every run.  Then the
# same for a few shapes with more processes spinning than the machine has
# cores, so that the backend is preempted in the middle of node calls.  Where a fault-injection build is available,
# the same again on a server whose facts are those of machine kind (b)
# (kvm-clock, TSC rejected), so that auto profiles with clock_gettime.
# (This file once checked per-call sampled timing the same way; sampled
# timing was removed, since it under-counted rare heavy calls and waits.)
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin/lib";
use FtTest;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $tables = q{
	CREATE TABLE t AS SELECT g, g % 100 AS k, md5(g::text) AS s FROM generate_series(1, 30000) g;
	CREATE INDEX t_k ON t (k);
	CREATE INDEX t_g ON t (g);
	CREATE TABLE u AS SELECT g, g % 7 AS m FROM generate_series(1, 3000) g;
	CREATE TABLE big AS SELECT g AS x, g % 1000 AS y FROM generate_series(1, 400000) g;
	CREATE INDEX big_x ON big (x);
	CREATE TABLE skew AS SELECT CASE WHEN g <= 20 THEN g ELSE 1 END AS k, g AS v FROM generate_series(1, 100000) g;
	CREATE INDEX skew_k ON skew (k);
	CREATE TABLE p (id int, v int) PARTITION BY RANGE (id);
	CREATE TABLE p1 PARTITION OF p FOR VALUES FROM (0) TO (5000);
	CREATE TABLE p2 PARTITION OF p FOR VALUES FROM (5000) TO (10000);
	INSERT INTO p SELECT g, g % 13 FROM generate_series(0, 9999) g;
	-- nested statements: a recursion of PL/pgSQL levels, each running a
	-- query, and a set-returning function running a query per row
	CREATE FUNCTION deep(n int) RETURNS bigint LANGUAGE plpgsql AS $$
	DECLARE r bigint;
	BEGIN
		IF n = 0 THEN SELECT count(*) INTO r FROM big WHERE y = 3; RETURN r; END IF;
		SELECT deep(n - 1) + count(*) INTO r FROM big WHERE x <= 2000 * n;
		RETURN r;
	END $$;
	CREATE FUNCTION qrows(n int) RETURNS SETOF bigint LANGUAGE plpgsql AS $$
	BEGIN
		FOR i IN 1..n LOOP
			RETURN QUERY SELECT count(*) FROM t WHERE k = i;
		END LOOP;
	END $$;
	VACUUM ANALYZE;
};
my $node = ft_node('profiled_consistency', conf => [ 'autovacuum = off' ]);
$node->start;
ft_sql($node, $tables);

my ($rc, $status) = ft_sql($node, 'SET fasttime.clock_source = try_tsc; SHOW fasttime.clock_source_status');
note("try_tsc is in effect as $status");

my $nl = 'SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_memoize = off;';
# [name, settings, query]
my @cases = (
	[ 'seq scan count', '', 'SELECT count(*) FROM big' ],
	[ 'filtered scan, aggregate', '', 'SELECT y, count(*) FROM big WHERE x % 7 = 0 GROUP BY y' ],
	[ 'index scan', '', 'SELECT * FROM t WHERE g BETWEEN 100 AND 4000' ],
	[ 'nested loop rescans', $nl, 'SELECT count(*) FROM u JOIN big ON big.x = u.g * 100' ],
	[ 'nested loop, skewed inner side', "$nl SET enable_bitmapscan = off;",
	  'SELECT u.g, x.v FROM (SELECT g FROM u WHERE g <= 20) u CROSS JOIN LATERAL (SELECT v FROM skew WHERE skew.k = u.g AND v % 25000 = 0 OFFSET 0) x' ],
	[ 'memoize', 'SET enable_hashjoin = off; SET enable_mergejoin = off;',
	  'SELECT count(*) FROM u JOIN t ON t.k = u.m' ],
	[ 'hash join', 'SET enable_nestloop = off; SET enable_mergejoin = off;',
	  'SELECT count(*), max(t.s) FROM big JOIN t ON t.g = big.x' ],
	# a Hash's build is timed through its child's calls: rebuilt for every
	# outer row (its child's filter depends on the row), and run inside
	# the exact first call of a bitmap scan (an InitPlan in its index
	# condition), where the build is exact too
	[ 'hash join rebuilt per outer row', 'SET enable_mergejoin = off; SET enable_memoize = off;',
	  'SELECT count(*) FROM generate_series(1, 60) o, LATERAL (SELECT count(*) FROM u JOIN t ON t.g = u.g WHERE u.m <> o % 7) s' ],
	[ 'hash join in an initplan of a bitmap scan',
	  'SET enable_indexscan = off; SET enable_nestloop = off; SET enable_mergejoin = off;',
	  'SELECT count(*) FROM t WHERE k = (SELECT max(u.m) FROM u JOIN t t2 ON t2.g = u.g)' ],
	# the root's first call builds the bitmap, exact (core times the
	# Bitmap Index Scan), across many ticks with no profiled frame below
	[ 'bitmap heap scan at the root', 'SET enable_seqscan = off; SET enable_indexscan = off;',
	  'SELECT * FROM big WHERE x <= 300000' ],
	[ 'bitmap and/or', 'SET enable_seqscan = off; SET enable_indexscan = off;',
	  'SELECT count(*) FROM t WHERE (k = 5 OR k = 7) AND g < 20000' ],
	[ 'sort spilling to temp files', 'SET work_mem = 64;',
	  'SELECT g, s FROM t ORDER BY s LIMIT 5 OFFSET 20000' ],
	[ 'sort, limit', '', 'SELECT x FROM big ORDER BY y, x LIMIT 100' ],
	[ 'window, limit', '', 'SELECT k, sum(g) OVER (PARTITION BY k ORDER BY g) FROM t ORDER BY k, g LIMIT 50' ],
	[ 'subplan and initplan', '',
	  'SELECT u.g, (SELECT max(g) FROM t WHERE t.k = u.m) FROM u WHERE u.g < (SELECT avg(g) FROM u) / 10' ],
	[ 'correlated subplan in a filter', '',
	  'SELECT count(*) FROM u WHERE u.m <= (SELECT count(*) FROM t WHERE t.k = u.g % 100 AND t.g < 3000)' ],
	[ 'CTE scanned twice', '',
	  'WITH c AS MATERIALIZED (SELECT y, count(*) n FROM big GROUP BY y) SELECT count(*) FROM c a JOIN c b ON a.y = b.y + 1' ],
	[ 'recursive CTE', '',
	  'WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5000) SELECT sum(n) FROM r' ],
	[ 'partitions', '', 'SELECT v, count(*) FROM p WHERE id % 3 = 0 GROUP BY v' ],
	[ 'subquery scan, distinct', '',
	  'SELECT count(*) FROM (SELECT DISTINCT y FROM big WHERE x % 3 = 0) d' ],
	[ 'nested statements, 20 levels', '', 'SELECT deep(20)' ],
	[ 'PL/pgSQL set-returning function per outer row', $nl,
	  'SELECT count(*) FROM u CROSS JOIN LATERAL qrows(u.g % 4 + 1) f WHERE u.g <= 150' ],
	[ 'function scan, material', $nl,
	  'SELECT count(*) FROM generate_series(1, 300) a, (VALUES (1), (2), (3)) v(x) WHERE a > v.x' ],
	# long enough (several hundred ms) for the ticks to lengthen from 1 to
	# 2 ms: the timeout re-armed from the node calls, in the middle of a
	# hash join, an aggregate and a sort
	[ 'long run, ticks lengthening', 'SET fasttime.profile_interval_max = 2; SET work_mem = \'64MB\';',
	  'SELECT b1.y % 10, count(*), max(b2.x) FROM big b1 JOIN big b2 ON b2.x = b1.x JOIN big b3 ON b3.x = b2.x GROUP BY 1 ORDER BY 1' ],
);

# EXPLAIN (ANALYZE, FORMAT JSON)'s Execution Time, then its nodes in
# pre-order: [type, inclusive ms, rows, loops, index of the parent]
sub plan_nodes
{
	my ($json) = @_;
	my @out;
	my $walk;
	my $top = decode_json($json)->[0];
	$walk = sub {
		my ($p, $parent) = @_;
		my $me = scalar @out;
		push @out, [ $p->{'Node Type'}, $p->{'Actual Total Time'} * $p->{'Actual Loops'},
			$p->{'Actual Rows'}, $p->{'Actual Loops'}, $parent ];
		$walk->($_, $me) for @{ $p->{Plans} // [] };
	};
	$walk->($top->{Plan}, undef);
	return ($top->{'Execution Time'}, @out);
}

# The root's excess over the Execution Time, in ms, or 0: every tick's
# interval lies within the run, so no node holds more than that (with the
# rounding, and the TSC's rate against the clock EXPLAIN reads: 0.5 %).
sub root_over_exec
{
	my ($exec, @n) = @_;
	my $over = $n[0][1] - $exec;
	return $over > 0.005 * $exec + 0.01 ? $over : 0;
}

# indexes of the nodes that read longer than their parent
sub child_longer
{
	my (@n) = @_;
	my @bad;
	for my $i (0 .. $#n)
	{
		my $p = $n[$i][4];
		next unless defined $p && $n[$i][3] > 0;
		my $tol = 0.0005 * ($n[$i][3] + $n[$p][3]) + 1e-9;
		push @bad, $i if $n[$i][1] > $n[$p][1] + $tol;
	}
	return @bad;
}

sub run_explain
{
	my ($node, $clock, $settings, $query) = @_;
	my ($rc, $out, $err) = ft_sql($node,
		"SET max_parallel_workers_per_gather = 0; SET fasttime.clock_source = $clock; $settings "
		  . "EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, FORMAT JSON) $query");
	die "EXPLAIN failed: $err" if $rc != 0;
	return plan_nodes($out);
}

# run_mode_cases NODE CLOCK_SOURCE MODE_SETTINGS MODE_NAME RUNS LABEL CASES...
sub run_mode_cases
{
	my ($node, $clock, $mode, $mode_name, $runs, $label, @cases) = @_;
	my ($total_flips, $total_plans) = (0, 0);
	for my $case (@cases)
	{
		my ($name, $settings, $query) = @$case;
		# exact timing set explicitly: the default is profiled
		run_explain($node, $clock, "SET fasttime.node_timing = exact; $settings", $query);    # warm-up
		my (undef, @exact) = run_explain($node, $clock, "SET fasttime.node_timing = exact; $settings", $query);
		my %exact_flip = map { $_ => 1 } child_longer(@exact);
		my (@flips, @over, $same_shape);
		$same_shape = 1;
		for my $r (1 .. $runs)
		{
			my ($exec, @s) = run_explain($node, $clock, "$settings $mode", $query);
			my $over = root_over_exec($exec, @s);

			push @over, sprintf('run %d: %s %.3f ms > Execution Time %.3f ms', $r, $s[0][0], $s[0][1], $exec)
			  if $over;
			$same_shape &&= join(',', map { "$_->[0]/$_->[2]/$_->[3]" } @s) eq
			  join(',', map { "$_->[0]/$_->[2]/$_->[3]" } @exact);
			for my $i (child_longer(@s))
			{
				next if $exact_flip{$i};
				push @flips, sprintf('run %d: %s %.3f ms > parent %s %.3f ms', $r, $s[$i][0], $s[$i][1],
					$s[ $s[$i][4] ][0], $s[ $s[$i][4] ][1]);
			}
			$total_plans++;
		}
		$total_flips += @flips;
		ok($same_shape, "$label$name: rows and loops of $runs $mode_name runs as exact");
		is(scalar @flips, 0, "$label$name: no child longer than its parent in $runs $mode_name runs")
		  or diag(join("\n", @flips));
		is(scalar @over, 0, "$label$name: the root no longer than the Execution Time in $runs $mode_name runs")
		  or diag(join("\n", @over));
	}
	note("$label$total_flips child-longer-than-parent cases over $total_plans $mode_name plans");
}

# run CODE while N processes spin, more than this machine has cores
sub under_load
{
	my ($code) = @_;
	my $cores = () = `cat /proc/cpuinfo` =~ /^processor\s*:/mg;
	my @pids;
	for (1 .. ($cores || 2) + 1)
	{
		my $pid = fork();
		die "fork: $!" unless defined $pid;
		if ($pid == 0)
		{
			alarm(300);
			1 while 1;
			exit 0;
		}
		push @pids, $pid;
	}
	my @r = eval { $code->() };
	my $err = $@;
	kill 'KILL', @pids;
	waitpid($_, 0) for @pids;
	die $err if $err;
	return @r;
}

my %loaded = map { $_ => 1 } ('hash join', 'filtered scan, aggregate', 'nested loop, skewed inner side',
	'long run, ticks lengthening');

# profiled timing, switched at its first tick, with either clock
my $profile = 'SET fasttime.node_timing = profile; SET fasttime.profile_after = 0;';
run_mode_cases($node, 'try_tsc', $profile, 'profiled', 4, 'profiled, ', @cases);
run_mode_cases($node, 'clock_gettime', $profile, 'profiled', 2, 'profiled, clock_gettime, ', @cases);
under_load(sub {
	run_mode_cases($node, 'try_tsc', $profile, 'profiled', 8, 'profiled under load, ',
		grep { $loaded{ $_->[0] } } @cases)
});
$node->stop;

# machine kind (b): auto keeps clock_gettime, and profiles with it
my ($fault, $why) = ft_fault_install();
SKIP:
{
	skip "no fault-injection build: $why", 1 unless $fault;
	my $nb = ft_node('profiled_consistency_b', install_path => $fault, conf => [ 'autovacuum = off' ]);
	{
		local $ENV{FASTTIME_FAULT_FACTS} = 'machine_b';
		$nb->start;
	}
	ft_sql($nb, $tables);
	my ($rc2, $st) = ft_sql($nb, 'SET fasttime.clock_source = auto; SHOW fasttime.clock_source_status');
	is($st, 'clock_gettime', 'kind (b): auto times nodes with clock_gettime');
	my %long = map { $_ => 1 } ('hash join', 'nested loop, skewed inner side', 'memoize',
		'correlated subplan in a filter', 'filtered scan, aggregate', 'CTE scanned twice');
	run_mode_cases($nb, 'auto', $profile, 'profiled', 2, 'profiled, kind (b), ',
		grep { $long{ $_->[0] } } @cases);
	$nb->stop;
}

done_testing();
