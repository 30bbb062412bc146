#!/usr/bin/env bash
# bench/accuracy.sh: how close sampled timing's node totals come to exact
# timing's.
#
# For W1-W4 (bench/sql/setup.sql) and W5, a plan whose per-call times are
# heavy-tailed (a Seq Scan whose filter does about a thousand times the
# work on one row in a thousand), runs EXPLAIN (ANALYZE, BUFFERS OFF,
# FORMAT JSON) with exact timing (try_tsc) and with sampled timing
# (try_tsc, fasttime.timing_sample_interval = N), alternately, R times each
# after a warm-up, and reports per plan node the mean inclusive time
# (Actual Total Time x Actual Loops) of each, the bias of the sampled mean,
# and the typical error of one sampled run (root mean square of each run's
# deviation from the exact mean).  Rows and loops must be the same in
# every run; a difference is reported.  Output:
# bench/out/accuracy-pgMAJOR.md (bench/accuracy.py formats it).
#
# Usage: bench/accuracy.sh [--runs R] [--interval N] [--workloads "W1 W5"]
#                          [--port P] [--rows N]
set -euo pipefail
cd "$(dirname "$0")/.."

runs=5
interval=16
workloads="W1 W2 W3 W4 W5"
port=5532
rows=5000000
while [ $# -gt 0 ]; do
	case $1 in
		--runs) runs=$2; shift ;;
		--interval) interval=$2; shift ;;
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

acc=$BENCH_DIR/accuracy
mkdir -p "$acc"
for w in $workloads; do
	settings=$(bpsql -At -c "SELECT settings FROM bench_workloads WHERE id = '$w'")
	query=$(bpsql -At -c "SELECT query FROM bench_workloads WHERE id = '$w'")
	for ((r = 0; r <= runs; r++)); do
		for mode in exact sampled; do
			n=1
			[ "$mode" = sampled ] && n=$interval
			# one transaction: the workload's settings are transaction-local
			printf '%s\n' "BEGIN;" "SET LOCAL fasttime.clock_source = try_tsc;" \
				"SET LOCAL fasttime.timing_sample_interval = $n;" \
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
python3 bench/accuracy.py "$acc" "$interval" "$runs" "$major" "$status" "$workloads" \
	>"$out/accuracy-pg$major.md"
cat "$out/accuracy-pg$major.md"
