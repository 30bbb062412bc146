# Parallel workers time their plan nodes with the TSC too, and their times
# reach EXPLAIN: per worker (VERBOSE) and summed into each node.  A parallel
# hash join re-arms stock timing in workers (after ExecutorStart) and in the
# leader (at the Gather's first call); fasttime must switch those nodes back.
# Exact timing throughout (fasttime.node_timing = exact, set in each
# session: the default is profiled timing), whose every call is timed;
# stock is clock_gettime with exact timing.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin/lib";
use FtTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = ft_node('parallel');
$node->start;

my ($rc, $out, $err) = ft_sql($node, 'SET fasttime.clock_source = try_tsc; SHOW fasttime.clock_source_status');
if ($out ne 'tsc')
{
	# the stock clock is all there is to see here
	plan skip_all => "the TSC is not usable on this machine (status $out)";
}
ft_sql($node, q{
	CREATE TABLE big AS SELECT g, g % 1000 AS k, md5(g::text) AS t
	  FROM generate_series(1, 300000) g;
	CREATE TABLE small AS SELECT g AS k, 'v' || g AS v FROM generate_series(0, 999) g;
	VACUUM ANALYZE big, small;
});

my $par = ft_parallel_settings();
my $debug = 'SET client_min_messages = debug1; SET log_min_messages = debug1;';

# Run EXPLAIN (ANALYZE, VERBOSE, FORMAT JSON) with DEBUG1 messages; returns
# (json, stderr).
# the TSC witness's mark before the last run_explain (ft_no_warning)
my $last_mark = 0;

sub run_explain
{
	my ($setup, $query) = @_;
	$last_mark = ft_tsc_mark();
	my ($rc, $out, $err) = ft_sql($node,
		"SET fasttime.clock_source = tsc; SET fasttime.node_timing = exact; $par $setup; $debug\n"
		  . "EXPLAIN (ANALYZE, VERBOSE, FORMAT JSON) $query");
	is($rc, 0, "EXPLAIN ANALYZE ran: $query") or diag($err);
	return ($out, $err);
}

