# Asynchronous plan nodes: an Append over postgres_fdw foreign partitions
# with async_capable = true (Async Foreign Scan, loopback to this very
# server) next to a local partition.  The executor times async nodes
# itself, around ExecAsyncRequest and ExecAsyncNotify, and fasttime keeps
# them and their Append exact for good under profiled timing
# (profiler.h).  For plans of several shapes -- a whole scan under an
# aggregate, a LIMIT that stops the async requests early, rescans below a
# nested loop, a SubPlan, a CTE read twice, a join -- every fasttime
# variant (exact with the TSC, profiled with the TSC and with
# clock_gettime, switched at the first tick, and the defaults: nothing set,
# profiled after profile_after) prints the same rows and loops as stock
# PostgreSQL (clock_gettime with fasttime.node_timing = exact), no
# WARNING, startup never after total, and no child longer than its parent
# unless stock shows the same pair.  Then: an ERROR raised by the remote
# side inside an async node, and a cursor over async nodes closed half
# read, leave the session's next profiled EXPLAIN ANALYZE sane; and the
# same plans through auto_explain (log_analyze, profiled, nested
# statements) log plans with no WARNING and no crash.  Skipped where the
# server has no postgres_fdw (a source build of core alone).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin/lib";
use FtTest;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = ft_node('async', conf => [ 'autovacuum = off', 'max_connections = 40' ]);
$node->start;
my ($rc, $avail) = ft_sql($node,
	"SELECT count(*) FROM pg_available_extensions WHERE name = 'postgres_fdw'");
chomp $avail;
if ($avail ne '1')
{
	$node->stop;
	plan skip_all => 'postgres_fdw is not installed with this server';
}

my ($host, $port) = ($node->host, $node->port);
($rc, my $out, my $err) = ft_sql($node, qq{
	CREATE EXTENSION fasttime;
	CREATE EXTENSION postgres_fdw;
	CREATE SERVER loop FOREIGN DATA WRAPPER postgres_fdw
		OPTIONS (host '$host', port '$port', dbname 'postgres', async_capable 'true');
	CREATE USER MAPPING FOR CURRENT_USER SERVER loop;
	CREATE TABLE base1 AS SELECT g AS id, g % 100 AS v FROM generate_series(1, 100000) g;
	CREATE TABLE base2 AS SELECT g AS id, g % 100 AS v FROM generate_series(100001, 200000) g;
	CREATE TABLE pt (id int, v int) PARTITION BY RANGE (id);
	CREATE FOREIGN TABLE pt1 PARTITION OF pt FOR VALUES FROM (1) TO (100001)
		SERVER loop OPTIONS (table_name 'base1');
	CREATE FOREIGN TABLE pt2 PARTITION OF pt FOR VALUES FROM (100001) TO (200001)
		SERVER loop OPTIONS (table_name 'base2');
	CREATE TABLE pt3 PARTITION OF pt FOR VALUES FROM (200001) TO (300001);
	INSERT INTO pt3 SELECT g, g % 100 FROM generate_series(200001, 300000) g;
	CREATE TABLE small AS SELECT g FROM generate_series(1, 6) g;
	VACUUM ANALYZE base1, base2, pt3, small;
});
is($rc, 0, 'set-up: loopback foreign partitions') or diag($err);

# [name, settings, query]
my @cases = (
	[ 'aggregate over async append', '', 'SELECT count(*), sum(v) FROM pt WHERE v % 3 = 0' ],
	[ 'limit stops async requests', '', 'SELECT count(*) FROM (SELECT * FROM pt WHERE v < 50 LIMIT 70000) s' ],
	[ 'early limit', '', 'SELECT * FROM pt WHERE v = 7 LIMIT 5' ],
	[ 'rescans below a nested loop', 'SET enable_hashjoin = off; SET enable_mergejoin = off;',
	  'SELECT count(*) FROM small s CROSS JOIN LATERAL (SELECT * FROM pt WHERE v = s.g OFFSET 0) l' ],
	[ 'subplan over async append', '',
	  'SELECT g, (SELECT count(*) FROM pt WHERE v = small.g) FROM small WHERE g <= 3' ],
	[ 'CTE read twice', '',
	  'WITH c AS MATERIALIZED (SELECT * FROM pt WHERE v < 10) SELECT count(*) FROM c a JOIN c b USING (id)' ],
	[ 'join with a local table', '', 'SELECT count(*) FROM pt a JOIN base1 b ON a.id = b.id WHERE a.v < 20' ],
);

my %variants = (
	'exact' => 'SET fasttime.clock_source = try_tsc; SET fasttime.node_timing = exact;',
	'profiled' => 'SET fasttime.clock_source = try_tsc; SET fasttime.node_timing = profile; SET fasttime.profile_after = 0;',
	'profiled, clock_gettime' =>
	  'SET fasttime.clock_source = clock_gettime; SET fasttime.node_timing = profile; SET fasttime.profile_after = 0;',
	'defaults' => '',
);
my $stock = 'SET fasttime.clock_source = clock_gettime; SET fasttime.node_timing = exact;';

