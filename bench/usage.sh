#!/usr/bin/env bash
# bench/usage.sh: what buffer and WAL bookkeeping costs alone (issue 24).
#
# Two runs of bench/matrix.sh on the fasttime installed in PG_CONFIG's
# PostgreSQL, stock (fasttime.clock_source = clock_gettime) and fasttime
# (try_tsc), both with fasttime.node_timing = exact, each interleaved
# round by round with the plain statement:
#   W1-W4 with lotsarows at 5M rows, then W1 alone at 50M rows,
# in the modes
#   off-nobuf  EXPLAIN (ANALYZE, TIMING OFF, BUFFERS OFF): fasttime's is the
#              floor, a wrapper that counts rows only
#   off        EXPLAIN (ANALYZE, TIMING OFF) as typed (18+: BUFFERS on)
#   off-buf    EXPLAIN (ANALYZE, TIMING OFF, BUFFERS): the same on 15-17
# so that off (or off-buf) against off-nobuf is the bookkeeping alone.
# Medians and minimums of the rounds, as multiples of the plain
# statement's, in bench/out/matrix-pgMAJOR-usage[-LABEL]-{5M,50M}.{md,csv}.
#
# Usage: bench/usage.sh [--rounds N] [--label L] [--port P]
#                       [--big-rows N] [--small-rows N] [--workloads "W1 W2 W3 W4"]
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=7
label=""
port=5531
small=5000000
big=50000000
workloads="W1 W2 W3 W4"
while [ $# -gt 0 ]; do
	case $1 in
		--rounds) rounds=$2; shift ;;
		--label) label=$2; shift ;;
		--port) port=$2; shift ;;
		--small-rows) small=$2; shift ;;
		--big-rows) big=$2; shift ;;
		--workloads) workloads=$2; shift ;;
		-h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'; exit 0 ;;
		*) echo "bench/usage.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done

l=usage${label:+-$label}
common=(--rounds "$rounds" --port "$port" --variants "stock exact" --modes "off-nobuf off off-buf")
bench/matrix.sh "${common[@]}" --workloads "$workloads" --rows "$small" --label "$l-$((small / 1000000))M"
bench/matrix.sh "${common[@]}" --workloads "W1" --rows "$big" --label "$l-$((big / 1000000))M"
