# The kernel's verdict on the TSC is not read only once: when the kernel's
# watchdog marks the TSC unstable and switches clocksource while the server
# runs, auto stops timing plan nodes with the TSC (within a second, at the
# next query that asks for timing), in running backends, new backends and
# parallel workers alike, and fasttime_status() and SHOW say so; a switch
# back makes auto use the TSC again.  tsc and try_tsc keep the TSC (the
# user asked for it) and their reason says the kernel no longer uses it.
# Nothing else is set: auto as a user has it, with the default node timing
# (profiled, which follows auto's clock too; a one-row plan is too small
# for it to pay, and is timed exactly with that clock).
#
# The switch is faked with a fault-injection build, which reads the
# kernel's clocksource from the file FASTTIME_FAULT_CLOCKSOURCE_FILE names
# instead of sysfs (first line current, second line available); the test
# rewrites it from SQL (COPY ... TO) in the middle of a session.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin/lib";
use FtTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep);
use File::Spec;

my ($fault, $noreason) = ft_fault_install();
plan skip_all => "no fault-injection build: $noreason" unless $fault;

# absolute: the server opens the file from its data directory, and from
# PostgreSQL 17 on tempdir() is relative to the test's working directory
# (TESTDATADIR unset, as test/stage_tap.sh runs it): the server found no
# file, auto said the clocksource "could not be read", and the test
# stopped after its first point
my $dir = File::Spec->rel2abs(PostgreSQL::Test::Utils::tempdir());
my $file = "$dir/clocksource";
sub set_kernel
{
	my ($cur, $avail) = @_;
	open(my $fh, '>', $file) or die "$file: $!";
	print $fh "$cur\n$avail\n";
	close $fh;
}
set_kernel('tsc', 'tsc hpet acpi_pm');

my $node = ft_node('kernel_switch', install_path => $fault);
{
	local $ENV{FASTTIME_FAULT_CLOCKSOURCE_FILE} = $file;
	$node->start;
}
my ($rc, $out, $err) = ft_sql($node, q{
	CREATE EXTENSION fasttime;
	CREATE TABLE big AS SELECT g FROM generate_series(1, 100000) g;
	VACUUM ANALYZE big;
	SELECT current_setting('fasttime.clock_source_status');});
is($rc, 0, 'server up with the fake clocksource file') or diag($err);
if ($out ne 'tsc')
{
	my (undef, $why) = ft_sql($node, "SELECT value FROM fasttime_status() WHERE name = 'auto_reason'");
	note("auto does not choose the TSC here even with the kernel on tsc: $why");
	done_testing();
	exit 0;
}

my $cs = sub {
	my ($cur, $avail) = @_;
	return "COPY (VALUES ('$cur'), ('$avail')) TO '$file';";
};
my $off = -s $node->logfile;

# one session: the kernel switches to hpet and rejects the TSC, then comes back
($rc, $out, $err) = ft_sql($node, join("\n",
	"SELECT 'before:' || current_setting('fasttime.clock_source_status');",
	"EXPLAIN (ANALYZE, COSTS OFF) SELECT 1;",
	"SELECT 'queries0:' || value FROM fasttime_status() WHERE name = 'tsc_timed_queries';",
	$cs->('hpet', 'hpet acpi_pm'),
	"SELECT pg_sleep(1.2);",
	"SELECT 'after:' || current_setting('fasttime.clock_source_status');",
	"SELECT 'kernel:' || value FROM fasttime_status() WHERE name = 'kernel_clocksource';",
	"SELECT 'effective:' || value FROM fasttime_status() WHERE name = 'effective_source';",
	"SELECT 'auto_reason:' || value FROM fasttime_status() WHERE name = 'auto_reason';",
	"EXPLAIN (ANALYZE, COSTS OFF) SELECT 1;",
	"SELECT 'queries1:' || value FROM fasttime_status() WHERE name = 'tsc_timed_queries';",
	"SET fasttime.clock_source = tsc;",
	"SELECT 'tsc:' || current_setting('fasttime.clock_source_status');",
	"SELECT 'tsc_reason:' || value FROM fasttime_status() WHERE name = 'setting_reason';",
	"SET fasttime.clock_source = try_tsc;",
	"SELECT 'try_tsc:' || current_setting('fasttime.clock_source_status');",
	"RESET fasttime.clock_source;",
	$cs->('tsc', 'tsc hpet acpi_pm'),
	"SELECT pg_sleep(1.2);",
	"SELECT 'back:' || current_setting('fasttime.clock_source_status');"));
