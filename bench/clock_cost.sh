#!/usr/bin/env bash
# bench/clock_cost.sh: EXPLAIN ANALYZE overhead, stock clock_gettime vs fasttime's
# TSC, side by side in one run.
#
# Starts a throwaway cluster (test/cluster.sh) with the installed fasttime
# preloaded, loads four workloads and runs five variants of each,
# interleaved round by round (V1 V2 V3 V4 V5, V1 V2 ...), after warm-up
# rounds.  Workloads:
#   W1  SELECT count(*) FROM lotsarows       the reference case (--rows)
#   W2  hash join + nested loop with an index scan per outer row
#   W3  deep plan: join, sort, window, subquery filter, limit, aggregate
#   W4  count(*) over a fillfactor-10 table, one tuple per page
# Variants:
#   V1  the plain statement
#   V2  EXPLAIN (ANALYZE, TIMING OFF)
#   V3  EXPLAIN (ANALYZE, TIMING ON), fasttime.clock_source = clock_gettime
#   V4  ... with tsc
#   V5  ... with auto
# V2 to V5 also set fasttime.node_timing = exact (bench/sql/harness.sql),
# whatever its default.
# Every run is timed the same way, server-side: clock_timestamp() around a
# PL/pgSQL EXECUTE (bench/sql/harness.sql explains why).  Reports medians,
# the TIMING ON variants' overhead over TIMING OFF, and that overhead per
# timed node call; writes bench/out/runs.csv (every run), summary.csv,
# report.md, plans.txt, overhead.png.
#
# Usage: bench/clock_cost.sh [--rows N] [--rounds N] [--warmup N] [--quick]
#                     [--port P] [--keep] [--no-chart]
#                     [--profile]  (perf record of W1 under V4 afterwards)
# Uses the fasttime installed in pg_config's PostgreSQL (make install).
set -euo pipefail
cd "$(dirname "$0")/.."
start_s=$(date +%s)

rows=5000000
orders=1000000
customers=100000
products=10000
wide=100000
rounds=15
warmup=1
port=5520
keep=0
quick=0
chart=1
profile=0

usage() {
	sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'
	exit "${1:-0}"
}

# --quick first sets small sizes; any explicit option still overrides them
for a in "$@"; do
	if [ "$a" = --quick ]; then
		quick=1
		rows=200000
		orders=50000
		customers=5000
		products=1000
		wide=5000
		rounds=3
	fi
done
need_value() {
	[ $# -ge 2 ] || { echo "bench/clock_cost.sh: $1 needs a value" >&2; exit 2; }
}
while [ $# -gt 0 ]; do
	case $1 in
		--rows) need_value "$@"; rows=$2; shift ;;
		--rounds) need_value "$@"; rounds=$2; shift ;;
		--warmup) need_value "$@"; warmup=$2; shift ;;
		--port) need_value "$@"; port=$2; shift ;;
		--keep) keep=1 ;;
		--quick) ;;
		--no-chart) chart=0 ;;
		--profile) profile=1 ;;
		-h|--help) usage 0 ;;
		*) echo "bench/clock_cost.sh: unknown option $1" >&2; usage 2 >&2 ;;
	esac
	shift
done

for n in "$rows" "$rounds" "$warmup" "$port"; do
	case $n in ''|*[!0-9]*) echo "bench/clock_cost.sh: not a number: $n" >&2; exit 2 ;; esac
done
[ "$rounds" -ge 1 ] || { echo "bench/clock_cost.sh: --rounds must be at least 1" >&2; exit 2; }

out=bench/out
mkdir -p "$out"
log() { echo "bench: $*" >&2; }

# --- prerequisites -----------------------------------------------------------
. test/cluster.sh
pkglibdir=$("$FT_PG_CONFIG" --pkglibdir)
if [ ! -f "$pkglibdir/fasttime.so" ]; then
	echo "bench/clock_cost.sh: fasttime is not installed in $pkglibdir (run make install)" >&2
	exit 1
fi
if [ "$chart" = 1 ] && ! command -v gnuplot >/dev/null; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		log "installing gnuplot-nox for the chart"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q gnuplot-nox \
			>"$out/apt-get.log" 2>&1 || log "apt-get failed; see $out/apt-get.log"
	fi
	command -v gnuplot >/dev/null || { log "no gnuplot: no chart"; chart=0; }
fi

