#!/usr/bin/env bash
# bench/run.sh: fasttime's benchmark (make bench).  For each PostgreSQL
# installation (default: 15 from the Debian package and the 18 that
# .ci/build-pg.sh built, whichever exist; FT_BENCH_PG_CONFIGS="path ..."
# to choose), it
#   1. installs this tree's fasttime into it (make install: run as root);
#   2. bench/matrix.sh: W1-W4, plain and four EXPLAIN modes x stock,
#      fasttime exact (default reads: ordered), exact with plain reads and
#      exact with both reads ordered, interleaved, as a multiple of the
#      plain query;
#   3. the same for a floor build (make FLOOR=1: wrappers that read no
#      clock) in a private copy of the installation, exact;
#   4. bench/accuracy.sh: exact timing's read disciplines against ordered
#      exact timing, with the noise floor of the same mode run twice,
#      W1-W10 (W5 heavy-tailed, W6-W10 the shapes of bench/sql/shapes.sql);
# then writes bench/out/report.md (every table) and bench/out/matrix-*.png
# (EXPLAIN ANALYZE as typed, and TIMING OFF as typed, x plain, per version).
#
# Usage: bench/run.sh [--rounds N] [--runs N] [--workloads "W1 W2 W3 W4"]
#                     [--quick] [--profile] [--no-floor] [--no-accuracy]
#   --quick    1M rows, 3 rounds, 3 accuracy runs: a smoke test
#   --profile  perf record + annotate of W1's wrappers (bench/profile.sh)
# The previous benchmark (clock read cost per node call, tsc against
# clock_gettime) is bench/clock_cost.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=7
runs=5
rows=5000000
workloads="W1 W2 W3 W4"
profile=""
floor=1
accuracy=1
while [ $# -gt 0 ]; do
	case $1 in
		--rounds) rounds=$2; shift ;;
		--runs) runs=$2; shift ;;
		--workloads) workloads=$2; shift ;;
		--quick) rounds=3; runs=3; rows=1000000 ;;
		--profile) profile=--profile ;;
		--no-floor) floor=0 ;;
		--no-accuracy) accuracy=0 ;;
		-h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'; exit 0 ;;
		*) echo "bench/run.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done

log() { echo "bench: $*" >&2; }
out=bench/out
mkdir -p "$out"
rm -f "$out"/matrix-pg*.csv "$out"/matrix-pg*.md "$out"/accuracy-pg*.md

configs=${FT_BENCH_PG_CONFIGS:-}
if [ -z "$configs" ]; then
	for c in /usr/lib/postgresql/15/bin/pg_config /var/cache/fasttime-ci/pg18/bin/pg_config; do
		[ -x "$c" ] && configs+=" $c"
	done
fi
[ -n "$configs" ] || { echo "bench/run.sh: no PostgreSQL found (set FT_BENCH_PG_CONFIGS)" >&2; exit 1; }

majors=""
for pgc in $configs; do
	major=$("$pgc" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
	majors+=" $major"
	log "PostgreSQL $major ($pgc): installing this tree's fasttime"
	make -s PG_CONFIG="$pgc" clean >/dev/null
	make -s PG_CONFIG="$pgc" >/dev/null
	make -s PG_CONFIG="$pgc" install >/dev/null
	PG_CONFIG=$pgc bench/matrix.sh --rounds "$rounds" --rows "$rows" \
		--workloads "$workloads" $profile >/dev/null
	if [ "$floor" = 1 ]; then
		root=/tmp/fasttime-floor-$major
		log "PostgreSQL $major: floor build in $root"
		. test/fault/private_install.sh
		PG_CONFIG=$pgc ft_private_install "$root" FLOOR=1
		PG_CONFIG=$(PG_CONFIG=$pgc ft_private_pg_config "$root") bench/matrix.sh \
			--rounds "$rounds" --rows "$rows" --workloads "$workloads" \
			--label floor --variants "exact" --port 5533 >/dev/null
		rm -rf "$root" "$root.src" "$root.build.log"
	fi
	if [ "$accuracy" = 1 ]; then
		PG_CONFIG=$pgc bench/accuracy.sh --runs "$runs" --rows "$rows" >/dev/null
	fi
done
make -s clean >/dev/null

# the charts: one EXPLAIN mode, x plain, per workload and version
value() {	# value MAJOR LABEL WORKLOAD VARIANT
	local f=$out/matrix-pg$1${2:+-$2}.csv
	[ -f "$f" ] || { echo NaN; return; }
	awk -F, -v w="$3" -v k="$4" '$1 == w && $2 == k { print $4; found = 1 } END { if (!found) print "NaN" }' "$f"
}
if command -v gnuplot >/dev/null || { [ "$(id -u)" = 0 ] &&
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q gnuplot-nox >/dev/null 2>&1; }; then
	subtitle="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) vCPUs, clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource), $(date -u +%Y-%m-%d)"
	for mode in typed off; do
		dat=$out/matrix-$mode.dat
		: >"$dat"
		for w in $workloads; do
			for m in $majors; do
				echo "\"$w PG$m\" $(value "$m" "" "$w" "$mode/stock") $(value "$m" "" "$w" "$mode/exact")" \
					"$(value "$m" floor "$w" "$mode/exact")" >>"$dat"
			done
		done
		case $mode in
			typed) title="EXPLAIN ANALYZE as typed (18: BUFFERS on)" ;;
			off) title="EXPLAIN (ANALYZE, TIMING OFF) as typed (18: BUFFERS on)" ;;
		esac
		gnuplot -e "datafile='$dat'; outfile='$out/matrix-$mode.png'; mode='$title'; subtitle='$subtitle'" \
			bench/matrix.gp 2>"$out/gnuplot.log" || log "gnuplot failed: $out/gnuplot.log"
	done
else
	log "no gnuplot: no charts"
fi

{
	echo "## fasttime benchmark: the per-node path as a multiple of the plain query"
	echo
	for m in $majors; do
		cat "$out/matrix-pg$m.md"
		echo
		[ -f "$out/matrix-pg$m-floor.md" ] && { cat "$out/matrix-pg$m-floor.md"; echo; }
		[ -f "$out/accuracy-pg$m.md" ] && { cat "$out/accuracy-pg$m.md"; echo; }
	done
} >"$out/report.md"
cat "$out/report.md"
log "files: $out/report.md $out/matrix-*.csv $out/matrix-typed.png $out/matrix-off.png"
