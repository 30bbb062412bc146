#!/usr/bin/env bash
# bench/analytic.sh: what each timing mode's EXPLAIN ANALYZE costs on an
# analytic workload: 22 TPC-H-like queries (bench/sql/analytic_queries.sql)
# on a TPC-H-like database generated in SQL (bench/sql/analytic.sql:
# deterministic, the same data on every load, though ANALYZE's sample, and
# so a plan, may differ between loads), each against the plain query.
#
# Modes (--modes, any of; plain is always run, as the reference):
#   plain       the query itself, no EXPLAIN
#               (fasttime.clock_source = clock_gettime)
#   timing_off  EXPLAIN (ANALYZE, TIMING OFF, BUFFERS OFF), clock_source =
#               try_tsc, node_timing = exact: the row counting alone
#   stock       EXPLAIN (ANALYZE, BUFFERS OFF), clock_source = clock_gettime,
#               node_timing = exact: stock instrumentation (as
#               bench/truth.sh's stock)
#   exact       the same, clock_source = try_tsc, node_timing = exact
#   profile     the same, clock_source = try_tsc, node_timing = profile
#   default     the same, clock_source = auto, node_timing at its default,
#               tick_source = signal (what a user gets: profiled, timer
#               signals, clock_gettime() where auto refuses the TSC)
#   profile_a5  profile with profile_after = 5 (a shorter exact prefix)
#   profile_i2  profile with profile_interval = 2 (ticks of 2 ms, then 4)
#   default_worker  default with tick_source = worker (the tick worker
#               instead of timer signals in the backend; the server then
#               starts with it, so that the worker runs)
#
# Method: a throwaway cluster (fasttime preloaded by absolute path from
# --so or from a temporary build of this checkout, nothing installed; jit
# and autovacuum off; shared_buffers 4GB, every table cached; work_mem
# 256MB, so hash joins and sorts stay in memory; no parallel query unless
# --parallel), the data loaded and VACUUM FREEZE ANALYZE'd.  One session
# (bench/analytic.py run) runs everything: round 0 is a warm-up, then
# --rounds rounds; in each round every query (order rotating by round), and
# for each query every mode (order rotating by round and query), each in a
# transaction of its own.  Every mode is timed the same way: on the server,
# clock_timestamp() around a PL/pgSQL EXECUTE of the statement's text (the
# query, its rows kept in SPI's tuple table then dropped, or its EXPLAIN;
# analytic_run() in
# bench/sql/analytic.sql), planning included in every mode, the client's
# round trip in none.  Each EXPLAIN's plan shape is checked against the
# plain query's (EXPLAIN without ANALYZE, in the plain run's transaction)
# and its root's rows against the plain run's row count; its Execution and
# Planning Time are kept.  bench/analytic.py's docstring has the details.
#
# Output (--out, default bench/results/DATE-analytic-pgMAJOR[-N]):
#   report.md    facts (machine, load, sizes), then the tables: per mode
#                the geometric mean over the queries of (mode's min / plain's
#                min) and the worst query; the same with medians; the
#                per-round ratios' spread; per query, every mode
#   summary.csv  one line per query and mode
#   runs.jsonl.gz every run, with its plan
#   modes.json   what SHOW said under each mode; the query texts
#   run.log      progress
#
# Usage: bench/analytic.sh [--rounds R] [--scale S] [--modes "stock exact ..."]
#                          [--queries "Q1 Q6 ..."] [--parallel] [--quick]
#                          [--port P] [--out DIR] [--so PATH]
#   --rounds R   measured rounds (default 5)
#   --scale S    TPC-H scale factor (default 1: 6M lineitems, 1.5M orders,
#                about 1.4 GB with indexes; the plain set ~20 s on a 2-vCPU
#                guest, a round of the five modes ~2 min)
#   --quick      1 round at scale 0.1: a look, ~2 min
#   --parallel   max_parallel_workers_per_gather = 2 (default 0)
#   --so PATH    test this fasttime.so instead of building the checkout
# PG_CONFIG selects PostgreSQL (any version fasttime builds for; the
# profile mode needs a build with fasttime.node_timing).
# FT_ANALYTIC_SHARED_BUFFERS overrides shared_buffers.
# Example:
#   PG_CONFIG=/var/cache/fasttime-ci/pg18/bin/pg_config bench/analytic.sh --port 55691
set -euo pipefail
cmdline="$0${*:+ $*}"
cd "$(dirname "$0")/.."
repo=$(pwd)

rounds=5
scale=1
modes="plain timing_off stock exact profile"
queries=""
parallel=0
port=55691
out=""
so=""
while [ $# -gt 0 ]; do
	case $1 in
		--rounds) rounds=$2; shift ;;
		--scale) scale=$2; shift ;;
		--modes) modes=$2; shift ;;
		--queries) queries=$2; shift ;;
		--parallel) parallel=2 ;;
		--quick) rounds=1; scale=0.1 ;;
		--port) port=$2; shift ;;
		--out) out=$2; shift ;;
		--so) so=$2; shift ;;
		-h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'; exit 0 ;;
		*) echo "bench/analytic.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