# --- cluster -----------------------------------------------------------------
dir=/tmp/fasttime-bench.$port
cleanup() {
	if [ "$keep" = 1 ]; then
		log "cluster kept running: $FT_BINDIR/psql -h $dir -p $port -U $(ft_owner_name) postgres"
		log "stop it with: . test/cluster.sh; ft_cluster_stop $dir"
	else
		ft_cluster_stop "$dir"
		rm -rf "$dir"
	fi
}
trap cleanup EXIT
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
log "starting a cluster in $dir on port $port"
ft_cluster_start "$dir" "$port" \
	"jit = off" \
	"max_parallel_workers_per_gather = 0" \
	"shared_buffers = '1GB'" \
	"autovacuum = off" \
	"track_io_timing = off" \
	"log_min_messages = warning"
bpsql() { ft_psql "$dir" "$port" -q "$@"; }
bpsql -c "CREATE EXTENSION fasttime"

log "loading: lotsarows $rows, orders $orders, customers $customers, widerows $wide rows"
bpsql -v rows="$rows" -v orders="$orders" -v customers="$customers" \
	-v products="$products" -v wide="$wide" -f bench/sql/setup.sql >"$out/setup.txt"
bpsql -f bench/sql/harness.sql

# --- the machine ---------------------------------------------------------------
status() { bpsql -At -c "SELECT value FROM fasttime_status() WHERE name = '$1'"; }
cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
cpu_family=$(sed -n 's/^cpu family[[:space:]]*: //p' /proc/cpuinfo | head -1)
cpu_modelno=$(sed -n 's/^model[[:space:]]*: //p' /proc/cpuinfo | head -1)
vcpus=$(nproc)
hypervisor=$(status hypervisor)
case $hypervisor in
	KVMKVMKVM) hypervisor="KVM ($hypervisor)" ;;
	"Microsoft Hv") hypervisor="Hyper-V ($hypervisor)" ;;
	VMwareVMware) hypervisor="VMware ($hypervisor)" ;;
	XenVMMXenVMM) hypervisor="Xen ($hypervisor)" ;;
	"") hypervisor="none" ;;
esac
clocksource=$(status kernel_clocksource)
auto_choice=$(status effective_source)
auto_reason=$(status auto_reason)
pg_version=$(bpsql -At -c "SHOW server_version")
kernel=$(uname -r)
rev=$(git describe --always --dirty 2>/dev/null || echo unknown)
# the build under test is whatever make install put there last
so_built=$(date -u -r "$pkglibdir/fasttime.so" +"%Y-%m-%d %H:%M:%S UTC")
so_sum=$(sha1sum "$pkglibdir/fasttime.so" | cut -c1-12)
when=$(date -u +"%Y-%m-%d %H:%M UTC")
machine="$cpu_model (family $cpu_family model $cpu_modelno), $vcpus vCPUs, hypervisor $hypervisor, kernel $kernel, clocksource $clocksource"

log "measuring clock read cost: fasttime_overhead(1)"
overhead_md=$(bpsql -At -F ' | ' -c "
	SELECT '| ' || source, loops, round(ns_per_loop::numeric, 1), median_ns, p99_ns,
		   verdict || ' |'
	FROM fasttime_overhead(1)")

# --- the runs ------------------------------------------------------------------
workloads=(W1 W2 W3 W4)
variants=(V1 V2 V3 V4 V5)
script=$dir/runs.sql
{
	echo '\set ON_ERROR_STOP 1'
	echo '\pset footer off'
	for w in "${workloads[@]}"; do
		for ((r = 1 - warmup; r <= rounds; r++)); do
			if [ "$r" -le 0 ]; then phase=warmup; else phase=measure; fi
			for v in "${variants[@]}"; do
				echo "SELECT bench_measure('$w', '$v', $r, '$phase') \\g /dev/null"
			done
			echo "SELECT format('%s %s %s/%s: %s', '$w', '$phase', $r, $rounds,
				string_agg(variant || ' ' || coalesce(round(ms::numeric, 1)::text, 'n/a'), '  ' ORDER BY variant)
				|| coalesce(format('  (waited for a CPU: %s ms)', round(sum(rq_wait_ms)::numeric, 1)), ''))
				FROM bench_results WHERE workload = '$w' AND round = $r;"
		done
		echo "SELECT bench_count_calls('$w') \\g /dev/null"
	done
} >"$script"
log "running ${#workloads[@]} workloads x ${#variants[@]} variants x ($warmup warm-up + $rounds) rounds"
bpsql -At -f "$script" | sed -u 's/^/bench: /' >&2

if [ "$profile" = 1 ]; then
	bash bench/profile.sh "$dir" "$port" "$out" >&2 || log "profile failed"
fi

