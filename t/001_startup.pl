# Server start with fasttime preloaded: the postmaster logs its choice and
# the reason once; fasttime.clock_source = tsc in postgresql.conf on a
# machine whose TSC is unusable refuses to start (FATAL with the reason),
# try_tsc falls back with the reason logged (and no NOTICE to sessions).  The unusable TSC comes from a
# fault-injection build (FASTTIME_FAULT_FACTS=no_invariant in the
# postmaster's environment) in a private installation.  Everything else is
# left at its default, node timing included (profiled): the start-up line
# is about the clock, and the sessions are a user's.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin/lib";
use FtTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $choice_re = qr/LOG:  fasttime: fasttime\.clock_source = (\w+), plan nodes are timed with (\w+), every call[^\n]*\n[^\n]*DETAIL:  ([^\n]*)/;

# (setting, clock, detail) of each start-up line in a piece of log
sub choice_lines
{
	my ($log) = @_;
	my @r;
	while ($log =~ /$choice_re/g) { push @r, [ $1, $2, $3 ]; }
	return @r;
}

sub logsize { my ($node) = @_; return -s $node->logfile // 0; }

# the counter as messages name it: the TSC on x86-64, the arch counter on
# aarch64
my $counter_re = qr/(?:TSC|arch counter \(CNTVCT_EL0\))/;

# a few sessions, one of them parallel, after which the start-up line
# must still be alone in the log
sub some_sessions
{
	my ($node) = @_;
	ft_sql($node, 'SELECT 1') for 1 .. 3;
	ft_sql($node, 'CREATE TABLE IF NOT EXISTS p AS SELECT g FROM generate_series(1, 50000) g; '
		  . ft_parallel_settings() . ' EXPLAIN ANALYZE SELECT count(*) FROM p');
}

# ---- the normal build, on this machine ----------------------------------
my $node = ft_node('normal');
my $off = logsize($node);
$node->start;
some_sessions($node);
my @lines = choice_lines(ft_log_since($node, $off));
is(scalar @lines, 1, 'auto: the choice is logged exactly once per server start');
is($lines[0][0] // '', 'auto', 'auto: the log line names the setting');
my ($rc, $status) = ft_sql($node, 'SHOW fasttime.clock_source_status');
is($lines[0][1] // '', $status, "auto: the log line names the clock in effect ($status)");
like($lines[0][2] // '', qr/^Auto chose .*\.$/, "auto: DETAIL gives the reason, as a sentence ($lines[0][2])");

ft_sql($node, 'CREATE EXTENSION fasttime');
my ($rc2, $usable) = ft_sql($node, "SELECT value FROM fasttime_status() WHERE name = 'tsc_usable'");
my ($rc3, $why) = ft_sql($node, "SELECT value FROM fasttime_status() WHERE name = 'tsc_usable_reason'");
note("TSC usable on this machine: $usable ($why)");
$node->stop;

$node->append_conf('postgresql.conf', "fasttime.clock_source = tsc\n");
$off = logsize($node);
if ($usable eq 'true')
{
	ok($node->start(fail_ok => 1), 'tsc in postgresql.conf, usable TSC: server starts');
	($rc, $status) = ft_sql($node, 'SHOW fasttime.clock_source_status');
	is($status, 'tsc', 'tsc in postgresql.conf: clock_source_status is tsc');
	($rc, my $setting) = ft_sql($node, 'SHOW fasttime.clock_source');
	is($setting, 'tsc', 'tsc in postgresql.conf: clock_source is tsc');
	@lines = choice_lines(ft_log_since($node, $off));
	ok(@lines == 1 && $lines[0][0] eq 'tsc' && $lines[0][1] eq 'tsc',
		'tsc in postgresql.conf: logged "clock_source = tsc, ... timed with tsc"');
	$node->stop;
}
else
{
	ok(!$node->start(fail_ok => 1), 'tsc in postgresql.conf, unusable TSC: server refuses to start');
	like(ft_log_since($node, $off), qr/FATAL:  fasttime\.clock_source is "tsc" but the $counter_re cannot be used/,
		'tsc in postgresql.conf, unusable TSC: FATAL says why');
	pass('(no clock_source_status to check)');
	pass('(no start-up line to check)');
}

# ---- the fault build: the TSC declared not invariant ---------------------
my ($fault, $noreason) = ft_fault_install();
SKIP:
{
	skip "no fault-injection build: $noreason", 21 unless $fault;

	my $fn = ft_node('fault', install_path => $fault,
		conf => ['fasttime.clock_source = tsc']);
	local $ENV{FASTTIME_FAULT_FACTS} = 'no_invariant';

	# tsc: refused
	$off = logsize($fn);
	ok(!$fn->start(fail_ok => 1), 'fault no_invariant, tsc in postgresql.conf: server refuses to start');
	my $log = ft_log_since($fn, $off);
	like($log, qr/fasttime was built with fault injection/, 'the server ran the fault build');
	like($log, qr/clock fact fault "no_invariant" applied/, 'the fact fault was applied');
	like($log, qr/FATAL:  fasttime\.clock_source is "tsc" but the $counter_re cannot be used on this machine\n[^\n]*DETAIL:  [^\n]*invariant/,
		'FATAL, with a DETAIL naming the invariant TSC');
	like($log, qr/HINT:  Set fasttime\.clock_source to "try_tsc" or "auto" in "[^"]*postgresql\.conf" line \d+\./,
		'HINT says what to set, in which file and line');
	like($log, qr/DETAIL:  The $counter_re is not usable: /, 'DETAIL is a sentence');

	# the same value through ALTER SYSTEM (postgresql.auto.conf): the hint
	# must not send the DBA to postgresql.conf
	$fn->append_conf('postgresql.conf', "fasttime.clock_source = auto\n");
	$fn->append_conf('postgresql.auto.conf', "fasttime.clock_source = 'tsc'\n");
	$off = logsize($fn);
	ok(!$fn->start(fail_ok => 1), 'fault no_invariant, tsc via ALTER SYSTEM: server refuses to start');
	$log = ft_log_since($fn, $off);
	like($log, qr/HINT:  The value was set with ALTER SYSTEM: set fasttime\.clock_source to "try_tsc" or "auto", or remove it, in "[^"]*postgresql\.auto\.conf" line \d+\./,
		'ALTER SYSTEM: the HINT names postgresql.auto.conf');
	unlike($log, qr/HINT:  Set fasttime\.clock_source to "try_tsc" or "auto" in "[^"]*postgresql\.conf"/,
		'ALTER SYSTEM: the HINT does not name postgresql.conf');
	{
		my $auto = slurp_file($fn->data_dir . '/postgresql.auto.conf');
		$auto =~ s/^fasttime\.clock_source = 'tsc'\n//m;
		open(my $fh, '>', $fn->data_dir . '/postgresql.auto.conf') or die $!;
		print $fh $auto;
		close $fh;
	}

	# try_tsc: starts, falls back, says why
	$fn->append_conf('postgresql.conf', "fasttime.clock_source = try_tsc\n");
	$off = logsize($fn);
	ok($fn->start(fail_ok => 1), 'fault no_invariant, try_tsc: server starts');
	some_sessions($fn);
	@lines = choice_lines(ft_log_since($fn, $off));
	is(scalar @lines, 1, 'try_tsc: the choice is logged exactly once');
	ok(@lines && $lines[0][0] eq 'try_tsc' && $lines[0][1] eq 'clock_gettime',
		'try_tsc: logged "clock_source = try_tsc, plan nodes are timed with clock_gettime"');
	like($lines[0][2] // '', qr/invariant/, "try_tsc: DETAIL gives the reason ($lines[0][2])");
	($rc, $status) = ft_sql($fn, 'SHOW fasttime.clock_source_status');
	is($status, 'clock_gettime', 'try_tsc: clock_source_status is clock_gettime');

	# try_tsc's fallback draws no NOTICE, however it is set (a function's
	# SET clause runs the setting's check at every call): SHOW and
	# fasttime_status() say it, and why
	my ($rcn, $outn, $errn) = ft_sql($fn, q{
		CREATE EXTENSION fasttime;
		CREATE FUNCTION timed() RETURNS text LANGUAGE sql
		  SET fasttime.clock_source = try_tsc
		  AS $$SELECT current_setting('fasttime.clock_source_status')$$;
		SELECT timed(); SELECT timed(); SELECT timed();
		SET fasttime.clock_source = try_tsc;
		SELECT value FROM fasttime_status() WHERE name = 'setting_reason';});
	is($rcn, 0, 'try_tsc in a function called 3 times, then SET: runs') or diag($errn);
	unlike($errn, qr/NOTICE|WARNING/, 'try_tsc in a function called 3 times, then SET: no NOTICE');
	like($outn, qr/^clock_gettime\nclock_gettime\nclock_gettime\ntry_tsc fell back to clock_gettime because the $counter_re is not usable: [^\n]*invariant/,
		"try_tsc: the function's calls are timed with clock_gettime, and fasttime_status() says why");
	$fn->stop;

	# auto: the same, reason logged once
	$fn->append_conf('postgresql.conf', "fasttime.clock_source = auto\n");
	$off = logsize($fn);
	$fn->start;
	some_sessions($fn);
	@lines = choice_lines(ft_log_since($fn, $off));
	ok(@lines == 1 && $lines[0][0] eq 'auto' && $lines[0][1] eq 'clock_gettime',
		'auto: logged once, timed with clock_gettime');
	like($lines[0][2] // '', qr/invariant/, "auto: DETAIL gives the reason ($lines[0][2])");
	$fn->stop;

	# without the fault the same build and tsc start (if the TSC is usable)
	delete $ENV{FASTTIME_FAULT_FACTS};
	$fn->append_conf('postgresql.conf', "fasttime.clock_source = tsc\n");
	if ($usable eq 'true')
	{
		ok($fn->start(fail_ok => 1), 'fault build without a fact fault, tsc: starts');
		($rc, $status) = ft_sql($fn, 'SHOW fasttime.clock_source_status');
		is($status, 'tsc', 'fault build without a fact fault: status tsc');
		$fn->stop;
	}
	else
	{
		pass('(TSC unusable here: nothing to compare)') for 1 .. 2;
	}
}

done_testing();
