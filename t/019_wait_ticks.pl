# Profiled timing's tick is a timer signal, and PostgreSQL's SIGALRM
# handler sets the process latch before it runs any timeout's handler:
# every tick wakes a backend that sleeps on its latch.  A profiled query
# that waits -- a Gather whose leader waits for its workers, a row lock
# held by another transaction, pg_sleep -- must not be woken every
# millisecond (every profile_interval) for as long as it waits: a tick
# that finds the backend waiting stops the ticks until the next node call
# starts or returns, which resumes them and credits the time in between
# to the calls under way, exactly (they did not change meanwhile).  So a
# wait of a second takes a tick or two, not hundreds, and the node that
# waits still holds the wait.  Counted with fasttime_status()'s
# profile_ticks, the ticks of the backend.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin/lib";
use FtTest;
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = ft_node('wait_ticks', conf => [ 'autovacuum = off' ]);
$node->start;
ft_sql($node, q{
	CREATE EXTENSION fasttime;
	CREATE TABLE locked (id int PRIMARY KEY, v int);
	INSERT INTO locked SELECT g, g FROM generate_series(1, 100) g;
	CREATE TABLE pt AS SELECT g FROM generate_series(1, 600) g;
	CREATE FUNCTION nap(s float8) RETURNS bool LANGUAGE plpgsql PARALLEL SAFE AS $$
	BEGIN
		PERFORM pg_sleep(s);
		RETURN true;
	END $$;
	VACUUM ANALYZE;
});

my $prof = 'SET fasttime.clock_source = try_tsc; SET fasttime.node_timing = profile;
	SET fasttime.profile_after = 0; SET fasttime.profile_interval = 1;';
my $ticks = q{SELECT 'ticks=' || value FROM fasttime_status() WHERE name = 'profile_ticks';};

# the ticks a statement took in its backend, and its EXPLAIN JSON
sub ticks_of
{
	my ($out) = @_;
	my @t = $out =~ /ticks=(\d+)/g;
	return @t == 2 ? $t[1] - $t[0] : undef;
}

sub json_of
{
	my ($out) = @_;
	my ($j) = $out =~ /(\[\s*\{.*\}\s*\])/s;
	return defined $j ? eval { decode_json($j)->[0] } : undef;
}

# the node of a type in a plan
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

# a wait in pg_sleep, inside the one call of a Result
{
	my ($rc, $out, $err) = ft_sql($node, "SET max_parallel_workers_per_gather = 0; $prof $ticks
		EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON) SELECT pg_sleep(1); $ticks");
	is($rc, 0, 'pg_sleep: EXPLAIN ANALYZE runs') or diag($err);
	my ($n, $doc) = (ticks_of($out), json_of($out));
	ok(defined $n && $n <= 10, 'pg_sleep(1): a tick or so, not one every millisecond (' . ($n // '?') . ' ticks)');
	my ($t, $exec) = ($doc->{Plan}{'Actual Total Time'} // 0, $doc->{'Execution Time'} // 0);
	ok($t >= 990 && $t <= $exec + 0.01, "pg_sleep(1): the Result holds the wait, within the Execution Time ($t of $exec ms)");
}

# a wait of 3.5 s from the switch on, under auto_explain: the query's
# ticks (its profile line's "then N ticks") are those that sampled it
# after the switch, not the backstop that fires once a second of the wait
# (they counted 3 when they were)
{
	my $off = -s $node->logfile;
	my ($rc, $out, $err) = ft_sql($node, "SET max_parallel_workers_per_gather = 0; $prof
		LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0; SET auto_explain.log_analyze = on;
		SELECT count(pg_sleep(CASE WHEN g = 1 THEN 3.5 ELSE 0 END)) FROM generate_series(1, 100) g;");
	is($rc, 0, 'a wait of 3.5 s under auto_explain: the query runs') or diag($err);
	my ($n) = ft_log_since($node, $off) =~ /profiled node timing in the plan of this query: .*?then (\d+) ticks/;
	ok(defined $n && $n <= 2, 'a wait of 3.5 s: the backstops are not the query\'s ticks ('
		  . ($n // '?') . ' ticks)');
}

# a wait for a row lock another transaction holds, in a LockRows node
{
	my $locker = $node->background_psql('postgres');
	$locker->query_until(qr/locked/, "BEGIN; SELECT id FROM locked WHERE id = 7 FOR UPDATE;\n\\echo locked\n");
	my $waiter = $node->background_psql('postgres');
	my $out = $waiter->query_until(qr/started/, "SET max_parallel_workers_per_gather = 0; $prof\n\\echo started\n$ticks
		EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON) SELECT * FROM locked WHERE id = 7 FOR UPDATE;
		$ticks\n\\echo done\n");
	# until the waiter waits for the lock, then a second more
	for (1 .. 600)
	{
		last if $node->safe_psql('postgres',
			"SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'") eq '1';
		usleep(50_000);
	}
	usleep(1_000_000);
	$locker->query_until(qr/committed/, "COMMIT;\n\\echo committed\n");
	$out .= $waiter->query_until(qr/done/, '');
	$waiter->quit;
	$locker->quit;
	my ($n, $doc) = (ticks_of($out), json_of($out));
	ok(defined $n && $n <= 10, 'row lock wait of a second: a tick or so (' . ($n // '?') . ' ticks)') or diag($out);
	my $lr = $doc ? find_node($doc->{Plan}, 'LockRows') : undef;
	my ($t, $exec) = ($lr ? $lr->{'Actual Total Time'} : 0, $doc ? $doc->{'Execution Time'} : 0);
	ok($t >= 900 && $t <= $exec + 0.01, "row lock wait: the LockRows node holds the wait, within the Execution Time ($t of $exec ms)");
}

# a Gather whose leader does not take part: it waits for its workers
{
	my $par = ft_parallel_settings();
	my ($rc, $out, $err) = ft_sql($node, "$par SET parallel_leader_participation = off; $prof $ticks
		EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON) SELECT count(*) FROM pt WHERE nap(0.002); $ticks");
	is($rc, 0, 'Gather: EXPLAIN ANALYZE runs') or diag($err);
	my ($n, $doc) = (ticks_of($out), json_of($out));
	my $g = $doc ? find_node($doc->{Plan}, 'Gather') : undef;
	SKIP:
	{
		skip 'no parallel plan with workers launched', 2 unless $g && ($g->{'Workers Launched'} // 0) > 0;
		ok(defined $n && $n <= 25, "a leader waiting in Gather: a few ticks, not one every millisecond (" . ($n // '?') . ' ticks)');
		my ($t, $exec) = ($g->{'Actual Total Time'}, $doc->{'Execution Time'});
		ok($t >= 0.8 * $exec && $t <= $exec + 0.01, "Gather: the leader's Gather holds the wait, within the Execution Time ($t of $exec ms)");
	}
}

$node->stop;
done_testing();
