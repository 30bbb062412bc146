# Profiled timing: a tick that lands while an exact call returns.  An
# exact call on top of profiled frames (a call that runs a child the
# executor times itself: here each rescan's first call of a Bitmap Heap
# Scan, and each call of a Hash Join that builds its table) leaves the
# chain and then credits its duration to the frames below it (the
# settle-up).  A tick that lands between the two must not credit
# that time as well: with the call off the chain, the tick sees only the
# profiled frames below and credits them the whole interval, the call's
# time included, which the settle-up then credits again.  The same window
# at the switch to profiled timing: a switching tick there credits the
# caller, exact and in flight, its time up to the switch (the returning
# call's time in it) and makes it profiled, and the settle-up then credits
# it the returning call's time once more.  Either way the parent, and
# every node above it, would read longer than the Execution Time.
#
# A signal lands in that window rarely (some twenty instructions in a
# millisecond), so the fault-injection build delivers the tick exactly
# there (fasttime.fault_tick_at_return, fasttime.fault_switch_at_return:
# right after an exact call of a node of the named type has left the
# chain).  The windows are a timer signal's, so the runs tick with signals
# (fasttime.tick_source = signal); the tick worker's ticks are taken in
# main code, at a node call's start or return, outside any window.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin/lib";
use FtTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my ($fault, $why) = ft_fault_install();
plan skip_all => "no fault-injection build: $why" unless $fault;

my $node = ft_node('tick_windows', install_path => $fault, conf => [ 'autovacuum = off' ]);
$node->start;
ft_sql($node, q{
	CREATE TABLE bhs AS SELECT g AS k FROM generate_series(1, 4000) g;
	CREATE INDEX ON bhs (k);
	CREATE TABLE srt AS SELECT g, md5(g::text) AS s FROM generate_series(1, 200000) g;
	CREATE TABLE hb AS SELECT g AS k FROM generate_series(1, 20) g;
	CREATE FUNCTION rows_of(n int) RETURNS SETOF int LANGUAGE plpgsql AS $$
	BEGIN
		FOR i IN 1 .. n LOOP
			PERFORM md5(repeat(i::text, 100));
			RETURN NEXT i;
		END LOOP;
	END $$;
	VACUUM ANALYZE;
});
my ($rc, $status) = ft_sql($node, 'SET fasttime.clock_source = try_tsc; SHOW fasttime.clock_source_status');
note("try_tsc is in effect as $status");

my $prof = 'SET max_parallel_workers_per_gather = 0; SET fasttime.clock_source = try_tsc;
	SET fasttime.node_timing = profile; SET fasttime.profile_after = 0; SET fasttime.profile_interval = 1;
	SET fasttime.tick_source = signal;';

# EXPLAIN (ANALYZE, FORMAT JSON) under the settings; (json, top, nodes) as
# ft_explain_nodes gives them
sub prof_explain
{
	my ($settings, $query) = @_;
	my ($rc, $out, $err) = ft_sql($node, "$prof $settings EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON) $query");
	die "EXPLAIN failed: $err" if $rc != 0;
	return ($out, ft_explain_nodes($out));
}

# is there a node of this type in the plan?
sub has_node
{
	my ($type, @nodes) = @_;
	return scalar grep { ($_->[0]{'Node Type'} // '') eq $type } @nodes;
}

# every node within its parent and within the Execution Time
sub check_plan
{
	my ($desc, $json, $top, @nodes) = @_;
	my ($ok, $msg) = ft_check_explain($json);
	ok($ok, "$desc: no node above the Execution Time ($msg)");
	my $exec = $top->{'Execution Time'};
	my $root = $nodes[0][0];
	cmp_ok($root->{'Actual Total Time'}, '<=', $exec + 0.01,
		"$desc: the root ($root->{'Node Type'}) is within the Execution Time");
	my @bad;
	my $walk;
	$walk = sub {
		my ($p) = @_;
		for my $c (@{ $p->{Plans} // [] })
		{
			push @bad, "$c->{'Node Type'} $c->{'Actual Total Time'} x $c->{'Actual Loops'} > $p->{'Node Type'} $p->{'Actual Total Time'} x $p->{'Actual Loops'}"
			  if $c->{'Actual Total Time'} * $c->{'Actual Loops'} >
			  $p->{'Actual Total Time'} * $p->{'Actual Loops'} + 0.0005 * ($c->{'Actual Loops'} + $p->{'Actual Loops'});
			$walk->($c);
		}
	};
	$walk->($root);
	is(scalar(@bad), 0, "$desc: no child longer than its parent") or diag(join("\n", @bad));
}

# a Bitmap Heap Scan rescanned once per outer row: the first call of each
# scan runs its Bitmap Index Scan, so it is exact, under a profiled Nested
# Loop, and settles up when it returns
my $nl = 'SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_indexscan = off;
	SET enable_seqscan = off; SET enable_material = off; SET enable_memoize = off;';
my $q_bhs = 'SELECT count(*) FROM generate_series(1, 4000) g JOIN bhs b ON b.k = g';
my ($json, $top, @nodes) = prof_explain($nl, $q_bhs);
check_plan('rescanned bitmap heap scan, no fault', $json, $top, @nodes);
ok(has_node('Bitmap Heap Scan', @nodes), 'the plan has its Bitmap Heap Scan');
for my $run (1 .. 2)
{
	($json, $top, @nodes) = prof_explain("$nl SET fasttime.fault_tick_at_return = 'Bitmap Heap Scan';", $q_bhs);
	check_plan("a tick after each exact return of the Bitmap Heap Scan (run $run)", $json, $top, @nodes);
}

# a Hash Join rebuilt for every outer row (its Hash depends on the row):
# the call that builds its table runs its probe side's first call too, a
# function scan that makes all its rows there -- nearly all the join's
# time, in an exact call under the profiled Aggregate and Nested Loop
my $hj = 'SET enable_mergejoin = off; SET enable_memoize = off; SET enable_material = off;';
my $q_hj = 'SELECT count(*) FROM generate_series(1, 200) o, LATERAL (SELECT count(*) FROM rows_of(150 + o % 2) r
	JOIN (SELECT k FROM hb WHERE k <> o) b ON b.k = r) s';
($json, $top, @nodes) = prof_explain($hj, $q_hj);
check_plan('hash join rebuilt per outer row, no fault', $json, $top, @nodes);
ok(has_node('Hash Join', @nodes), 'the plan has its Hash Join');
for my $run (1 .. 2)
{
	($json, $top, @nodes) = prof_explain("$hj SET fasttime.fault_tick_at_return = 'Hash Join';", $q_hj);
	check_plan("a tick after each exact return of the Hash Join (run $run)", $json, $top, @nodes);
}

# a sort under a grouping aggregate: the Sort's first call reads and
# sorts its whole input, exact, under the Aggregate's first call, exact
# too; the switch comes right after the Sort's call has left the chain
my $grp = 'SET enable_hashagg = off;';
my $q_sort = 'SELECT s, count(*) FROM srt GROUP BY s';
($json, $top, @nodes) = prof_explain($grp, $q_sort);
check_plan('sort under an aggregate, no fault', $json, $top, @nodes);
ok(has_node('Sort', @nodes), 'the plan has its Sort');
for my $run (1 .. 2)
{
	($json, $top, @nodes) = prof_explain("$grp SET fasttime.fault_switch_at_return = 'Sort';", $q_sort);
	check_plan("the switch right after the Sort's first call returns (run $run)", $json, $top, @nodes);
}

unlike(slurp_file($node->logfile), qr/terminated by signal|PANIC/, 'no backend crashed');
$node->stop;
done_testing();
