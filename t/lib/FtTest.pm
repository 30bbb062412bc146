# Helpers shared by fasttime's TAP tests (t/*.pl).
#
# The tests run against whatever PostgreSQL is first in PATH (the TAP
# modules start the binaries they find there); test/stage_tap.sh puts
# $(pg_config --bindir) first and PERL5LIB at that installation's
# PostgreSQL::Test modules.  A fault-injection build of fasttime, if any,
# lives in a private installation named by FT_FAULT_INSTALL (the directory
# holding its bin/; see test/fault/README.md): it is never the system one.
#
# t/lib/FtTest.pm
package FtTest;

use strict;
use warnings;

use Exporter 'import';
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use File::Basename qw(dirname);
use IPC::Run;

our @EXPORT = qw(ft_node ft_fault_install ft_sql ft_check_explain
  ft_explain_nodes ft_log_since ft_parallel_settings ft_tsc_mark
  ft_tsc_explained ft_tsc_jumps_since ft_no_warning);

# SETs that make the planner choose a parallel plan for any table
our $parallel_settings = join(' ',
	'SET parallel_setup_cost = 0;',
	'SET parallel_tuple_cost = 0;',
	'SET min_parallel_table_scan_size = 0;',
	'SET min_parallel_index_scan_size = 0;',
	'SET max_parallel_workers_per_gather = 2;');

sub ft_parallel_settings { return $parallel_settings; }

# The private installation holding a fault-injection build, or undef (with
# the reason as second value) when there is none.
sub ft_fault_install
{
	my $dir = $ENV{FT_FAULT_INSTALL};
	return (undef, 'FT_FAULT_INSTALL is not set (test/stage_tap.sh builds one)')
	  unless defined $dir && $dir ne '';
	return (undef, "FT_FAULT_INSTALL=$dir has no bin/postgres")
	  unless -x "$dir/bin/postgres";
	return ($dir, undef);
}

