# The tick worker (fasttime.tick_source = worker at server start, where
# fasttime is preloaded): one background worker ticks every profiling
# backend after its exact prefix, so the backend takes no timer signal.
# What must hold:
# - the worker runs ("fasttime ticker" in pg_stat_activity, tick_worker
#   running in fasttime_status()), ticks a profiled run (the backend's
#   profile_worker_ticks grow, and its profile_ticks with them), and
#   tick_source = signal takes it off;
# - its ticks credit the node doing the work, a parent is never shorter
#   than its child, and the nodes hold the run's time;
# - a backend that waits is parked: a wait of 1.5 s takes a few worker
#   ticks, not 1500, and the waiting node holds the wait;
# - a call that runs over several ticks counts each of them;
# - DROP DATABASE, which waits for every process to absorb a barrier,
#   does not wait for ever on the worker;
# - the worker terminated in the middle of a run: the watchdog moves the
#   run back to timer signals, which tick the rest of it, so its nodes
#   still hold the whole run; the postmaster starts the worker again, and
#   later runs use it;
# - a server started with the default (signal) has no worker: none in
#   pg_stat_activity, tick_worker "not started", and a session that sets
#   worker ticks with signals;
# - loaded without preloading, a backend has no worker and ticks with
#   signals.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin/lib";
use FtTest;
use IPC::Run;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = ft_node('tick_worker', conf => [ 'autovacuum = off', 'fasttime.tick_source = worker' ]);
$node->start;
ft_sql($node, q{
	CREATE EXTENSION fasttime;
	CREATE TABLE big AS SELECT g AS id, g % 1000 AS k FROM generate_series(1, 3000000) g;
	CREATE FUNCTION nap(s float8) RETURNS bool LANGUAGE plpgsql AS $$
	BEGIN
		PERFORM pg_sleep(s);
		RETURN true;
	END $$;
	-- busy for ms milliseconds, in simple expressions: no node call
	CREATE FUNCTION spin(ms float8) RETURNS bool LANGUAGE plpgsql AS $$
	DECLARE t timestamptz := clock_timestamp();
	BEGIN
		WHILE clock_timestamp() < t + ms * interval '1 ms' LOOP
		END LOOP;
		RETURN true;
	END $$;
	-- a query of its own, run inside the calling node
	CREATE FUNCTION inner_count() RETURNS bool LANGUAGE plpgsql AS $$
	BEGIN
		PERFORM count(*) FROM generate_series(1, 100);
		RETURN true;
	END $$;
	VACUUM ANALYZE big;
});

my $prof = 'SET max_parallel_workers_per_gather = 0; SET fasttime.node_timing = profile;';
my $wt = q{SELECT 'wt=' || value FROM fasttime_status() WHERE name = 'profile_worker_ticks';
	SELECT 'pt=' || value FROM fasttime_status() WHERE name = 'profile_ticks';};

sub json_of
{
	my ($out) = @_;
	my ($j) = $out =~ /(\[\s*\{.*\}\s*\])/s;
	return defined $j ? eval { decode_json($j)->[0] } : undef;
}

# the worker's ticks of the backend, and all its ticks, in a statement
sub worker_ticks_of
{
	my ($out) = @_;
	my @t = $out =~ /wt=(\d+)/g;
	return @t == 2 ? $t[1] - $t[0] : undef;
}

sub ticks_of
{
	my ($out) = @_;
	my @t = $out =~ /pt=(\d+)/g;
	return @t == 2 ? $t[1] - $t[0] : undef;
}

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

sub ticker_pid
{
	my ($rc, $out) = ft_sql($node,
		q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'fasttime ticker'});
	chomp $out;
	return $out =~ /^\d+$/ ? $out : undef;
}

# a sort over a scan with a costly filter: most of the time is the scan's
my $query = q{SELECT count(*) FROM (SELECT * FROM big WHERE md5(id::text) > 'f' ORDER BY k) s};

sub worker_state
{
	my ($n) = @_;
	my ($rc, $out) = ft_sql($n, q{SELECT value FROM fasttime_status() WHERE name = 'tick_worker'});
	chomp $out;
	return $out;
}

