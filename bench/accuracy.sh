#!/usr/bin/env bash
# bench/accuracy.sh: how close profiled node timing (fasttime.node_timing =
# profile) comes to exact node timing (node_timing = exact, with
# fasttime.ordered_reads at its default, on) on analytic plans, against
# the check's own noise floor.  (It used to compare exact timing's read
# disciplines, ordered and plain, with each other, and per-call sampled
# timing, since removed, with exact timing.)
#
# Workloads: W1-W4 (bench/sql/setup.sql), W5 (heavy-tailed per-call costs,
# bench/sql/tail.sql) and W6-W10 (bench/sql/shapes.sql: a nested loop with
# a skewed inner side, a correlated SubPlan in a join qual, hash/sort/
# aggregate builds, an inner index scan rescanned 300,000 times, a LIMIT
# cutting a hash join short).  Each run of each workload executes, in one
# server and in an order that rotates from run to run,
#   exact       node_timing = exact (the reference)
#   profile     node_timing = profile, at its defaults (exact for the
#               first 20 ms, then ticks of 1 ms lengthening to 4 ms)
#   profile_cg  profile, with clock_source = clock_gettime
#   exact2      exact again: the check's own noise floor
# each as EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON) in a transaction of
# its own with clock_source = try_tsc unless said otherwise, R runs after a
# warm-up.  bench/accuracy.py then judges the target: on plans of >= 200 ms,
# per node holding >= 10 % of the plan's time whose calls take >= 1 us,
# profiled timing within +-5 % of exact timing's mean.  Per judged node:
# bias (mean against mean) and one run's error (root mean square of each
# run's deviation from the exact mean) of profile, profile_cg and the floor
# (exact2); per mode, how often a child read longer than its parent and
# whether rows and loops were the same in every run; and the nodes the
# criterion left out, with why; the same judgement on each node's share of
# its own run, where the host's speed between runs cancels.  Output:
# bench/out/accuracy-pgMAJOR.md, and the plans in bench/out/accuracy-pgMAJOR-plans/.
#
# Usage: bench/accuracy.sh [--runs R] [--workloads "W1 W5"]
#                          [--port P] [--rows N]
set -euo pipefail
# the command line, for the report
command=bench/accuracy.sh
for a in "$@"; do
	case $a in
		*[!A-Za-z0-9_./=:-]*) command+=" \"$a\"" ;;
		*) command+=" $a" ;;
	esac
done
cd "$(dirname "$0")/.."

runs=5
workloads="W1 W2 W3 W4 W5 W6 W7 W8 W9 W10"
port=5532
rows=5000000
while [ $# -gt 0 ]; do
	case $1 in
		--runs) runs=$2; shift ;;
		--workloads) workloads=$2; shift ;;
		--port) port=$2; shift ;;
		--rows) rows=$2; shift ;;
		-h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'; exit 0 ;;
		*) echo "bench/accuracy.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done

. bench/lib.sh
out=bench/out
mkdir -p "$out"
echo "accuracy: loading" >&2
bench_cluster "$port" "$rows"
major=$(bpsql -At -c "SELECT current_setting('server_version_num')::int / 10000")
bpsql -f bench/sql/tail.sql >/dev/null
bpsql -f bench/sql/shapes.sql >/dev/null

acc=$BENCH_DIR/accuracy
mkdir -p "$acc"
for w in $workloads; do
	settings=$(bpsql -At -c "SELECT settings FROM bench_workloads WHERE id = '$w'")
	query=$(bpsql -At -c "SELECT query FROM bench_workloads WHERE id = '$w'")
	modes=(exact profile profile_cg exact2)
	for ((r = 0; r <= runs; r++)); do
		for ((i = 0; i < ${#modes[@]}; i++)); do
			# rotate the order, so that no mode always runs first
			mode=${modes[$(((i + r) % ${#modes[@]}))]}
			clock=try_tsc
			case $mode in
				profile) timing=profile ;;
				profile_cg) timing=profile clock=clock_gettime ;;
				*) timing=exact ;;
			esac
			# one transaction: the workload's settings are transaction-local;
			# then, in the same backend, the profile ticks it took
			printf '%s\n' "BEGIN;" "SET LOCAL fasttime.clock_source = $clock;" \
				"SET LOCAL fasttime.node_timing = $timing;" \
				"SELECT bench_apply_settings('$settings');" \
				"EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON) $query;" "COMMIT;" \
				"SELECT 'ticks ' || value FROM fasttime_status() WHERE name = 'profile_ticks';" |
				bpsql -At >"$acc/raw"
			# run 0 is a warm-up
			if [ "$r" -gt 0 ]; then
				sed -n '/^\[/,/^\]/p' "$acc/raw" >"$acc/$w.$mode.$r.json"
				grep '^ticks ' "$acc/raw" >"$acc/$w.$mode.$r.ticks" || true
			fi
		done
	done
	echo "accuracy: $w done" >&2
done
status=$(bpsql -At -c "SET fasttime.clock_source = try_tsc" -c "SELECT current_setting('fasttime.clock_source_status')")
fact() { bpsql -At -c "SELECT value FROM fasttime_status() WHERE name = '$1'"; }
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
machine="${cpu:-unknown CPU}, $(nproc) CPUs, hypervisor $(fact hypervisor), kernel clocksource $(fact kernel_clocksource)"
gucs=$(bpsql -At -c "SELECT string_agg(name || ' = ' || setting || coalesce(unit, ''), ', ' ORDER BY name)
	FROM pg_settings WHERE name IN ('fasttime.ordered_reads', 'fasttime.profile_interval',
		'fasttime.profile_interval_max', 'fasttime.profile_after')")
python3 bench/accuracy.py "$acc" "$runs" "$major" "$status" "$workloads" \
	"$command" "$machine" "$gucs" \
	>"$out/accuracy-pg$major.md"
# the plans themselves, so that the report can be made again
rm -rf "$out/accuracy-pg$major-plans"
cp -r "$acc" "$out/accuracy-pg$major-plans"
rm -f "$out/accuracy-pg$major-plans/raw"
cat "$out/accuracy-pg$major.md"
