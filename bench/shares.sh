#!/usr/bin/env bash
# bench/shares.sh: the absolute reference (issue 42, item 1).  Where does
# the plain query spend its time, node by node, and does each timing mode's
# EXPLAIN ANALYZE say the same?
#
# perf's picture: perf record (cpu-clock, DWARF call graphs) of the plain,
# uninstrumented query, each sample given to the innermost plan node on its
# stack.  A mode's picture: EXPLAIN (ANALYZE, VERBOSE, FORMAT JSON) of the
# same query, each node's exclusive time.  Both as shares of the executor
# run (samples and time outside every plan node left out), per node and as
# one distance per query: total variation in points, 0 = the same picture.
# The rules (which functions name which node, exclusive times under
# SubPlans, CTEs and Gather) are in bench/shares.py's docstring.
#
# Modes (--modes, any of):
#   stock    fasttime.clock_source = clock_gettime, node_timing = exact:
#            stock instrumentation
#   on       exact timing, TSC, both reads ordered (ordered_reads = on,
#            the default)
#   off      exact timing, TSC, plain reads (ordered_reads = off)
#   profile  fasttime.node_timing = profile (TSC)
#   default  what a user gets (clock_source auto, profiled timing, timer
#            signals; tick_source = signal is set, since the server starts
#            the tick worker when default_worker is asked for)
#   default_worker  the defaults with fasttime.tick_source = worker (the
#            server then starts with it, so that the worker runs)
# The TSC modes use clock_source = try_tsc, and the exact ones (on, off)
# node_timing = exact (the report shows what SHOW and EXPLAIN
# (CLOCK_SOURCE) said under each mode).
#
# Shapes: bench/sql/shares.sql (count, filter, arith, hashjoin, sort,
# nestloop, subplan, parallel, membound, memoize, mergejoin, cte, window,
# material, bitmap, append, gathermerge, incrsort, projectset, hashagg,
# recursive, topn); each shape's settings are SET LOCAL in every
# configuration, the plain run included, and every run's plan is checked against the
# plain query's.
#
# Pairs (--shapes "mem_leaf hash_probe ..."; bench/sql/shares.sql): truth
# pairs of bench/sql/truth.sql rebuilt on these tables, a base and a work
# query each, run only when named.  The report then opens with each pair's
# err and leak as bench/truth.py judges them, for perf's plain runs beside
# each mode: how much of the added time the uninstrumented query itself
# spends outside the target (bench/shares.py, pair_report).
#
# Method: a throwaway cluster (fasttime preloaded by absolute path from a
# temporary build of this checkout, nothing installed; jit, autovacuum
# off; shared_buffers 3GB so every table stays cached), the data loaded
# and VACUUM FREEZE ANALYZE'd.  One session runs everything: round 0 is a
# warm-up; then in each round every shape (order rotating by round), and
# for each shape the plain run under perf and every mode's EXPLAIN (order
# rotating by round), each in a transaction of its own.  perf attaches to
# the backend and the postmaster (so parallel workers forked during the
# plain run are followed), its events enabled only around the plain query.
# Rounds alternate between set A (odd) and set B (even): every figure is
# measured twice in the same interleaving, and the report puts the two
# beside it as its noise.
#
# Output (--out, default bench/results/DATE-shares-pgMAJOR[-N]):
#   report.md    the tables (bench/shares.py report), after facts.md
#   summary.csv  one line per shape and mode: distance, per set, self
#   runs.jsonl   every plan (gzipped at the end)
#   stacks.jsonl perf's samples, as counts of plan-node paths
#   run.log      progress
#
# Analytic plans (--analytic): instead of these shapes, the 22 TPC-H-like
# queries of bench/analytic.sh (bench/sql/analytic_queries.sql, on the
# data of bench/sql/analytic.sql at --scale, TPC-H's scale factor; work_mem
# 256MB, serial, shared_buffers 4GB), each a shape (Q1 ... Q22): how each
# mode's picture of real plans compares with perf's.  Their plans may hold
# nodes the stack cannot tell apart (two index scans of one nested loop's
# sides, two under one BitmapAnd); those samples are counted as
# "ambiguous", and nodes that share more than 2 % of a query's samples so
# are one group in every picture when distances are taken (the report
# lists the groups); fewer such samples are left out.  A query with more
# than 20 % of its samples left out or unmatched is shown but not counted
# in the median and the worst (bench/shares.py).
#
# Usage: bench/shares.sh [--rounds R] [--quick] [--shapes "count sort ..."]
#                        [--modes "stock on off profile"] [--freq HZ]
#                        [--reps N] [--stack BYTES] [--scale S] [--port P] [--out DIR]
#                        [--so PATH] [--keep-perf] [--analytic]
#   --rounds R   measured rounds, even (default 10: 5 per set; ~12 min on
#                18 on a loaded 2-vCPU guest, ~55 s a round)
#   --quick      2 rounds (1 per set) at scale 0.5: a look, ~3 min
#   --freq HZ    perf's sampling rate (default 4000)
#   --reps N     plain runs per shape and round, back to back under perf
#                (default 2: more samples, perf's picture being the noisiest)
#   --stack B    bytes of user stack copied per sample (default 16384)
#   --scale S    data size factor (default 1: 4M ints, 1M orders, ...)
#   --so PATH    test this fasttime.so instead of building the checkout
# PG_CONFIG selects PostgreSQL; it needs a build with symbols (--enable-debug
# or a -dbgsym package): static executor functions must have names.  The
# function-to-node rules are written for 18's executor and hold for 15's
# (bench/shares.py).  Node times are taken unrounded from
# bench/shares_explain.c, built here against PG_CONFIG and LOADed into the
# session (18+: an EXPLAIN per-node hook; 15-17: a NOTICE at ExecutorEnd).
# Examples:
#   PG_CONFIG=/var/cache/fasttime-ci/pg18/bin/pg_config bench/shares.sh
#   PG_CONFIG=/tmp/pg15dbg/bin/pg_config bench/shares.sh --port 5542
#       (15 built with --enable-debug from the Debian source: the package
#       is stripped and has no -dbgsym here)
set -euo pipefail
cmdline="$0${*:+ $*}"
cd "$(dirname "$0")/.."
repo=$(pwd)

