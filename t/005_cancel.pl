# Interrupting timed work: statement_timeout and pg_cancel_backend stop a
# long TSC-timed EXPLAIN ANALYZE (serial and parallel) and a long
# fasttime_histogram quickly, and the session stays usable; an ERROR raised
# inside a timed node (division by zero at row N, in the backend, in a
# parallel worker, in nested statements caught by PL/pgSQL) leaves the
# session usable and its next EXPLAIN ANALYZE correct: times present and
# sane, no WARNING that the TSC disagreed.  Every case runs twice: with
# exact timing (fasttime.node_timing = exact, every call timed), and with
# the default node timing, profiled, as a user has it (the long statements
# run past profile_after, so their ticks run when they are interrupted).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin/lib";
use FtTest;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);

my $node = ft_node('cancel');
$node->start;
my ($rc, $status) = ft_sql($node, 'SET fasttime.clock_source = try_tsc; SHOW fasttime.clock_source_status');
plan skip_all => "the TSC is not usable on this machine (status $status)"
  unless $status eq 'tsc';

ft_sql($node, q{
	CREATE EXTENSION fasttime;
	CREATE TABLE big AS SELECT g, g % 1000 AS k FROM generate_series(1, 200000) g;
	CREATE TABLE small AS SELECT g FROM generate_series(1, 1000) g;
	VACUUM ANALYZE big, small;
	CREATE FUNCTION careful(n int) RETURNS int LANGUAGE plpgsql AS $$
	DECLARE r int;
	BEGIN
		SELECT sum(1 / (g - n)) INTO r FROM small WHERE g <= n + 5;
		RETURN r;
	EXCEPTION WHEN division_by_zero THEN
		RETURN -1;
	END $$;
});
my $pid0 = $node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');

# the clock, and the node timing of the pass under way (set below)
my $tsc;
my $serial = 'SET max_parallel_workers_per_gather = 0;';
my $par = ft_parallel_settings();
# workers doing the long part: Gather above the joins (tuple cost kept)
my $par_long = 'SET parallel_setup_cost = 0; SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2;';
my $forever = 'SELECT count(*) FROM small a, small b, small c, small d';    # 1e12 rows
my $forever_par = 'SELECT count(*) FROM big a, small b, small c';    # 2e11 rows
my $check = "EXPLAIN (ANALYZE, FORMAT JSON) SELECT k, count(*) FROM big GROUP BY k ORDER BY k;";

# The part of psql's -At output after a marker line.
sub after_marker
{
	my ($out, $marker) = @_;
	return $out =~ /^\Q$marker\E\n(.*)\z/ms ? $1 : '';
}

# After an interruption or error: the same session's next EXPLAIN ANALYZE
# is correct.
# A WARNING passes only as the machine's own TSC jump, witnessed since
# $case_mark (taken as each case starts; ft_no_warning): its times are then
# checked as measured.
my $case_mark = 0;

sub check_after
{
	my ($what, $out, $err, $marker) = @_;
	my $json = after_marker($out, $marker);
	my $warn = ft_no_warning($err, $case_mark, $what);
	my ($ok, $msg) = ft_check_explain($json, as_measured => $warn == 2);
	ok($ok, "$what: the session's next EXPLAIN ANALYZE has sane times ($msg)");
}

# ---- statement_timeout ---------------------------------------------------
sub timeout_case
{
	my ($what, $setup, $sql) = @_;
	$case_mark = ft_tsc_mark();
	my $t0 = time;
	my ($rc, $out, $err) = $node->psql('postgres',
		"$tsc $setup SET statement_timeout = '300ms';\n$sql;\n"
		  . "RESET statement_timeout;\n\\echo MARK\n$check",
		on_error_stop => 0, extra_params => ['-X']);
	my $took = time - $t0;
	like($err, qr/canceling statement due to statement timeout/, "$what: statement_timeout fired");
	cmp_ok($took, '<', 5, sprintf('%s: stopped quickly (whole session %.2f s)', $what, $took));
	check_after("$what, then", $out, $err, 'MARK');
}

# ---- pg_cancel_backend from another session -------------------------------
my $victim = 0;

sub cancel_case
{
	my ($what, $setup, $sql, $needle) = @_;
	$case_mark = ft_tsc_mark();
	my $app = 'ft_victim_' . ++$victim;
	# statement_timeout only as a backstop, should the cancel go astray
	my $script = "$tsc $setup SET statement_timeout = '20s';\n$sql;\n\\echo MARK\n$check\n";
	my ($in, $out, $err) = ($script, '', '');
	my $h = IPC::Run::start(
		[ 'psql', '-XAtq', '-d', $node->connstr('postgres') . " application_name=$app" ],
		\$in, \$out, \$err,
		IPC::Run::timeout(60));

	# wait until it runs the long statement
	my $running = 0;
	for (1 .. 200)
	{
		$h->pump_nb;    # IPC::Run feeds psql's stdin only when pumped
		$running = $node->safe_psql('postgres',
			"SELECT count(*) FROM pg_stat_activity WHERE application_name = '$app' "
			  . "AND state = 'active' AND query LIKE '%$needle%'");
		last if $running;
		usleep(50_000);
	}
	ok($running, "$what: the statement is running");
	usleep(300_000);
	my $t0 = time;
	my $cancelled = $node->safe_psql('postgres',
		"SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = '$app' AND backend_type = 'client backend'");
	eval { $h->finish; };
	my $took = time - $t0;
	is($cancelled, 't', "$what: pg_cancel_backend sent");
	like($err, qr/canceling statement due to user request/, "$what: cancelled");
	cmp_ok($took, '<', 5, sprintf('%s: stopped quickly (%.2f s to the end of the session)', $what, $took));
	check_after("$what, then", $out, $err, 'MARK');
}

