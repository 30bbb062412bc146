# A parallel worker whose leader runs another build of fasttime never fails
# the query.  Without shared_preload_libraries a worker loads fasttime.so
# from disk, and after an upgrade that is not the build its leader loaded;
# the leader's fasttime.leader_facts (a tagged image of its clock facts)
# may then be unreadable to the worker.  The worker must accept the value,
# time its nodes with clock_gettime (stock's clock), say why at DEBUG1,
# and return the same rows.
#
# The other build is faked with a fault-injection build's
# fasttime.fault_publish_facts, which mangles what the leader publishes:
#   foreign_layout  same format, another layout hash
#   old_format      what fasttime 1.0 builds sent ("ft1:<size>:<hex>"),
#                   the value of the original bug report
#   garbage         not facts at all
#
# Each with exact timing (fasttime.node_timing = exact) and with the
# default node timing, profiled, as a user has it: the workers' nodes are
# on clock_gettime either way.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin/lib";
use FtTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my ($fault, $noreason) = ft_fault_install();
plan skip_all => "no fault-injection build: $noreason" unless $fault;

my $node = ft_node('worker_facts', install_path => $fault, preload => 0);
$node->start;

my $par = ft_parallel_settings();
my $debug = 'SET client_min_messages = debug1;';
my $query = 'SELECT k, count(*), sum(g) FROM big GROUP BY k ORDER BY k';

my ($rc, $out, $err) = ft_sql($node, q{
	CREATE TABLE big AS SELECT g, g % 100 AS k FROM generate_series(1, 200000) g;
	VACUUM ANALYZE big;
});
is($rc, 0, 'table created') or diag($err);

# the rows, serially and without fasttime
my ($rc0, $expected) = ft_sql($node, "SET max_parallel_workers_per_gather = 0; $query");
ok(length($expected) > 100, 'reference rows (serial, no fasttime)');

($rc, $out, $err) = ft_sql($node, "LOAD 'fasttime'; SET fasttime.clock_source = try_tsc;
	SHOW fasttime.clock_source_status;");
is($rc, 0, 'LOAD the fault build') or diag($err);
if ($out ne 'tsc')
{
	note("the TSC is not usable here ($out): leaders never publish facts, nothing to test");
	done_testing();
	exit 0;
}

# a leader of this build: its workers adopt the facts
($rc, $out, $err) = ft_sql($node, "$debug LOAD 'fasttime'; $par SET fasttime.clock_source = try_tsc;
	SET fasttime.node_timing = exact;
	EXPLAIN (ANALYZE, FORMAT JSON) $query;");
my ($launched) = $out =~ /"Workers Launched": (\d+)/;
my @adopted = $err =~ /parallel worker adopted its leader's clock facts/g;
ok(defined $launched && $launched > 0 && @adopted == $launched,
	'same build: every worker adopted its leader\'s facts (' . scalar(@adopted) . ' of ' . ($launched // '?') . ')');

for my $mode (qw(foreign_layout old_format garbage))
{
	for my $t ([ 'exact', 'SET fasttime.node_timing = exact;' ], [ 'default timing', '' ])
	{
		my ($timing, $setting) = @$t;
		# under try_tsc: the leader publishes the mangled facts at its first
		# TSC-timed query and times its own nodes with the TSC; the workers
		# cannot read the facts
		($rc, $out, $err) = ft_sql($node, "$debug LOAD 'fasttime';
			SET fasttime.fault_publish_facts = $mode;
			$par SET fasttime.clock_source = try_tsc; $setting
			EXPLAIN (ANALYZE, FORMAT JSON) $query;");
		is($rc, 0, "$mode, try_tsc, $timing: parallel EXPLAIN ANALYZE succeeds") or diag($err);
		unlike($err, qr/ERROR|invalid value for parameter/, "$mode, try_tsc, $timing: no error");
		like($err, qr/published clock facts mangled/, "$mode, $timing: the leader published mangled facts");
		($launched) = $out =~ /"Workers Launched": (\d+)/;
		my @refused = $err =~ /fasttime: parallel worker could not read its leader's clock facts, so its plan nodes are timed with clock_gettime/g;
		ok(defined $launched && $launched > 0 && @refused == $launched,
			"$mode, $timing: every worker says at DEBUG1 why it uses clock_gettime (" . scalar(@refused) . ' of ' . ($launched // '?') . ')');
		like($err, qr/DETAIL:  The leader's fasttime.leader_facts \(".{16}\.\.\.", \d+ bytes\) comes from another build of fasttime, or is malformed\./,
			"$mode, $timing: with a DETAIL");
		unlike($err, qr/adopted its leader's clock facts|plan nodes timed with the TSC in parallel worker/,
			"$mode, $timing: no worker adopted the facts or timed with the TSC");
		like($err, qr/plan nodes timed with the TSC in backend/, "$mode, $timing: the leader still times with the TSC");
		my ($ok, $msg) = ft_check_explain($out);
		ok($ok, "$mode, $timing: node times sane ($msg)");
	}

	# the rows: a parallel query of a session that has published, timed,
	# under try_tsc and then clock_gettime (the report: "even under
	# clock_gettime")
	($rc, $out, $err) = ft_sql($node, "LOAD 'fasttime';
		SET fasttime.fault_publish_facts = $mode;
		$par SET fasttime.clock_source = try_tsc; SET fasttime.node_timing = exact;
		\\o /dev/null
		EXPLAIN ANALYZE SELECT count(*) FROM big;
		\\o
		$query;
		SET fasttime.clock_source = clock_gettime;
		$query;");
	is($rc, 0, "$mode: parallel queries after publishing succeed") or diag($err);
	is($out, "$expected\n$expected", "$mode: identical rows under try_tsc and clock_gettime");
}

unlike(slurp_file($node->logfile), qr/terminated by signal|PANIC|invalid value for parameter "fasttime/,
	'server log: no crash, no rejected fasttime parameter');
$node->stop;
done_testing();