# --- results -------------------------------------------------------------------
bpsql -c "\\copy (SELECT workload, variant, round, round(ms::numeric, 3) AS ms, phase,
	round(cpu_ms::numeric, 3) AS cpu_ms, round(rq_wait_ms::numeric, 3) AS rq_wait_ms,
	round(explain_ms::numeric, 3) AS explain_ms, clock, note
	FROM bench_results ORDER BY seq) TO '$out/runs.csv' CSV HEADER"
bpsql -At -c "SELECT '== ' || id || ': ' || title || E' ==\n' || query || E'\n\n' || plan
	FROM bench_workloads ORDER BY id" >"$out/plans.txt"
bpsql -f bench/sql/summary.sql
bpsql -c "\\copy (SELECT * FROM bench_summary ORDER BY workload, variant, metric) TO '$out/summary.csv' CSV HEADER"

md() { bpsql -At -F ' | ' -c "$1"; }
have_cpu=$(bpsql -At -c "SELECT count(*) > 0 FROM bench_summary WHERE metric = 'cpu'")
# the metric of the chart and the targets: on-CPU time where the kernel
# tells us the run-queue wait, wall time otherwise
if [ "$have_cpu" = t ]; then
	metric=cpu
	metric_name="on-CPU time (wall minus run-queue wait)"
else
	metric=wall
	metric_name="wall time"
fi

# one markdown table of overheads, for a metric
overhead_table() {
	local m=$1
	echo "| Workload | nodes | timed node calls | V2 over V1 | stock | tsc | auto | stock ns/call | tsc ns/call | auto ns/call |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	md "SELECT '| ' || w.id, w.nodes, to_char(w.node_calls, 'FM999,999,999,990'),
			max(CASE variant WHEN 'V2' THEN to_char(pct_over_plain, 'FMS9990.0') || ' %' END),
			max(CASE variant WHEN 'V3' THEN to_char(pct_over_off, 'FMS9990.0') || ' %' END),
			max(CASE variant WHEN 'V4' THEN to_char(pct_over_off, 'FMS9990.0') || ' %' END),
			max(CASE variant WHEN 'V5' THEN to_char(pct_over_off, 'FMS9990.0') || ' %' END),
			max(CASE variant WHEN 'V3' THEN to_char(ns_per_call, 'FMS9990.0') END),
			max(CASE variant WHEN 'V4' THEN to_char(ns_per_call, 'FMS9990.0') END),
			max(CASE variant WHEN 'V5' THEN to_char(ns_per_call, 'FMS9990.0') END) || ' |'
		FROM bench_workloads w JOIN bench_summary s ON s.workload = w.id
		WHERE metric = '$m'
		GROUP BY w.id, w.nodes, w.node_calls ORDER BY w.id"
}

