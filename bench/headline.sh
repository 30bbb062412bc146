#!/usr/bin/env bash
# bench/headline.sh: the README's headline chart from bench/matrix.sh runs
# of W1 (one per PostgreSQL version, made with --label LABEL and at least
# the variants stock, exact and profile): EXPLAIN ANALYZE as typed under
# stock, fasttime exact and fasttime profiled, and fasttime's TIMING OFF,
# each as a multiple of the plain query: the minimums of the rounds
# (matrix.sh's csv columns 5-6; medians, column 4, where a run has none).
#
# Usage: bench/headline.sh LABEL OUT.png "SUBTITLE" [DIR]
#   reads DIR/matrix-pg{15,18,19}-LABEL.csv (DIR: bench/out); a version
#   without a file is left out.
set -euo pipefail
cd "$(dirname "$0")/.."
label=$1
png=$2
subtitle=$3
dir=${4:-bench/out}
dat=$(mktemp)
trap 'rm -f "$dat"' EXIT
for v in 15 16 17 18 19; do
	f=$dir/matrix-pg$v-$label.csv
	[ -f "$f" ] || continue
	get() { awk -F, -v k="$1" '$1 == "W1" && $2 == k { print (NF >= 6 ? $6 : $4); found = 1 } END { if (!found) print "NaN" }' "$f"; }
	echo "PG$v $(get typed/stock) $(get typed/exact) $(get typed/profile) $(get off/exact)" >>"$dat"
done
[ -s "$dat" ] || { echo "bench/headline.sh: no matrix-pg*-$label.csv in $dir" >&2; exit 1; }
cat "$dat"
gnuplot -e "datafile='$dat'; outfile='$png'; subtitle='$subtitle'" bench/headline.gp
