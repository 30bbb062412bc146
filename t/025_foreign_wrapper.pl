# A plan node another extension wraps (an extension loaded before
# fasttime that puts nodes on its own ExecProcNode wrapper): fasttime
# leaves such a node alone, and must still time everything around it.
# The case that needs care is a Hash whose child is such a node.
# Profiled timing times a Hash's build by its child's calls on fasttime's
# wrappers (prof_plan.c); with the child on another wrapper no call of
# fasttime's opens the build, so the Hash would read 0 ms.  It must
# instead be timed as stock times it, and hold its child's time.
#
# The fault build's fasttime.fault_foreign_wrap puts the nodes of a type on
# a wrapper that does what stock's does, before fasttime's walk.
# What must hold, for exact and profiled timing, with Seq Scans wrapped
# and without: rows and loops the same everywhere; the Hash holds its
# child's time and a good part of the run's; no child longer than its
# parent.
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

my $node = ft_node('foreign_wrapper', install_path => $fault, conf => [ 'autovacuum = off' ]);
$node->start;
ft_sql($node, q{
	CREATE TABLE build AS SELECT g AS id, md5(g::text) AS s FROM generate_series(1, 400000) g;
	CREATE TABLE probe AS SELECT g % 1000 AS id FROM generate_series(1, 200000) g;
	VACUUM ANALYZE build;
	VACUUM ANALYZE probe;
});

# the build side costs most: a filter on every row of the hashed scan,
# which the planner expects to keep a two-hundredth of them (it keeps all),
# so that it hashes that side
my $query = q{SELECT count(*) FROM probe p JOIN (SELECT * FROM build WHERE md5(s) = md5(s)) b ON b.id = p.id};
my $common = 'SET max_parallel_workers_per_gather = 0; SET enable_mergejoin = off; SET enable_nestloop = off; '
  . 'SET fasttime.profile_after = 0; SET fasttime.tick_source = signal; SET client_min_messages = debug1; '
  . 'SET fasttime.clock_source = try_tsc; ';

# the plan's nodes, pre-order (type, total ms, rows, loops, relation,
# parent), its Execution Time, and how many of its nodes fasttime put on
# its wrappers (its DEBUG1 line; none for stock timing)
sub run_plan
{
	my ($settings) = @_;
	my ($rc, $out, $err) = ft_sql($node,
		"$common $settings EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, FORMAT JSON) $query");
	return (undef, $err) if $rc != 0;
	my ($ours) = $err =~ /fasttime: (\d+) plan nodes (?:timed with the TSC|on fasttime's wrappers)/;
	my $doc = decode_json($out)->[0];
	my @nodes;
	my @stack = ([ $doc->{Plan}, undef ]);
	while (my $e = shift @stack)
	{
		my ($p, $parent) = @$e;
		push @nodes, { type => $p->{'Node Type'}, total => $p->{'Actual Total Time'},
			rows => $p->{'Actual Rows'}, loops => $p->{'Actual Loops'},
			rel => $p->{'Relation Name'} // '', parent => $parent };
		my $me = $#nodes;
		unshift @stack, map { [ $_, $me ] } @{ $p->{Plans} // [] };
	}
	return (\@nodes, '', $doc->{'Execution Time'}, $ours);
}

sub shape
{
	my ($nodes) = @_;
	return join(' ', map { "$_->{type}:$_->{rows}/$_->{loops}" } @$nodes);
}

my ($stock) = run_plan('SET fasttime.clock_source = clock_gettime; SET fasttime.node_timing = exact;');
ok(defined $stock, 'stock: EXPLAIN ANALYZE runs');
my $want = defined $stock ? shape($stock) : '';
my ($hashed) = map { $_->{rel} } grep { defined $_->{parent} && $stock->[ $_->{parent} ]{type} eq 'Hash' } @{ $stock // [] };
is($hashed // '', 'build', "the plan hashes the costly side ($want)");

for my $timing ('exact', 'profile')
{
	for my $wrap ('', 'Seq Scan')
	{
		my $label = "$timing, " . ($wrap eq '' ? 'no node wrapped' : 'Seq Scans wrapped');
		my ($nodes, $err, $exec, $ours) = run_plan("SET fasttime.node_timing = $timing; "
			  . "SET fasttime.fault_foreign_wrap = '$wrap';");
		ok(defined $nodes, "$label: EXPLAIN ANALYZE runs") or diag($err);
		next unless defined $nodes;
		# the two Seq Scans are another extension's: fasttime has the rest
		# (exact timing by clock_gettime, where the TSC is not usable, is
		# stock's: no node is fasttime's then)
		my $all = scalar @$nodes;
		if ($timing eq 'profile' || defined $ours)
		{
			is($ours // -1, $wrap eq '' ? $all : $all - 2, "$label: nodes on fasttime's wrappers");
		}
		is(shape($nodes), $want, "$label: rows and loops as stock's");
		my @bad = map { "$_->{type} $_->{total} > $nodes->[$_->{parent}]{type} $nodes->[$_->{parent}]{total}" }
		  grep { defined $_->{parent} && $_->{total} > $nodes->[ $_->{parent} ]{total} + 0.002 } @$nodes;
		is("@bad", '', "$label: no child longer than its parent");
		my ($hash) = grep { $nodes->[$_]{type} eq 'Hash' } 0 .. $#$nodes;
		my ($child) = grep { defined $nodes->[$_]{parent} && $nodes->[$_]{parent} == $hash } 0 .. $#$nodes;
		my ($th, $tc) = ($nodes->[$hash]{total}, $nodes->[$child]{total});
		ok($th >= $tc && $tc > 0, "$label: the Hash holds its child's time ($th >= $tc ms)");
		ok($th >= 0.5 * $exec, "$label: the Hash, building from the costly scan, holds most of the run ($th of $exec ms)");
	}
}

$node->stop;
done_testing();