{
	echo "## fasttime benchmark: EXPLAIN ANALYZE overhead"
	echo
	echo "- Machine: $machine"
	echo "- PostgreSQL $pg_version; fasttime.so installed $so_built (sha1 $so_sum), tree at $rev; run $when"
	echo "- fasttime.clock_source = auto chose: $auto_choice ($auto_reason)"
	echo "- Sizes: lotsarows $rows rows, orders $orders, customers $customers, widerows $wide (one per page);" \
		"$rounds measured rounds after $warmup warm-up round(s), variants interleaved; medians."
	echo "- Every variant timed the same way, server-side: clock_timestamp() around a PL/pgSQL EXECUTE" \
		"(wall); on-CPU = wall minus the backend's run-queue wait (/proc/self/schedstat)." \
		"No parallel workers, JIT off."
	echo "- Load average at start / end: $load_start / $(cut -d' ' -f1-3 /proc/loadavg)"
	echo
	echo "### Median time (ms, wall), and how long the backend waited for a CPU"
	echo
	echo "| Workload | V1 plain | V2 TIMING OFF | V3 stock clock_gettime | V4 tsc | V5 auto | waited for a CPU |"
	echo "|---|---:|---:|---:|---:|---:|---:|"
	md "SELECT '| ' || w.id || ' ' || w.title,
			max(CASE variant WHEN 'V1' THEN to_char(median_ms, 'FM999990.0') END),
			max(CASE variant WHEN 'V2' THEN to_char(median_ms, 'FM999990.0') END),
			max(CASE variant WHEN 'V3' THEN to_char(median_ms, 'FM999990.0') END),
			max(CASE variant WHEN 'V4' THEN to_char(median_ms, 'FM999990.0') END),
			max(CASE variant WHEN 'V5' THEN to_char(median_ms, 'FM999990.0') END),
			coalesce(to_char(100 * sum(median_wait_ms) / sum(median_ms), 'FM990.0') || ' %', 'n/a') || ' |'
		FROM bench_workloads w JOIN bench_summary s ON s.workload = w.id
		WHERE metric = 'wall'
		GROUP BY w.id, w.title ORDER BY w.id"
	echo
	if [ "$have_cpu" = t ]; then
		echo "### Overhead of TIMING ON over TIMING OFF (V2), on-CPU time"
		echo
		overhead_table cpu
		echo
	fi
	echo "### Overhead of TIMING ON over TIMING OFF (V2), wall time"
	echo
	overhead_table wall
	echo
	echo "Timed node calls: per plan node, rows x loops + loops (one ExecProcNode call per row"
	echo "returned plus one per loop that finds the node exhausted; Hash and bitmap index nodes"
	echo "count loops only), from EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON); the child of a Limit"
	echo "that stops early is over-counted by one call per loop (W2: about 9 % of its total)."
	echo "ns/call = (median V - median V2) / timed node calls: the price of timing one call."
	echo
	echo "### Spread and cross-check (wall)"
	echo
	echo "| Workload | variant | median ms | min | max | (p75-p25)/median | median on-CPU ms | EXPLAIN Execution Time median | nodes timed with |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---|"
	md "SELECT '| ' || s.workload, s.variant, to_char(s.median_ms, 'FM999990.0'),
			to_char(s.min_ms, 'FM999990.0'), to_char(s.max_ms, 'FM999990.0'),
			to_char(s.iqr_pct, 'FM990.0') || ' %',
			coalesce(to_char(c.median_ms, 'FM999990.0'), ''),
			coalesce(to_char(s.median_explain_ms, 'FM999990.0'), ''),
			coalesce(s.clock, '') || ' |'
		FROM bench_summary s
		LEFT JOIN bench_summary c ON (c.workload, c.variant, c.metric) = (s.workload, s.variant, 'cpu')
		WHERE s.metric = 'wall' ORDER BY s.workload, s.variant"
	echo
	echo "### fasttime_overhead(1): cost of one clock read (plus loop)"
	echo
	echo "| source | loops | ns per loop | median ns | p99 ns | verdict |"
	echo "|---|---:|---:|---:|---:|---|"
	echo "$overhead_md"
	echo
	echo "### Targets (W1, $metric_name)"
	echo
	md "SELECT '- tsc (V4): ' || to_char(pct_over_off, 'FMS9990.0') || ' % over TIMING OFF, target <= +10 %: '
			|| CASE WHEN pct_over_off <= 10 THEN 'met' ELSE 'MISSED' END
		FROM bench_summary WHERE workload = 'W1' AND variant = 'V4' AND metric = '$metric'"
	md "SELECT '- stock (V3): ' || to_char(pct_over_off, 'FMS9990.0') || ' % over TIMING OFF, target > +100 %: '
			|| CASE WHEN pct_over_off > 100 THEN 'met' ELSE 'not met (kernel clocksource $clocksource)' END
		FROM bench_summary WHERE workload = 'W1' AND variant = 'V3' AND metric = '$metric'"
} >"$out/report.md"

# --- chart ---------------------------------------------------------------------
if [ "$chart" = 1 ]; then
	bpsql -At -F ' ' -c "
		SELECT '\"' || w.label || '\"',
			max(CASE variant WHEN 'V3' THEN round(pct_over_off::numeric, 1) END),
			max(CASE variant WHEN 'V4' THEN round(pct_over_off::numeric, 1) END),
			max(CASE variant WHEN 'V5' THEN round(pct_over_off::numeric, 1) END)
		FROM bench_workloads w JOIN bench_summary s ON s.workload = w.id
		WHERE metric = '$metric'
		GROUP BY w.id, w.label ORDER BY w.id" >"$out/overhead.dat"
	gnuplot -e "datafile='$out/overhead.dat'; outfile='$out/overhead.png'" \
		-e "metric='median $metric_name'" \
		-e "subtitle='$cpu_model, $vcpus vCPUs, $(echo "$hypervisor" | cut -d' ' -f1), clocksource $clocksource, PG $pg_version, $when'" \
		bench/overhead.gp 2>"$out/gnuplot.log" || log "gnuplot failed; see $out/gnuplot.log"
fi

cat "$out/report.md"
log "files: $out/runs.csv $out/summary.csv $out/report.md $out/plans.txt$([ "$chart" = 1 ] && echo " $out/overhead.png")"
log "total time $(($(date +%s) - start_s)) s"