# Nodes below a Gather: per-worker times present, sane and within the
# node's summed time.
sub check_workers
{
	my ($json, $what) = @_;
	my ($top, @nodes) = ft_explain_nodes($json);
	my $exec = $top->{'Execution Time'};
	my ($seen, @bad) = (0);
	for my $e (@nodes)
	{
		my ($n, $procs) = @$e;
		next if $procs < 2;    # not below a Gather with workers
		my $sum = $n->{'Actual Total Time'} * $n->{'Actual Loops'};
		for my $w (@{ $n->{Workers} // [] })
		{
			my ($s, $t) = @{$w}{ 'Actual Startup Time', 'Actual Total Time' };
			next unless defined $t;
			$seen++;
			my $id = "$n->{'Node Type'} worker $w->{'Worker Number'}";
			push @bad, "$id: negative ($s..$t)" if $s < 0 || $t < 0;
			push @bad, "$id: startup $s > total $t" if $s > $t + 0.01;
			push @bad, "$id: total $t > execution time $exec" if $t > $exec + 0.01;
			push @bad, "$id: total $t x loops > node's summed $sum"
			  if $t * $w->{'Actual Loops'} > $sum + 0.01 * $n->{'Actual Loops'};
		}
	}
	ok($seen > 0, "$what: per-worker actual times present ($seen)");
	ok(!@bad, "$what: per-worker times sane") or diag(join("\n", @bad));
}

# ---- parallel seq scan + aggregate -------------------------------------
my ($json, $dbg) = run_explain('', 'SELECT count(*), max(t) FROM big');
like($json, qr/"Workers Launched": [1-9]/, 'aggregate: workers launched');
my ($launched) = $json =~ /"Workers Launched": (\d+)/;
my $jumped = $dbg =~ /WARNING/ && (ft_tsc_explained($last_mark, $dbg))[0];
my ($ok, $msg) = ft_check_explain($json, as_measured => $jumped);
ok($ok, "aggregate: node times sane ($msg)");
like($dbg, qr/fasttime: \d+ plan nodes timed with the TSC in backend at ExecutorStart/,
	'aggregate: leader times its nodes with the TSC');
my @w = $dbg =~ /fasttime: (\d+) plan nodes timed with the TSC in parallel worker at ExecutorRun/g;
is(scalar @w, $launched // -1, 'aggregate: every worker times its nodes with the TSC');
ok(!grep({ $_ == 0 } @w), 'aggregate: workers have TSC-timed nodes (' . join(',', @w) . ')');
ft_no_warning($dbg, $last_mark, 'aggregate');
check_workers($json, 'aggregate');

# ---- parallel hash join: stock timing re-armed, repaired ---------------
($json, $dbg) = run_explain('SET enable_parallel_hash = on; SET enable_mergejoin = off; SET enable_nestloop = off',
	'SELECT count(*) FROM big a JOIN big b USING (g)');
like($json, qr/"Node Type": "Hash Join".*"Parallel Aware": true/s, 'hash join: parallel hash join planned')
  or diag($json);
($launched) = $json =~ /"Workers Launched": (\d+)/;
$jumped = $dbg =~ /WARNING/ && (ft_tsc_explained($last_mark, $dbg))[0];
($ok, $msg) = ft_check_explain($json, as_measured => $jumped);
ok($ok, "hash join: node times sane ($msg)");
@w = $dbg =~ /fasttime: \d+ plan nodes timed with the TSC in parallel worker at ExecutorRun \((\d+) switched\)/g;
is(scalar @w, $launched // -1, 'hash join: every worker retimes at ExecutorRun');
ok(@w && !grep({ $_ != 1 } @w), 'hash join: each worker switched the re-armed hash join back (1 switched)')
  or diag($dbg);
like($dbg, qr/fasttime: [1-9]\d* plan nodes below Gather re-armed after parallel start-up/,
	'hash join: leader re-armed the nodes below Gather');
ft_no_warning($dbg, $last_mark, 'hash join');
check_workers($json, 'hash join');

# the server log has the same lines (log_min_messages = debug1 in workers)
my $log = slurp_file($node->logfile);
like($log, qr/\] parallel worker DEBUG:  fasttime: \d+ plan nodes timed with the TSC in parallel worker at ExecutorRun \(1 switched\)/,
	'hash join: worker line in the server log');
like($log, qr/\] client backend DEBUG:  fasttime: \d+ plan nodes below Gather re-armed/,
	'hash join: leader re-arm line in the server log');

# ---- Gather Merge over a parallel sort ---------------------------------
($json, $dbg) = run_explain('SET enable_hashagg = off',
	'SELECT k, count(*) FROM big GROUP BY k ORDER BY k');
like($json, qr/"Node Type": "Gather Merge"/, 'gather merge: planned');
($ok, $msg) = ft_check_explain($json);
ok($ok, "gather merge: node times sane ($msg)");
like($dbg, qr/fasttime: \d+ plan nodes below Gather Merge re-armed/, 'gather merge: wrapper ran');
like($dbg, qr/in parallel worker at ExecutorRun/, 'gather merge: workers TSC-timed');
check_workers($json, 'gather merge');

# ---- the same queries under stock timing: no TSC lines at all ----------
($rc, $out, $err) = ft_sql($node,
	"SET fasttime.clock_source = clock_gettime; SET fasttime.node_timing = exact; $par $debug\n"
	  . 'EXPLAIN (ANALYZE, FORMAT JSON) SELECT count(*) FROM big a JOIN big b USING (g)');
($ok, $msg) = ft_check_explain($out);
ok($ok, "clock_gettime: node times sane ($msg)");
unlike($err, qr/timed with the TSC/, 'clock_gettime: nothing is TSC-timed');
unlike($err, qr/plan nodes on fasttime's wrappers/, 'clock_gettime, exact: the plan is left as stock built it');

$node->stop;
done_testing();