is($rc, 0, 'the session ran') or diag($err);
my %v = map { /^(\w+):(.*)$/ ? ($1 => $2) : () } split /\n/, $out;
is($v{before}, 'tsc', 'kernel on tsc: auto times with the TSC');
is($v{after}, 'clock_gettime', 'kernel switched to hpet: within a second, auto times with clock_gettime');
is($v{kernel}, 'hpet', 'fasttime_status: kernel_clocksource is the current one');
is($v{effective}, 'clock_gettime', 'fasttime_status: effective_source clock_gettime');
like($v{auto_reason} // '', qr/uses clocksource "hpet".*rejected the TSC/, "fasttime_status: auto_reason says why ($v{auto_reason})");
cmp_ok($v{queries0} // 0, '>=', 1, 'an EXPLAIN ANALYZE before the switch is TSC-timed');
is($v{queries1}, $v{queries0}, 'an EXPLAIN ANALYZE after the switch is not TSC-timed');
is($v{tsc}, 'tsc', 'tsc: still the TSC (the user insisted)');
like($v{tsc_reason} // '', qr/the kernel itself uses clocksource "hpet", not the TSC/,
	'tsc: its reason says the kernel no longer uses the TSC');
is($v{try_tsc}, 'tsc', 'try_tsc: still the TSC');
is($v{back}, 'tsc', 'kernel back on tsc: auto times with the TSC again');

my $log = ft_log_since($node, $off);
my @stop = $log =~ /LOG:  fasttime: the kernel's clocksource changed from "tsc" to "hpet", so fasttime.clock_source = auto no longer times plan nodes with the TSC/g;
is(scalar @stop, 1, 'the switch away is logged once');
like($log, qr/no longer times plan nodes with the TSC\n[^\n]*DETAIL:  Auto chose clock_gettime because the kernel uses clocksource "hpet"/,
	'with the reason as DETAIL');
my @back = $log =~ /LOG:  fasttime: the kernel's clocksource changed from "hpet" to "tsc", so fasttime.clock_source = auto times plan nodes with the TSC again/g;
is(scalar @back, 1, 'the switch back is logged once');

# new backends and parallel workers (which inherited the postmaster's view
# of the kernel from start-up) see the switch at once, without a LOG each
ft_sql($node, $cs->('kvm-clock', 'kvm-clock tsc hpet acpi_pm'));
sleep 1.2;
$off = -s $node->logfile;
($rc, $out, $err) = ft_sql($node, 'SET client_min_messages = debug1; ' . ft_parallel_settings()
	  . ' SHOW fasttime.clock_source_status; EXPLAIN (ANALYZE, FORMAT JSON) SELECT count(*) FROM big;');
like($out, qr/^clock_gettime\n/, 'a new backend after the switch: clock_gettime at once');
my ($launched) = $out =~ /"Workers Launched": (\d+)/;
ok(defined $launched && $launched > 0, "parallel plan ran (" . ($launched // '?') . " workers)");
unlike($err, qr/plan nodes timed with the TSC/, 'neither the leader nor any worker timed nodes with the TSC');
like($err, qr/plan nodes on fasttime's wrappers, timer clock_gettime, profiled, in backend/,
	'the leader profiles with clock_gettime (the default node timing, on auto\'s clock)');
unlike(ft_log_since($node, $off), qr/LOG:  fasttime: the kernel's clocksource changed/,
	'a backend that never used the TSC does not LOG the change');

unlike(slurp_file($node->logfile), qr/terminated by signal|PANIC/, 'no crash');
$node->stop;
done_testing();