rounds=10
modes="stock on off profile"
shapes=""
freq=4000
reps=2
stack=16384
scale=1
port=5541
out=""
so=""
keep=""
analytic=""
while [ $# -gt 0 ]; do
	case $1 in
		--rounds) rounds=$2; shift ;;
		--quick) rounds=2; scale=0.5 ;;
		--shapes) shapes=$2; shift ;;
		--modes) modes=$2; shift ;;
		--freq) freq=$2; shift ;;
		--reps) reps=$2; shift ;;
		--stack) stack=$2; shift ;;
		--scale) scale=$2; shift ;;
		--port) port=$2; shift ;;
		--out) out=$2; shift ;;
		--so) so=$2; shift ;;
		--keep-perf) keep=--keep ;;
		--analytic) analytic=1 ;;
		-h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'; exit 0 ;;
		*) echo "bench/shares.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
if ((rounds < 2 || rounds % 2)); then
	echo "bench/shares.sh: --rounds must be even and at least 2 (sets A and B alternate)" >&2
	exit 2
fi
command -v perf >/dev/null || { echo "bench/shares.sh: perf is not installed" >&2; exit 1; }

. test/cluster.sh
major=$("$FT_PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
postgres_bin=$FT_BINDIR/postgres
if ! nm "$postgres_bin" 2>/dev/null | grep ' t ExecAgg$' >/dev/null; then
	echo "bench/shares.sh: $postgres_bin has no symbol for ExecAgg (stripped, no debug symbols):" \
		"perf cannot name the executor's functions. Use a build with --enable-debug or install its -dbgsym package." >&2
	[ -n "${FT_SHARES_FORCE:-}" ] || exit 1
fi

if [ -z "$out" ]; then
	out=bench/results/$(date -u +%F)-shares${analytic:+-analytic}-pg$major
	if [ -e "$out" ]; then
		i=2
		while [ -e "$out-$i" ]; do i=$((i + 1)); done
		out=$out-$i
	fi
fi
if [ -e "$out/runs.jsonl" ] || [ -e "$out/runs.jsonl.gz" ] || [ -e "$out/stacks.jsonl" ]; then
	echo "bench/shares.sh: $out holds a run already" >&2
	exit 2
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
log=$out/run.log
: >"$log"
say() { echo "$*" | tee -a "$log" >&2; }

D=/tmp/fasttime-shares-$port
build_tmp=""
cleanup() {
	ft_cluster_stop "$D"
	rm -rf "$D" "$D-lib"
	[ -n "$build_tmp" ] && rm -rf "$build_tmp"
	return 0
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

label=""
if [ -z "$so" ]; then
	build_tmp=$(mktemp -d /tmp/fasttime-shares-build.XXXXXX)
	say "shares: building $repo into $build_tmp (PG_CONFIG=$FT_PG_CONFIG)"
	tar -C "$repo" --exclude=./.git --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
		--exclude=./bench/results -cf - . | tar -C "$build_tmp" -xf -
	if ! make -C "$build_tmp" -s -j"$(nproc)" PG_CONFIG="$FT_PG_CONFIG" with_llvm=no \
		>"$build_tmp/build.log" 2>&1; then
		cat "$build_tmp/build.log" >&2
		exit 1
	fi
	so=$build_tmp/fasttime.so
	label="checkout $(git -C "$repo" describe --always --dirty 2>/dev/null || echo '?') built here"
else
	case $so in /*) ;; *) so=$repo/$so ;; esac
	label=$so
fi
[ -f "$so" ] || { echo "bench/shares.sh: no such file: $so" >&2; exit 1; }
rm -rf "$D-lib"
mkdir -p "$D-lib" && chmod 755 "$D-lib"
cp "$so" "$D-lib/fasttime.so" && chmod 755 "$D-lib/fasttime.so"
# bench/shares_explain.c: the unrounded node times (why: there)
mkdir -p "$D-lib/build"
cp bench/shares_explain.c "$D-lib/build/"
printf 'MODULES = shares_explain\nPGXS := $(shell $(PG_CONFIG) --pgxs)\ninclude $(PGXS)\n' >"$D-lib/build/Makefile"
if ! make -C "$D-lib/build" -s PG_CONFIG="$FT_PG_CONFIG" with_llvm=no >"$D-lib/build/build.log" 2>&1; then
	cat "$D-lib/build/build.log" >&2
	exit 1
fi
cp "$D-lib/build/shares_explain.so" "$D-lib/" && chmod 755 "$D-lib/shares_explain.so"
load=$D-lib/shares_explain.so

shared_buffers=${FT_SHARES_SHARED_BUFFERS:-3GB}
[ -n "$analytic" ] && [ -z "${FT_SHARES_SHARED_BUFFERS:-}" ] && shared_buffers=4GB
say "shares: cluster in $D, port $port, PostgreSQL $major"
ft_cluster_start "$D" "$port" "jit = off" "autovacuum = off" \
	"shared_buffers = '$shared_buffers'" "max_parallel_workers_per_gather = 0" \
	"track_io_timing = off" "log_min_messages = warning" \
	"shared_preload_libraries = '$D-lib/fasttime.so'" \
	"fasttime.tick_source = $(case " $modes " in *" default_worker "*) echo worker ;; *) echo signal ;; esac)"
pm=$(head -n 1 "$D/data/postmaster.pid")
psql_cmd="$FT_BINDIR/psql -h $D -p $port -U $(ft_owner_name) -d postgres"
say "shares: loading (scale $scale${analytic:+, analytic})"
if [ -z "$analytic" ]; then
	ft_psql "$D" "$port" -q -v scale="$scale" -f bench/sql/shares.sql >"$out/tables.txt"
else
	# shares.sql's tables at a token size (its shapes table is the one
	# read), then the analytic data and its 22 queries as the shapes
	ft_psql "$D" "$port" -q -v scale=0.01 -f bench/sql/shares.sql >/dev/null
	ft_psql "$D" "$port" -q -v scale="$scale" -f bench/sql/analytic.sql >"$out/tables.txt"
	fraction=$(ft_psql "$D" "$port" -At -c "SELECT (0.0001 / scale)::numeric(20,10) FROM analytic_scale")
	python3 - "$fraction" <<'PY' | ft_psql "$D" "$port" -q
import sys
sys.path.insert(0, "bench")
from analytic import read_queries
print("DELETE FROM shares_pairs; DELETE FROM shares_shapes;")
for name, text in read_queries("bench/sql/analytic_queries.sql", sys.argv[1]):
    assert "$aq$" not in text
    print("INSERT INTO shares_shapes VALUES ('%s', %d, 'TPC-H-like %s', 'work_mem=256MB', $aq$%s$aq$);"
          % (name, int(name[1:]), name, text))
PY
fi

{
	echo "# bench/shares.sh, $(date -u '+%F %H:%M') UTC"
	echo
	echo "- Command: \`${PG_CONFIG:+PG_CONFIG=$PG_CONFIG }$cmdline\`"
	echo "- PostgreSQL: $(ft_psql "$D" "$port" -At -c 'SELECT version()')"
	echo "- fasttime: $label (sha256 $(sha256sum "$so" | cut -c1-12))"
	echo "- Machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs," \
		"$(grep -qw hypervisor /proc/cpuinfo && echo 'a VM' || echo 'bare metal'), kernel $(uname -r)," \
		"clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)," \
		"$(grep -qw constant_tsc /proc/cpuinfo && echo constant_tsc || echo 'no constant_tsc'), $(grep -qw rdtscp /proc/cpuinfo && echo rdtscp || echo 'no rdtscp')"
	echo "- perf: $(perf --version), cpu-clock at $freq Hz, --call-graph dwarf,$stack; the plain query $reps times a round"
	echo "- Rounds: $rounds measured (sets A and B alternating) after 1 warm-up; scale $scale;" \
		"modes: $modes; shared_buffers $shared_buffers, jit off${analytic:+; the analytic queries}"
	echo "- Load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo
	echo '```'
	cat "$out/tables.txt"
	echo '```'
} >"$out/facts.md"

say "shares: running $rounds rounds"
python3 bench/shares.py run "$out" --psql "$psql_cmd" --pm "$pm" --rounds "$rounds" \
	--shapes "$shapes" --modes "$modes" --freq "$freq" --reps "$reps" --stack "$stack" --load "$load" 2>&1 | tee -a "$log"
[ "${PIPESTATUS[0]}" = 0 ] || exit 1
echo "- Load average at end of the rounds: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/facts.md"
ft_cluster_stop "$D"
say "shares: reducing perf's samples to plan-node paths"
python3 bench/shares.py collapse "$out" $keep 2>&1 | tee -a "$log"
[ "${PIPESTATUS[0]}" = 0 ] || exit 1
python3 bench/shares.py report "$out" | tee -a "$log"
{ cat "$out/facts.md"; echo; cat "$out/report.md"; } >"$out/report.md.tmp" && mv "$out/report.md.tmp" "$out/report.md"
rm -f "$out/facts.md" "$out/tables.txt"
gzip -f "$out/runs.jsonl"
[ -n "$keep" ] || rmdir "$out/perf" 2>/dev/null || true
say "shares: $out/report.md"