# each node as [type, inclusive ms (total x loops), rows, loops, parent
# index, startup ms, total ms, async capable]
sub plan_nodes
{
	my ($json) = @_;
	my @out;
	my $walk;
	$walk = sub {
		my ($p, $parent) = @_;
		my $me = scalar @out;
		my $loops = $p->{'Actual Loops'} // 0;
		push @out,
		  [ $p->{'Node Type'}, ($p->{'Actual Total Time'} // 0) * $loops, $p->{'Actual Rows'}, $loops, $parent,
			$p->{'Actual Startup Time'} // 0, $p->{'Actual Total Time'} // 0, $p->{'Async Capable'} ? 1 : 0 ];
		$walk->($_, $me) for @{ $p->{Plans} // [] };
	};
	$walk->(decode_json($json)->[0]{Plan}, undef);
	return @out;
}

sub shape { return join(',', map { "$_->[0]/$_->[2]/$_->[3]" } @_); }

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
	my ($settings, $query) = @_;
	my ($rc, $out, $err) = ft_sql($node,
		"SET max_parallel_workers_per_gather = 0; $settings EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, FORMAT JSON) $query");
	return ($rc, $out, $err);
}

for my $case (@cases)
{
	my ($name, $settings, $query) = @$case;
	run_explain("$stock $settings", $query);    # warm-up
	my ($src, $sout, $serr) = run_explain("$stock $settings", $query);
	if ($src != 0)
	{
		ok(0, "$name: stock EXPLAIN ANALYZE runs") or diag($serr);
		next;
	}
	my @stock = plan_nodes($sout);
	my $async = grep { $_->[7] } @stock;
	ok($async >= 2, "$name: the plan has async nodes ($async)");
	my %stock_flip = map { $_ => 1 } child_longer(@stock);
	for my $v (sort keys %variants)
	{
		my @bad;
		my ($same, $warned) = (1, '');
		my $mark = ft_tsc_mark();
		for my $run (1 .. 3)
		{
			my ($rc, $out, $err) = run_explain("$variants{$v} $settings", $query);
			if ($rc != 0)
			{
				push @bad, "run $run failed: $err";
				$same = 0;
				next;
			}
			$warned .= $err if $err =~ /WARNING/;
			my @n = plan_nodes($out);
			$same &&= shape(@n) eq shape(@stock);
			for my $i (child_longer(@n))
			{
				next if $stock_flip{$i};
				push @bad, sprintf('run %d: %s %.3f ms > parent %s %.3f ms', $run, $n[$i][0], $n[$i][1],
					$n[ $n[$i][4] ][0], $n[ $n[$i][4] ][1]);
			}
			push @bad, "run $run: $_->[0] startup $_->[5] ms after total $_->[6] ms"
			  for grep { $_->[5] > $_->[6] } @n;
		}
		ok($same, "$name, $v: rows and loops as stock in 3 runs");
		is(scalar @bad, 0, "$name, $v: no child longer than its parent, startup never after total")
		  or diag(join("\n", @bad));
		ft_no_warning($warned, $mark, "$name, $v");
	}
}

# the async node's remote side fails mid-scan (a division by zero pushed
# down to the remote server), then the session goes on
{
	my $prof = $variants{'profiled'};
	my $mark = ft_tsc_mark();
	my ($rc, $out, $err) = ft_sql($node,
		"$prof\n\\set ON_ERROR_STOP 0\n"
		  . "EXPLAIN (ANALYZE, FORMAT JSON) SELECT count(*) FROM pt WHERE id <= 200000 AND 1 / (v - 50) <> 7;\n"
		  . "\\echo MARK\n"
		  . "EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, FORMAT JSON) SELECT count(*), sum(v) FROM pt WHERE v % 3 = 0;\n");
	like($err, qr/division by zero/, 'remote ERROR inside an async node is reported');
	ft_no_warning($err, $mark, 'remote ERROR inside an async node');
	my ($json) = $out =~ /MARK\n(.*)\z/s;
	my @n = eval { plan_nodes($json // '') };
	ok(@n && !child_longer(@n) && $n[0][6] > 0,
		'after a remote ERROR in an async node, the next profiled plan is sane');
	my (undef, $stock_out) = run_explain($stock, 'SELECT count(*), sum(v) FROM pt WHERE v % 3 = 0');
	ok(@n && shape(@n) eq shape(plan_nodes($stock_out)),
		'after a remote ERROR in an async node, rows and loops as stock');
}

# a cursor over async nodes, fetched in part and closed, under profiled
# timing through auto_explain; then a profiled EXPLAIN in the same session
{
	my $prof = $variants{'profiled'};
	my $off = -s $node->logfile;
	my $mark = ft_tsc_mark();
	my ($rc, $out, $err) = ft_sql($node, qq{
		LOAD 'auto_explain';
		SET auto_explain.log_min_duration = 0;
		SET auto_explain.log_analyze = on;
		SET auto_explain.log_nested_statements = on;
		$prof
		BEGIN;
		DECLARE c CURSOR FOR SELECT * FROM pt WHERE v % 5 = 0;
		FETCH 1000 FROM c;
		FETCH 1000 FROM c;
		CLOSE c;
		COMMIT;
		SELECT count(*), sum(v) FROM pt WHERE v % 3 = 0;
		SELECT count(*) FROM small s CROSS JOIN LATERAL (SELECT * FROM pt WHERE v = s.g OFFSET 0) l;
	});
	is($rc, 0, 'cursor and plans over async nodes under auto_explain, profiled') or diag($err);
	ft_no_warning($err, $mark, 'auto_explain over async nodes');
	my $log = ft_log_since($node, $off);
	my $plans = () = $log =~ /Async Foreign Scan on pt/g;
	ok($plans >= 3, "auto_explain logged the async plans ($plans async nodes)");
	unlike($log, qr/terminated by signal|PANIC/, 'server log: no crash');
}

unlike(slurp_file($node->logfile), qr/terminated by signal|PANIC/, 'no backend crashed');
$node->stop;
done_testing();
