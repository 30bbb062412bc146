# A cursor is fetched in several runs of one plan: its nodes keep the
# wrappers the last run left them on.  When an earlier run switched to
# profiled timing, its nodes are on the profiled fast path, which tests
# only the gate (profiler.h); the next run starts exact, so its start must
# shut the gate, or its exact prefix goes down the fast path and its time
# is credited to no node.  Here the first FETCH is profiled from the first
# tick (profile_after = 0) and the second, nine times longer, is exact
# throughout (profile_after = 1 h, read at the run's start: no tick comes,
# a quarter of it away); auto_explain logs the plan at CLOSE with its
# duration, the sum of both runs.  The Seq Scan, doing nearly all the
# work, must read at least half of it and no more than all of it; with the
# second run lost it reads about a tenth.  Then the other order (exact
# first, profiled second), and the default settings, hold the same
# relation.  The cursor is declared with profile_after at its default
# (with 1 h, the plan is expected to end long before its first tick and
# is timed exactly from its start, every run), and some run of each case
# switched: auto_explain logs the profile line.  Last, a run switches
# early only when its own clock reads reach a quarter of its time: the
# calls of an earlier FETCH are not the next run's (below).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin/lib";
use FtTest;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = ft_node('cursor_runs', conf => [ 'autovacuum = off' ]);
$node->start;

my ($rc, $out, $err) = ft_sql($node, q{
	CREATE EXTENSION fasttime;
	CREATE TABLE t AS SELECT g FROM generate_series(1, 1000000) g;
	VACUUM ANALYZE t;
});
is($rc, 0, 'set-up') or diag($err);

my $ae = join(' ',
	"LOAD 'auto_explain';",
	'SET auto_explain.log_min_duration = 0;',
	'SET auto_explain.log_analyze = on;',
	'SET auto_explain.log_timing = on;',
	'SET auto_explain.log_format = json;',
	'SET max_parallel_workers_per_gather = 0;');

# about one row in 256 passes: a FETCH of n rows scans about 256 n
my $query = "SELECT g FROM t WHERE md5(g::text) LIKE 'ff%'";

# [name, settings before DECLARE, before FETCH 1, before FETCH 2]
my @cases = (
	[ 'profiled, then exact', '', 'SET fasttime.profile_after = 0;',
	  'SET fasttime.profile_after = 3600000;' ],
	[ 'exact, then profiled', '', 'SET fasttime.profile_after = 3600000;',
	  'SET fasttime.profile_after = 0;' ],
	[ 'default settings', '', '', '' ],
);

for my $c (@cases)
{
	my ($name, $decl, $pre1, $pre2) = @$c;
	my $off = -s $node->logfile;
	my $mark = ft_tsc_mark();
	($rc, $out, $err) = ft_sql($node,
		"$ae $decl BEGIN; DECLARE c CURSOR FOR $query;\n"
		  . "$pre1 FETCH 300 FROM c \\g /dev/null\n"
		  . "$pre2 FETCH 2700 FROM c \\g /dev/null\n"
		  . "CLOSE c; COMMIT;");
	is($rc, 0, "$name: the cursor was fetched twice") or diag($err);
	my $log = ft_log_since($node, $off);
	my ($ms, $text) = $log =~ /duration: ([\d.]+) ms  plan:\n\t(\{.*?\n\t\})\n/s;
	ok(defined $text, "$name: auto_explain logged the cursor's plan") or next;
	like($log, qr/profiled node timing in the plan of this query/,
		"$name: a run switched to profiled timing");
	my $doc = eval { decode_json($text) };
	ok($doc, "$name: the logged plan is JSON") or next;
	my $plan = $doc->{Plan};
	is($plan->{'Node Type'}, 'Seq Scan', "$name: the plan is one Seq Scan");
	is($plan->{'Actual Rows'} * ($plan->{'Actual Loops'} // 1), 3000,
		"$name: it returned the rows fetched");
	my $node_ms = $plan->{'Actual Total Time'} * ($plan->{'Actual Loops'} // 1);
	ok($node_ms >= 0.5 * $ms && $node_ms <= $ms * 1.001 + 0.01,
		sprintf('%s: the Seq Scan reads %.1f ms of the runs\' %.1f ms (between half and all)',
			$name, $node_ms, $ms));
	ft_no_warning($err, $mark, $name);
}

# Exact twice.  The first FETCH, with profile_after = 1 h, returns 500,000 cheap rows through a Subquery
# Scan over the Seq Scan, a million calls; the second, with profile_after
# = 300 ms, returns 600 rows that cost an md5 each to find (every row the
# Seq Scan reads is a call).  Its ticks come every 5 ms from 75 ms on,
# each asking whether the run's reads have reached a quarter of its time;
# an md5 a row keeps them far below, so if it ends before 300 ms, neither
# run switches and auto_explain logs no profile line.  Counting the first
# FETCH's million calls as the second's, the second switched at 75 ms.
# Its duration is read from the statement log's timestamps: outside
# 75-300 ms the case says nothing, and is skipped.  (No synchronized scan:
# the cursor's Seq Scan starts at the table's first row.)
{
	my $off = -s $node->logfile;
	my $sub = "SELECT g FROM (SELECT g FROM t OFFSET 0) s WHERE g <= 500000 OR md5(g::text) LIKE 'ff%'";
	($rc, $out, $err) = ft_sql($node,
		"$ae SET synchronize_seqscans = off; BEGIN; DECLARE c CURSOR FOR $sub;\n"
		  . "SET fasttime.profile_after = 3600000; FETCH 500000 FROM c \\g /dev/null\n"
		  . "SET fasttime.profile_after = 300; FETCH 600 FROM c \\g /dev/null\n"
		  . "CLOSE c; COMMIT;");
	is($rc, 0, 'exact twice: the cursor was fetched twice') or diag($err);
	my $log = ft_log_since($node, $off);
	my @ts = $log =~ /\d\d:(\d\d):(\d\d\.\d+) UTC \[\d+\] client backend LOG:  statement: (?:FETCH 600|CLOSE)/g;
	my $ms = @ts == 4 ? (($ts[2] - $ts[0]) * 60 + ($ts[3] - $ts[1])) * 1000 : -1;
	like($log, qr/duration: [\d.]+ ms  plan:/, "exact twice: auto_explain logged the cursor's plan");
	SKIP:
	{
		skip sprintf('the second FETCH took %.0f ms, outside 75-300 ms', $ms), 1
		  unless $ms >= 75 && $ms < 300;
		unlike($log, qr/profiled node timing in the plan of this query/,
			sprintf('exact twice: neither run switched to profiled timing (the second FETCH %.0f ms)', $ms));
	}
}

$node->stop;
done_testing();