((rounds >= 1)) || { echo "bench/analytic.sh: --rounds must be at least 1" >&2; exit 2; }

. test/cluster.sh
major=$("$FT_PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')

if [ -z "$out" ]; then
	out=bench/results/$(date -u +%F)-analytic-pg$major
	if [ -e "$out" ]; then
		i=2
		while [ -e "$out-$i" ]; do i=$((i + 1)); done
		out=$out-$i
	fi
fi
if [ -e "$out/runs.jsonl" ] || [ -e "$out/runs.jsonl.gz" ]; then
	echo "bench/analytic.sh: $out holds a run already" >&2
	exit 2
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
log=$out/run.log
: >"$log"
say() { echo "$*" | tee -a "$log" >&2; }

D=/tmp/fasttime-analytic-$port
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
	build_tmp=$(mktemp -d /tmp/fasttime-analytic-build.XXXXXX)
	say "analytic: building $repo into $build_tmp (PG_CONFIG=$FT_PG_CONFIG)"
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
[ -f "$so" ] || { echo "bench/analytic.sh: no such file: $so" >&2; exit 1; }
rm -rf "$D-lib"
mkdir -p "$D-lib" && chmod 755 "$D-lib"
cp "$so" "$D-lib/fasttime.so" && chmod 755 "$D-lib/fasttime.so"

say "analytic: cluster in $D, port $port, PostgreSQL $major"
ft_cluster_start "$D" "$port" "jit = off" "autovacuum = off" \
	"shared_buffers = '${FT_ANALYTIC_SHARED_BUFFERS:-4GB}'" "work_mem = '256MB'" \
	"max_parallel_workers_per_gather = $parallel" \
	"track_io_timing = off" "log_min_messages = warning" \
	"shared_preload_libraries = '$D-lib/fasttime.so'" \
	"fasttime.tick_source = $(case " $modes " in *" default_worker "*) echo worker ;; *) echo signal ;; esac)"
psql_cmd="$FT_BINDIR/psql -h $D -p $port -U $(ft_owner_name) -d postgres"
say "analytic: loading (scale $scale)"
t0=$(date +%s)
ft_psql "$D" "$port" -q -v scale="$scale" -f bench/sql/analytic.sql >"$out/tables.txt"
load_s=$(($(date +%s) - t0))
fraction=$(ft_psql "$D" "$port" -At -c "SELECT (0.0001 / scale)::numeric(20,10) FROM analytic_scale")
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -n 1)

{
	echo "# bench/analytic.sh, $(date -u '+%F %H:%M') UTC"
	echo
	echo "- Command: \`${PG_CONFIG:+PG_CONFIG=$PG_CONFIG }$cmdline\`"
	echo "- PostgreSQL: $(ft_psql "$D" "$port" -At -c 'SELECT version()')"
	echo "- fasttime: $label (sha256 $(sha256sum "$so" | cut -c1-12))"
	echo "- Machine: ${cpu:-?}, $(nproc) CPUs," \
		"$(grep -qw hypervisor /proc/cpuinfo && echo 'a VM' || echo 'bare metal'), kernel $(uname -r)," \
		"clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)," \
		"$(grep -qw constant_tsc /proc/cpuinfo && echo constant_tsc || echo 'no constant_tsc'), $(grep -qw rdtscp /proc/cpuinfo && echo rdtscp || echo 'no rdtscp')"
	echo "- Scale $scale (Q11's fraction $fraction), loaded in $load_s s; $rounds measured rounds after 1 warm-up;" \
		"modes: $modes; shared_buffers ${FT_ANALYTIC_SHARED_BUFFERS:-4GB}, work_mem 256MB, jit off," \
		"max_parallel_workers_per_gather $parallel"
	echo "- Load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo
	echo '```'
	cat "$out/tables.txt"
	echo '```'
} >"$out/facts.md"

say "analytic: running $rounds rounds"
t0=$(date +%s)
python3 bench/analytic.py run "$out" --psql "$psql_cmd" --queries bench/sql/analytic_queries.sql \
	--fraction "$fraction" --rounds "$rounds" --modes "$modes" --only "$queries" 2>&1 | tee -a "$log"
[ "${PIPESTATUS[0]}" = 0 ] || exit 1
echo "- Load average at end of the rounds: $(cut -d' ' -f1-3 /proc/loadavg); rounds took $(($(date +%s) - t0)) s" >>"$out/facts.md"
ft_cluster_stop "$D"
python3 bench/analytic.py report "$out" | tee -a "$log"
{ cat "$out/facts.md"; echo; cat "$out/report.md"; } >"$out/report.md.tmp" && mv "$out/report.md.tmp" "$out/report.md"
rm -f "$out/facts.md" "$out/tables.txt"
gzip -f "$out/runs.jsonl"
say "analytic: $out/report.md"