# (the postmaster starts it once the server accepts connections)
my ($pid, $state);
for (1 .. 100)
{
	($pid, $state) = (ticker_pid(), worker_state($node));
	last if defined $pid && $state eq 'running';
	usleep(100_000);
}
ok(defined $pid, 'the tick worker runs in a server started with it (pid ' . ($pid // 'none') . ')');
is($state, 'running', 'fasttime_status() says the worker runs');
like(ft_log_since($node, 0), qr/then on the tick worker's ticks/,
	'the server log says at start that the worker ticks');

# the worker ticks a profiled run
{
	my ($rc, $out, $err) = ft_sql($node, "$prof $wt
		EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON) $query; $wt");
	is($rc, 0, 'worker: EXPLAIN ANALYZE runs') or diag($err);
	my ($doc, $n) = (json_of($out), worker_ticks_of($out));
	my $all = ticks_of($out);
	ok(defined $n && $n >= 20, 'worker: the worker ticked the run (' . ($n // '?') . ' ticks)');
	# the prefix's ticks are signals (at most one a millisecond of its
	# 20); a worker starved of CPU for 100 ms would hand the run to
	# signals, so only most of the ticks need be the worker's
	ok(defined $all && $all > 0 && $n >= 0.5 * $all,
		'worker: most of the backend\'s ticks were the worker\'s (' . ($all // '?') . ' in all)');
	my $agg = $doc->{Plan};
	my $sort = find_node($agg, 'Sort');
	my $scan = find_node($agg, 'Seq Scan');
	my ($ta, $ts, $tc, $exec) = map { $_ // 0 } ($agg->{'Actual Total Time'},
		$sort->{'Actual Total Time'}, $scan->{'Actual Total Time'}, $doc->{'Execution Time'});
	ok($ta >= $ts && $ts >= $tc, "worker: no child longer than its parent ($ta >= $ts >= $tc ms)");
	ok($tc >= 0.5 * $ta, "worker: the scan, doing most of the work, holds most of the time ($tc of $ta ms)");
	ok($ta >= 0.9 * $exec && $ta <= $exec + 0.01, "worker: the plan holds the run's time ($ta of $exec ms)");
}

# tick_source = signal: the backend's own timer signals
{
	my ($rc, $out, $err) = ft_sql($node, "$prof SET fasttime.tick_source = signal; $wt
		EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON) $query; $wt");
	is($rc, 0, 'signal: EXPLAIN ANALYZE runs') or diag($err);
	my ($doc, $n) = (json_of($out), worker_ticks_of($out));
	is($n, 0, 'signal: the worker did not tick the backend');
	ok((ticks_of($out) // 0) >= 20, 'signal: its own ticks did (' . (ticks_of($out) // '?') . ')');
}

# a wait: the worker parks the backend until its next transition
{
	my ($rc, $out, $err) = ft_sql($node, "$prof SET fasttime.profile_after = 0; $wt
		EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON)
		SELECT count(*) FROM (SELECT g, CASE WHEN g = 100000 THEN nap(1.5) END FROM generate_series(1, 200000) g) s; $wt");
	is($rc, 0, 'wait: EXPLAIN ANALYZE runs') or diag($err);
	my ($doc, $n) = (json_of($out), worker_ticks_of($out));
	ok(defined $n && $n > 0, 'wait: the worker ticked the run');
	ok(defined $n && $n < 400, 'wait: a 1.5 s wait takes a few worker ticks, not one a millisecond (' . ($n // '?') . ' ticks)');
	my $fs = find_node($doc->{Plan}, 'Function Scan');
	my ($tf, $ta) = map { $_ // 0 } ($fs->{'Actual Total Time'}, $doc->{Plan}{'Actual Total Time'});
	ok($tf >= 1490 && $ta >= $tf, "wait: the Function Scan holds the wait, within its parent ($tf of $ta ms)");
}

# calls of 5 ms at 1 ms ticks: the backend finds the worker's flag once
# a call, and counts every tick the worker made meanwhile, as it would
# count timer signals (counting one a call, its ticks were a fifth of
# the worker's)
{
	my $v = $node->safe_psql('postgres', 'SHOW server_version_num');
	my $opt = $v >= 180000 ? 'ANALYZE, BUFFERS OFF, CLOCK_SOURCE, FORMAT JSON' : 'ANALYZE, BUFFERS OFF, FORMAT JSON';
	# spin() compiled before the run: its first call in the run, during
	# which the ticks are still signals, is then 5 ms long, not 5 ms and
	# the compilation (CI, 2026-12: 5 signals of the 6 allowed below)
	my ($rc, $out, $err) = ft_sql($node, "$prof SET fasttime.profile_after = 0;
		SET fasttime.profile_interval_max = 1; SELECT spin(0); $wt
		EXPLAIN ($opt)
		SELECT count(*) FROM generate_series(1, 40) g WHERE spin(5); $wt");
	is($rc, 0, 'long calls: EXPLAIN ANALYZE runs') or diag($err);
	my ($doc, $n, $all) = (json_of($out), worker_ticks_of($out), ticks_of($out));
	ok(defined $n && $n >= 20, 'long calls: the worker ticked the run (' . ($n // '?') . ' ticks)');
	ok(defined $all && defined $n && $all >= 0.9 * $n - 2,
		'long calls: the backend counted each of the worker\'s ticks (' . ($all // '?') . ' of ' . ($n // '?') . ')');
	SKIP:
	{
		skip 'EXPLAIN (CLOCK_SOURCE) from 18', 2 if $v < 180000;
		# the plan's ticks are the worker's, and the signals between the
		# switch and the move to the worker at the next node call (up to
		# a 5 ms call's, 4 to 6): none twice, and none the backend did
		# not count
		my ($pt, $src) = ($doc->{'Profile Ticks'}, $doc->{'Profile Tick Source'} // '');
		ok(defined $pt && defined $n && ($src ne 'worker' || $pt <= $n + 8),
			"long calls: the plan counts no worker tick twice ($src: " . ($pt // '?') . ' of ' . ($n // '?') . ')');
		ok(defined $pt && defined $all && $pt <= $all,
			"long calls: the plan's ticks are ticks the backend counted (" . ($pt // '?') . ' of ' . ($all // '?') . ')');
	}
	my $fs = find_node($doc->{Plan}, 'Function Scan');
	my ($tf, $ta) = map { $_ // 0 } ($fs->{'Actual Total Time'}, $doc->{Plan}{'Actual Total Time'});
	ok($tf >= 0.9 * $ta && $tf <= $ta, "long calls: the Function Scan holds the run, within its parent ($tf of $ta ms)");
}

# a nested query begun after a call of 30 ms: the worker's ticks during
# that call are the outer run's, taken when the nested run begins, not
# counted for the nested query too (its first transition took them, about
# 30 ticks for a query of a fraction of a millisecond)
{
	my $off = -s $node->logfile;
	my ($rc, $out, $err) = ft_sql($node, "$prof SET fasttime.profile_after = 0;
		SET fasttime.profile_interval_max = 1; LOAD 'auto_explain';
		SET auto_explain.log_min_duration = 0; SET auto_explain.log_analyze = on;
		SET auto_explain.log_nested_statements = on;
		SELECT count(*) FROM generate_series(1, 1000) g WHERE g <= 3 AND spin(30) AND inner_count()");
	is($rc, 0, 'nested: the query runs') or diag($err);
	my $log = ft_log_since($node, $off);
	my @t = $log =~ /then (\d+) ticks of/g;
	diag($log) unless @t == 4;
	# three nested runs, then the outer one
	ok(@t == 4 && $t[3] >= 20, 'nested: the outer run has the ticks (' . join(', ', @t) . ')');
	ok(@t == 4 && (grep { $_ <= 3 } @t[0 .. 2]) == 3,
		'nested: the nested runs do not count the outer call\'s ticks (' . join(', ', @t) . ')');
}

# DROP DATABASE waits for every process, the worker too, to absorb a
# barrier
{
	my ($rc, $out, $err) = ft_sql($node, 'CREATE DATABASE scratch');
	($rc, $out, $err) = ft_sql($node, 'DROP DATABASE scratch', timeout => 60);
	is($rc, 0, 'DROP DATABASE completes with the worker running') or diag($err);
}

# the worker terminated in the middle of a run: the watchdog takes over
{
	my ($out, $err) = ('', '');
	# work that lasts 2.5 s on any machine (rows with md5's work until
	# then, the first one after it ends the scan), so the termination,
	# 0.5 s in, is well inside the run
	my $long = q{SELECT count(*) FROM (SELECT g FROM (SELECT generate_series(1, 2000000000) AS g) s
		WHERE md5(g::text) > '0' AND clock_timestamp() - statement_timestamp() > interval '2.5 s' LIMIT 1) t};
	my $sql = "SET fasttime.node_timing = profile; SET max_parallel_workers_per_gather = 0;\n$wt\n"
	  . "EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON) $long;\n$wt\n";
	# from a file: IPC::Run feeds a scalar's input only while pumped
	my $file = PostgreSQL::Test::Utils::tempdir() . '/terminated.sql';
	PostgreSQL::Test::Utils::append_to_file($file, $sql);
	chmod 0644, $file;
	my $h = IPC::Run::start(
		[ 'psql', '-X', '-At', '-d', $node->connstr('postgres'), '-f', $file ],
		'>', \$out, '2>', \$err, IPC::Run::timeout(300));
	usleep(500_000);
	my ($rc) = ft_sql($node, "SELECT pg_terminate_backend($pid)");
	$h->finish;
	my $doc = json_of($out);
	ok(defined $doc, 'terminated: the run completes') or diag($err);
	my ($ta, $exec) = map { $_ // 0 } ($doc->{Plan}{'Actual Total Time'}, $doc->{'Execution Time'});
	my ($n, $all) = (worker_ticks_of($out) // 0, ticks_of($out) // 0);
	ok($exec >= 2000, "terminated: the run outlasted the termination ($exec ms)");
	ok($n > 0, "terminated: the worker ticked the run before it went ($n ticks)");
	# the watchdog's signals: a tick every 1-4 ms for the rest of the run
	ok($all - $n > 50, 'terminated: timer signals ticked the rest of it (' . ($all - $n) . ' ticks)');
	ok($ta >= 0.9 * $exec && $ta <= $exec + 0.01,
		"terminated: the nodes still hold the whole run ($ta of $exec ms)");

	my $new;
	for (1 .. 100)
	{
		$new = ticker_pid();
		last if defined $new && $new ne $pid;
		usleep(100_000);
	}
	ok(defined $new && $new ne $pid, 'terminated: the postmaster starts the worker again');
	($rc, $out, $err) = ft_sql($node, "$prof $wt
		EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON) $query; $wt");
	ok((worker_ticks_of($out) // 0) > 0, 'terminated: a later run uses the new worker');
}
$node->stop;

# the same server started with the default: no worker, and a session that
# asks for it ticks with signals
{
	my $conf = $node->data_dir . '/postgresql.conf';
	my $text = slurp_file($conf);
	# (every line: FT_TICK_SOURCE=worker adds one of its own)
	$text =~ s/^fasttime\.tick_source = worker\n//mg or die 'no fasttime.tick_source line';
	open(my $fh, '>', $conf) or die $!;
	print $fh $text;
	close $fh;
	my $off = -s $node->logfile;
	$node->start;
	my ($rc, $out, $err) = ft_sql($node, 'SHOW fasttime.tick_source');
	chomp $out;
	is($out, 'signal', 'default: tick_source is signal');
	ok(!defined ticker_pid(), 'default: no worker runs');
	is(worker_state($node), 'not started', 'default: fasttime_status() says the worker is not started');
	($rc, $out, $err) = ft_sql($node, "$prof SET fasttime.tick_source = worker; $wt
		EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON) $query; $wt");
	is($rc, 0, 'default: EXPLAIN ANALYZE with tick_source = worker runs') or diag($err);
	is(worker_ticks_of($out), 0, 'default: no worker ticks the backend');
	ok((ticks_of($out) // 0) >= 20, 'default: the run ticks with signals (' . (ticks_of($out) // '?') . ')');
	# the server log says so, once for the backend, not once more for
	# each parallel worker (a process a query) of its parallel plans
	($rc, $out, $err) = ft_sql($node, "$prof SET fasttime.tick_source = worker;
		EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON) $query; EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON) $query;
		SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
		SET min_parallel_table_scan_size = 0; SET parallel_leader_participation = off;
		EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON) SELECT count(*) FROM big;
		EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON) SELECT count(*) FROM big;");
	is($rc, 0, 'default: parallel plans with tick_source = worker run') or diag($err);
	my @launched = $out =~ /"Workers Launched": (\d+)/g;
	ok(@launched == 2 && !grep({ $_ < 1 } @launched),
		'default: both parallel plans launched workers (' . join(', ', @launched) . ')');
	my @noted = ft_log_since($node, $off) =~ /tick_source is "worker", but this server has no tick worker/g;
	is(scalar @noted, 2, 'default: the log says the worker is missing, once per backend (two backends, '
		  . 'parallel workers not counted)');
	$node->stop;
}

# loaded in a session of a server that does not preload it: signals
{
	my $plain = ft_node('tick_worker_load', preload => 0);
	$plain->start;
	ft_sql($plain, q{CREATE EXTENSION fasttime;
		CREATE TABLE big AS SELECT g AS id, g % 1000 AS k FROM generate_series(1, 1000000) g; VACUUM ANALYZE big;});
	my ($rc, $out, $err) = ft_sql($plain, "LOAD 'fasttime'; $prof $wt
		EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON) $query; $wt");
	is($rc, 0, 'LOAD: EXPLAIN ANALYZE runs') or diag($err);
	is(worker_ticks_of($out), 0, 'LOAD: no worker ticks the backend');
	ok((ticks_of($out) // 0) > 0, 'LOAD: the run ticks with signals');
	$plain->stop;
}

done_testing();
