# Profiled timing needs a timeout of PostgreSQL's timeout machinery for its
# tick, and PostgreSQL offers extensions ten slots, whose exhaustion ends
# the session with FATAL in RegisterTimeout.  When every slot is taken
# (the fault build's fasttime.fault_fill_timeouts takes them all just
# before fasttime registers), a profiled query must neither end the
# session nor fail: it is timed exactly, the server log says so once, and
# the session goes on, profiled queries included.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::RealBin/lib";
use FtTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my ($fault, $why) = ft_fault_install();
plan skip_all => "no fault-injection build: $why" unless $fault;

my $node = ft_node('timeout_slots', install_path => $fault);
$node->start;
ft_sql($node, 'CREATE EXTENSION fasttime; CREATE TABLE t AS SELECT g FROM generate_series(1, 20000) g; ANALYZE t;');

my $profiled = 'SET fasttime.node_timing = profile; SET fasttime.profile_after = 0;';
my $query = 'EXPLAIN (ANALYZE, COSTS OFF, FORMAT JSON) SELECT count(*) FROM t';
my $off = -s $node->logfile;

# every slot taken before the first profiled query of the session
my ($rc, $out, $err) = ft_sql($node,
	"SET fasttime.fault_fill_timeouts = on; $profiled
	 $query;
	 $query;
	 SELECT 'session alive';
	 SELECT value FROM fasttime_status() WHERE name = 'profile_ticks';");
is($rc, 0, 'profiled queries with every timeout slot taken run') or diag($err);
like($out, qr/session alive/, 'the session goes on');
unlike($err, qr/FATAL|cannot add more timeout reasons/, 'no FATAL reaches the client');
my @plans = $out =~ /"Actual Rows": (\d+(?:\.\d+)?)/g;
ok(@plans >= 2 && $plans[0] == 1, 'the plan runs to its right result') or diag($out);
like($out, qr/\n0\z/, 'no tick was taken') or diag($out);
my $log = ft_log_since($node, $off);
my @lines = $log =~ /(profiled node timing is not available in this session[^\n]*)/g;
is(scalar(@lines), 1, 'the server log says once that profiled timing is not available');
unlike($log, qr/FATAL/, 'no FATAL in the server log');

# on 18 and later, EXPLAIN (CLOCK_SOURCE) says why the plan was timed exactly
my $v = $node->safe_psql('postgres', 'SHOW server_version_num');
if ($v >= 180000)
{
	($rc, $out, $err) = ft_sql($node,
		"SET fasttime.fault_fill_timeouts = on; $profiled
		 EXPLAIN (ANALYZE, COSTS OFF, CLOCK_SOURCE) SELECT count(*) FROM t;");
	like($out, qr/Node Timing: exact \(profiled timing is not available in this session/,
		'EXPLAIN (CLOCK_SOURCE) says profiled timing is not available') or diag("$out\n$err");
}

# a session where the slots are free profiles as usual
($rc, $out, $err) = ft_sql($node,
	"$profiled SET fasttime.profile_interval = 1;
	 EXPLAIN (ANALYZE, COSTS OFF) SELECT count(*) FROM t a, t b WHERE a.g % 1000 = b.g % 1000 AND a.g < 3000;
	 SELECT value::bigint > 0 FROM fasttime_status() WHERE name = 'profile_ticks';");
is($rc, 0, 'a session with free slots runs profiled') or diag($err);
like($out, qr/\nt\z/, 'and takes ticks') or diag($out);

$node->stop;
done_testing();
