# A backend ended by FATAL in the middle of a profiled run: a DBA's
# pg_terminate_backend of a runaway EXPLAIN ANALYZE, or of a statement
# auto_explain instruments.  FATAL does not unwind through fasttime's
# executor hooks: the backend exits through the transaction's abort, which
# deletes the run's executor memory (its plan's frames and the profiler's
# record of the run) well before the abort callback resets the profiler,
# and the tick, a timer signal every millisecond, could land in between
# and write into the freed memory (a crash there restarts the whole
# server).  Each shape below is terminated while its profiled run is
# under way: a plain EXPLAIN ANALYZE, a query nested in a profiled one
# under auto_explain (two runs on the profiler's stack), and a cursor's
# MOVE after an earlier FETCH.  The server must not crash and must keep
# answering.  With a fault build (FT_FAULT_INSTALL), a tick is made where
# the window is, in the abort callback before the reset
# (fasttime.fault_tick_at_abort), and must find no profiled run left:
# the memory's own callback has taken the run off the stack (it found 1
# or 2 before that callback did).  A statement_timeout, an ERROR that
# unwinds through the hooks, is the control.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin/lib";
use FtTest;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $forever = 'SELECT count(*) FROM small a, small b, small c, small d';    # 1e12 rows
my $rows = 'SELECT a.g + b.g + c.g + d.g AS s FROM small a, small b, small c, small d';
my $auto = q{LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0;
	SET auto_explain.log_analyze = on; SET auto_explain.log_nested_statements = on;};

# the shapes: what, setup, the statement terminated, a needle of it
my @shapes = (
	[ 'EXPLAIN ANALYZE', '', "EXPLAIN ANALYZE $forever", 'small d' ],
	[
		'auto_explain, a query nested in a profiled one', $auto,
		'SELECT spin(g) FROM generate_series(1, 100000) g', 'spin(g)'
	],
	[
		"auto_explain, a cursor's MOVE after a FETCH", $auto,
		"BEGIN; DECLARE c CURSOR FOR $rows; FETCH 10 FROM c; MOVE FORWARD ALL IN c",
		'MOVE FORWARD'
	]);

sub setup_node
{
	my ($node) = @_;
	ft_sql($node, qq{
		CREATE EXTENSION fasttime;
		CREATE TABLE small AS SELECT g FROM generate_series(1, 1000) g;
		VACUUM ANALYZE small;
		CREATE FUNCTION spin(n int) RETURNS bigint LANGUAGE plpgsql AS \$\$
		DECLARE r bigint;
		BEGIN
			$forever INTO r;
			RETURN r + n;
		END \$\$;
	});
}

# Run the statement in a session of its own, terminate it from another once
# it has run 300 ms (past profile_after: its run profiles), and return
# what the session printed on stderr.
my $victim = 0;

sub terminate
{
	my ($node, $what, $setup, $sql, $needle) = @_;
	my $app = 'ft_term_' . ++$victim;
	my $script = "$setup SET statement_timeout = '30s';\n$sql;\n";
	my ($in, $out, $err) = ($script, '', '');
	my $h = IPC::Run::start(
		[ 'psql', '-XAtq', '-d', $node->connstr('postgres') . " application_name=$app" ],
		\$in, \$out, \$err,
		IPC::Run::timeout(90));
	my $running = 0;
	for (1 .. 400)
	{
		$h->pump_nb;
		$running = $node->safe_psql('postgres',
			"SELECT count(*) FROM pg_stat_activity WHERE application_name = '$app' "
			  . "AND state = 'active' AND query LIKE '%$needle%'");
		last if $running;
		usleep(50_000);
	}
	ok($running, "$what: the statement is running");
	usleep(300_000);
	my $done = $node->safe_psql('postgres',
		"SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity "
		  . "WHERE application_name = '$app' AND backend_type = 'client backend'");
	eval { $h->finish; };
	is($done, 't', "$what: pg_terminate_backend ended the backend");
	like($err, qr/terminating connection due to administrator command/,
		"$what: the session was terminated");
	return $err;
}

sub no_crash
{
	my ($node, $off, $what) = @_;
	my $log = ft_log_since($node, $off);
	unlike($log, qr/terminated by signal|was terminated by exception|reinitializing/,
		"$what: no backend crashed");
	is($node->safe_psql('postgres', 'SELECT 1'), '1', "$what: the server answers");
}

# ---- the product build ------------------------------------------------------
{
	my $node = ft_node('terminate');
	$node->start;
	setup_node($node);
	for my $s (@shapes)
	{
		my ($what, $setup, $sql, $needle) = @$s;
		my $off = -s $node->logfile;
		terminate($node, $what, $setup, $sql, $needle);
		no_crash($node, $off, $what);
	}
	$node->stop;
}

# ---- a fault build: a tick where the window is --------------------------------
my ($fault, $why) = ft_fault_install();
SKIP:
{
	skip "no fault build: $why", 4 * @shapes + 4 unless $fault;
	my $node = ft_node('terminate_fault', install_path => $fault);
	$node->start;
	setup_node($node);
	my $tick = 'SET fasttime.fault_tick_at_abort = on; SET fasttime.tick_source = signal;';
	for my $s (@shapes)
	{
		my ($what, $setup, $sql, $needle) = @$s;
		my $off = -s $node->logfile;
		terminate($node, "$what (fault build)", "$tick $setup", $sql, $needle);
		my $log = ft_log_since($node, $off);
		my @runs = $log =~ /a tick at transaction abort, (\d+) profiled runs on the stack/g;
		is("@runs", '0', "$what: the tick in the abort callback finds no profiled run left");
	}

	# the control: an ERROR unwinds through the executor hooks
	my $off = -s $node->logfile;
	my ($rc, $out, $err) = $node->psql('postgres',
		"$tick SET statement_timeout = '300ms'; EXPLAIN ANALYZE $forever;",
		extra_params => ['-X']);
	like($err, qr/statement timeout/, 'statement_timeout (fault build): the ERROR came');
	my @runs = ft_log_since($node, $off) =~ /a tick at transaction abort, (\d+) profiled runs on the stack/g;
	is("@runs", '0', 'statement_timeout: the tick in the abort callback finds no profiled run left');
	no_crash($node, 0, 'fault build, all cases');
	$node->stop;
}

done_testing();
