#!/usr/bin/env bash
# bench/accuracy.sh: how close exact timing with plain RDTSC, and with only
# the start read ordered, comes to exact timing with both reads ordered,
# against the check's own noise floor.  (It also compared per-call sampled
# timing with exact timing; sampled timing was removed.)
#
# Workloads: W1-W4 (bench/sql/setup.sql), W5 (heavy-tailed per-call costs,
# bench/sql/tail.sql) and W6-W10 (bench/sql/shapes.sql: a nested loop with
# a skewed inner side, a correlated SubPlan in a join qual, hash/sort/
# aggregate builds, an inner index scan rescanned 300,000 times, a LIMIT
# cutting a hash join short).  Each run of each workload executes, in one
# server and in an order that rotates from run to run,
#   ordered   exact timing, both reads LFENCE;RDTSC (ordered_reads = on;
#             the reference)
#   start     exact timing, the start read ordered (ordered_reads = start)
#   plain     exact timing, plain RDTSC (ordered_reads = off)
#   ordered2  ordered again: the check's own noise floor
# each as EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON) in a transaction of
# its own, R runs after a warm-up.  bench/accuracy.py then reports per
# plan node of at least 1 ms: start and plain against the reference, bias
# (mean against mean) and one run's error (root mean square of each run's
# deviation from the reference mean), beside the floor's (ordered2 against
# ordered); and how often a child read longer than its parent per mode.
# Rows and loops must be the same in every run.  Output:
# bench/out/accuracy-pgMAJOR.md.
#
# Usage: bench/accuracy.sh [--runs R] [--workloads "W1 W5"]
#                          [--port P] [--rows N]
set -euo pipefail
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
	modes=(ordered start plain ordered2)
	for ((r = 0; r <= runs; r++)); do
		for ((i = 0; i < ${#modes[@]}; i++)); do
			# rotate the order, so that no mode always runs first
			mode=${modes[$(((i + r) % ${#modes[@]}))]}
			case $mode in
				start) set="SET LOCAL fasttime.ordered_reads = start;" ;;
				plain) set="SET LOCAL fasttime.ordered_reads = off;" ;;
				*) set="SET LOCAL fasttime.ordered_reads = on;" ;;
			esac
			# one transaction: the workload's settings are transaction-local
			printf '%s\n' "BEGIN;" "SET LOCAL fasttime.clock_source = try_tsc;" "$set" \
				"SELECT bench_apply_settings('$settings');" \
				"EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON) $query;" "COMMIT;" |
				bpsql -At >"$acc/raw"
			# run 0 is a warm-up
			if [ "$r" -gt 0 ]; then
				sed -n '/^\[/,/^\]/p' "$acc/raw" >"$acc/$w.$mode.$r.json"
			fi
		done
	done
	echo "accuracy: $w done" >&2
done
status=$(bpsql -At -c "SET fasttime.clock_source = try_tsc" -c "SELECT current_setting('fasttime.clock_source_status')")
python3 bench/accuracy.py "$acc" "$runs" "$major" "$status" "$workloads" \
	>"$out/accuracy-pg$major.md"
cat "$out/accuracy-pg$major.md"