# A new, initialized (not started) node.  Options:
#   preload => 0|1        shared_preload_libraries = fasttime (default 1)
#   install_path => DIR   a private installation (fault build); fasttime
#                         is then preloaded by absolute path from it
#   conf => [lines]       more postgresql.conf lines
# With FT_TICK_SOURCE=worker in the environment (test/stage_tap.sh's
# worker pass), a preloading node starts with the tick worker: the
# profiled tests then run on its ticks, unless their own lines say
# otherwise (those come after).
sub ft_node
{
	my ($name, %opt) = @_;
	my $preload = exists $opt{preload} ? $opt{preload} : 1;
	my @new = ($name);
	push @new, install_path => $opt{install_path} if $opt{install_path};
	my $node = PostgreSQL::Test::Cluster->new(@new);
	$node->init;

	my $lib = 'fasttime';
	if ($opt{install_path})
	{
		my $pkglib = `$opt{install_path}/bin/pg_config --pkglibdir`;
		chomp $pkglib;
		die "private installation $opt{install_path} has no fasttime.so in $pkglib"
		  unless -f "$pkglib/fasttime.so";
		$lib = "$pkglib/fasttime";
	}
	my @conf = (
		'max_worker_processes = 8',
		'max_parallel_workers = 8',
		'max_parallel_workers_per_gather = 2',
		'fsync = off',
		'jit = off',
		"log_line_prefix = '%m [%p] %b '");
	push @conf, "shared_preload_libraries = '$lib'" if $preload;
	my $ts = lc($ENV{FT_TICK_SOURCE} // '');
	die "FT_TICK_SOURCE must be signal or worker (got '$ENV{FT_TICK_SOURCE}')"
	  if $ts ne '' && $ts !~ /^(signal|worker)$/;
	push @conf, "fasttime.tick_source = $ts" if $preload && $ts ne '';
	push @conf, @{ $opt{conf} } if $opt{conf};
	$node->append_conf('postgresql.conf', join("\n", @conf) . "\n");
	return $node;
}

# Run SQL in a fresh session; returns (exit code, stdout, stderr).
sub ft_sql
{
	my ($node, $sql, %opt) = @_;
	my ($out, $err) = ('', '');
	my $rc = $node->psql(
		$opt{db} // 'postgres', $sql,
		stdout => \$out,
		stderr => \$err,
		on_error_stop => 1,
		extra_params => ['-X'],
		$opt{timeout} ? (timeout => $opt{timeout}) : ());
	return ($rc, $out, $err);
}

# The server log from byte offset $off on.
sub ft_log_since
{
	my ($node, $off) = @_;
	my $log = slurp_file($node->logfile);
	return substr($log, $off // 0);
}

# Every plan node of EXPLAIN (ANALYZE, FORMAT JSON) output, each as
# [node hash, processes summed there]; dies if it is not such output.
sub ft_explain_nodes
{
	my ($text) = @_;
	my $doc = decode_json($text);
	my $top = $doc->[0];
	die "no Plan in EXPLAIN output" unless $top->{Plan};
	my @nodes;
	my $walk;
	$walk = sub {
		my ($n, $procs) = @_;
		push @nodes, [ $n, $procs ];
		my $inner = $procs;
		$inner += ($n->{'Workers Launched'} // 0)
		  if ($n->{'Node Type'} // '') =~ /^Gather( Merge)?$/;
		$walk->($_, $inner) for @{ $n->{Plans} // [] };
	};
	$walk->($top->{Plan}, 1);
	return ($top, @nodes);
}

# Sanity of EXPLAIN (ANALYZE, FORMAT JSON) node times (the rules of
# test/fault/check_explain.py): no negative time, startup <= total, no node
# above the Execution Time times the processes summed at it (unless
# as_measured => 1: the machine's TSC jumped, see ft_no_warning, and times
# are as measured).  Returns (1, summary) or (0, what is wrong).
sub ft_check_explain
{
	my ($text, %opt) = @_;
	my $slack = 0.01;    # EXPLAIN rounds to 3 decimals
	my ($top, @nodes) = eval { ft_explain_nodes($text) };
	return (0, "not EXPLAIN ANALYZE JSON: $@ " . substr($text, 0, 200))
	  unless $top;
	my $exec = $top->{'Execution Time'};
	return (0, 'no Execution Time') unless defined $exec;
	my (@bad, $timed);
	$timed = 0;
	for my $e (@nodes)
	{
		my ($n, $procs) = @$e;
		my $name = $n->{'Node Type'} // '?';
		my ($s, $t, $loops) = @{$n}{ 'Actual Startup Time', 'Actual Total Time', 'Actual Loops' };
		next unless defined $s && defined $t;
		$timed++;
		push @bad, "$name: negative time ($s..$t)" if $s < 0 || $t < 0;
		push @bad, "$name: startup $s > total $t" if $s > $t + $slack;
		my $sum = $t * ($loops || 0);
		next if $opt{as_measured};
		push @bad, sprintf('%s: %.3f ms x %g loops > %.3f ms x %d processes',
			$name, $t, $loops, $exec, $procs)
		  if $sum > $exec * $procs + $slack * ($loops > 1 ? $loops : 1);
	}
	push @bad, 'no node has times' if !$timed && !$opt{allow_untimed};
	return (0, join('; ', @bad[ 0 .. ($#bad < 3 ? $#bad : 3) ])) if @bad;
	return (1, sprintf('%d timed nodes, execution %.3f ms', $timed, $exec));
}

# The witness of the machine's own TSC jumps (test/tsc_watch.c, started by
# test/stage_tap.sh, its log named by FT_TSC_WATCH_LOG): a mark taken
# before some statements ...
sub ft_tsc_mark
{
	my $f = $ENV{FT_TSC_WATCH_LOG};
	return (defined $f && -e $f) ? (-s $f // 0) : 0;
}

# ... and whether the WARNINGs in their output are the machine's: every
# one fasttime's "the TSC disagreed", each matching jumps witnessed since
# the mark (test/tsc_explained.py).  Returns (1, why) or (0, why not).
sub ft_tsc_explained
{
	my ($mark, $text) = @_;
	my $f = $ENV{FT_TSC_WATCH_LOG} // '/nonexistent';
	# test/stage_tap.sh copies it beside t/
	my $script = dirname(__FILE__) . '/../../test/tsc_explained.py';
	my $why = '';
	my $ok = IPC::Run::run([ 'python3', $script, $f, $mark ], '<', \$text, '>', \$why, '2>&1');
	chomp $why;
	return ($ok ? 1 : 0, $why);
}

# How many jumps of the machine's TSC the witness logged since $mark (0
# with no witness): a counter of disagreements that cannot be matched
# against a WARNING's DETAIL may be nonzero only where this is.
sub ft_tsc_jumps_since
{
	my ($mark) = @_;
	my $f = $ENV{FT_TSC_WATCH_LOG};
	return 0 unless defined $f && -e $f;
	open(my $fh, '<', $f) or return 0;
	seek($fh, $mark, 0);
	my $n = grep { /^jump \S+ \S+$/ } <$fh>;
	close($fh);
	return $n;
}

# The check "no WARNING" on a statement's stderr: passes with no WARNING,
# or when the only WARNINGs are the machine's TSC jumps, witnessed since
# $mark (then fasttime was right to warn).  Returns 0 (failed), 1 (no
# WARNING) or 2 (the machine's jump: check times as measured).
sub ft_no_warning
{
	my ($err, $mark, $desc) = @_;
	if ($err !~ /WARNING/)
	{
		ok(1, "$desc: no WARNING");
		return 1;
	}
	my ($ok, $why) = ft_tsc_explained($mark, $err);
	if ($ok)
	{
		ok(1, "$desc: no WARNING but the machine's ($why)");
		return 2;
	}
	ok(0, "$desc: no WARNING");
	diag($err);
	diag("not the machine's TSC: $why");
	return 0;
}

1;