# ---- an ERROR inside a timed node ------------------------------------------
sub error_case
{
	my ($what, $setup, $sql) = @_;
	$case_mark = ft_tsc_mark();
	my ($rc, $out, $err) = $node->psql('postgres',
		"$tsc $setup\n$sql;\n\\echo MARK\n$check",
		on_error_stop => 0, extra_params => ['-X']);
	like($err, qr/ERROR:  division by zero/, "$what: the ERROR is raised");
	check_after("$what, then", $out, $err, 'MARK');
}

# ---- every case, with each node timing ---------------------------------
for my $timing ([ 'exact', 'SET fasttime.node_timing = exact;' ], [ 'default timing (profiled)', '' ])
{
	my ($pass, $setting) = @$timing;
	$tsc = "SET fasttime.clock_source = tsc; $setting";

	timeout_case("$pass, serial EXPLAIN ANALYZE, statement_timeout", $serial, "EXPLAIN ANALYZE $forever");
	timeout_case("$pass, parallel EXPLAIN ANALYZE, statement_timeout", $par_long, "EXPLAIN ANALYZE $forever_par");
	timeout_case("$pass, fasttime_histogram(30), statement_timeout", '',
		'SELECT count(*) FROM fasttime_histogram(30)');

	cancel_case("$pass, serial EXPLAIN ANALYZE, pg_cancel_backend", $serial, "EXPLAIN ANALYZE $forever", 'small d');
	cancel_case("$pass, parallel EXPLAIN ANALYZE, pg_cancel_backend", $par_long, "EXPLAIN ANALYZE $forever_par", 'small c');
	cancel_case("$pass, fasttime_histogram(30), pg_cancel_backend", '',
		'SELECT count(*) FROM fasttime_histogram(30)', 'fasttime_histogram');

	error_case("$pass, division by zero at row 5000, serial", $serial,
		'EXPLAIN ANALYZE SELECT g, 1 / (g - 5000) FROM big ORDER BY 2');
	error_case("$pass, division by zero at row 5000, auto_explain", "$serial LOAD 'auto_explain'; "
		  . 'SET auto_explain.log_min_duration = 0; SET auto_explain.log_analyze = on;',
		'SELECT count(1 / (g - 5000)) FROM big');
	error_case("$pass, division by zero in a parallel worker", $par,
		'EXPLAIN ANALYZE SELECT count(*) FROM big WHERE 1 / (g - 150000) > 0');
	error_case("$pass, division by zero inside a transaction, then ROLLBACK", "$serial BEGIN;",
		"EXPLAIN ANALYZE SELECT 1 / (g - 10) FROM big;\nROLLBACK");

	# nested statements that fail and are caught (subtransactions, not a
	# transaction abort): the outer EXPLAIN ANALYZE stays sane, and so does
	# the next one
	{
		$case_mark = ft_tsc_mark();
		my ($rc, $out, $err) = $node->psql('postgres',
			"$tsc $serial\nEXPLAIN (ANALYZE, FORMAT JSON) SELECT g, careful(g) FROM big WHERE g <= 60;\n"
			  . "\\echo MARK\n$check",
			on_error_stop => 0, extra_params => ['-X']);
		my ($json) = $out =~ /\A(.*?)\nMARK\n/s;
		my ($ok, $msg) = ft_check_explain($json // '',
			as_measured => ($err =~ /WARNING/ && (ft_tsc_explained($case_mark, $err))[0]));
		ok($ok, "$pass, 60 nested statements failing inside PL/pgSQL EXCEPTION blocks: outer times sane ($msg)");
		check_after("$pass, caught nested errors, then", $out, $err, 'MARK');
	}
}

# a fresh session: fasttime's counters say no disagreement happened
# (unless the witness saw the machine's own TSC jump meanwhile: then the
# count is fasttime's right answer, and only its being a number is checked)
$tsc = 'SET fasttime.clock_source = tsc; SET fasttime.node_timing = exact;';
$case_mark = ft_tsc_mark();
my ($rc2, $dis) = ft_sql($node, "$tsc $serial $check SELECT value FROM fasttime_status() WHERE name = 'tsc_disagreements'");
my $jumps = ft_tsc_jumps_since($case_mark);
if ($jumps == 0)
{
	like($dis, qr/\n0\z/, 'no TSC disagreement counted in a fresh session');
}
else
{
	like($dis, qr/\n[0-9]+\z/,
		"TSC disagreements counted in a fresh session: the machine's ($jumps jumps witnessed)");
}

is($node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()'), $pid0,
	'the server never restarted');
unlike(slurp_file($node->logfile), qr/terminated by signal|PANIC/, 'no backend crashed');
$node->stop;
done_testing();
