#!/usr/bin/env bash
# bench/matrix.sh: the whole per-node path, as a multiple of the plain query.
#
# For each workload (W1-W4 of bench/sql/setup.sql) and each EXPLAIN mode
#   off-nobuf  EXPLAIN (ANALYZE, TIMING OFF, BUFFERS OFF)
#   off        EXPLAIN (ANALYZE, TIMING OFF)   as typed (18: BUFFERS on)
#   typed      EXPLAIN (ANALYZE)               as typed (18: BUFFERS on)
#   nobuf      EXPLAIN (ANALYZE, BUFFERS OFF)
# (--modes picks some of them, or also
#   off-buf    EXPLAIN (ANALYZE, TIMING OFF, BUFFERS)      buffers on 15-17 too
#   off-wal    EXPLAIN (ANALYZE, TIMING OFF, BUFFERS, WAL))
# runs the variants asked for (by default stock, exact, plain and
# ordered) -- stock (fasttime.clock_source = clock_gettime and
# node_timing = exact: stock instrumentation), auto (fasttime exact with
# clock_source = auto: the TSC or clock_gettime()), fasttime exact
# as configured by default (try_tsc: ordered reads), fasttime plain
# (fasttime.ordered_reads = off: plain RDTSC), ordered
# (fasttime.ordered_reads = on: both reads LFENCE;RDTSC),
# exact_nd (exact with fasttime.derived_usage = off: every node compares
# its buffer and WAL counters at its own calls) (each of these with
# node_timing = exact, whatever its default),
# profile, profile1, profile8, profile2, profile5, profile50 and
# profile_cg (fasttime.node_timing = profile: ticks of 1 ms lengthening to
# fasttime.profile_interval_max as configured (default 4 ms), ticks of
# 1 ms throughout, ticks lengthening from 1 to 8 ms, ticks of 2, 5 and
# 50 ms throughout -- the last so few that what remains is the profiled
# calls' own cost and a 50 ms exact prefix -- and the configured ticks
# with fasttime.clock_source = clock_gettime), profile_exact (profiled
# timing that never switches: its exact prefix throughout), profile_a0,
# profile_a5, profile_a10 (fasttime.profile_after = 0, 5, 10 ms) and
# profile_cg_a5 (clock_gettime, 5 ms), profile_worker and
# profile_cg_worker (profile and profile_cg with fasttime.tick_source =
# worker: the tick worker instead of timer signals in the backend; the
# server then starts with it, and every other profiled variant sets
# signal, the default); on 19 also
# stock_system and stock_tsc (stock with the server's timing_clock_source
# = system or tsc; plain "stock" is the server's auto) -- and the
# plain statement, all
# interleaved round by round in one session after a warm-up round, and
# prints the median time of each as a multiple of the plain statement's
# (bench/out/matrix-PGVERSION[-LABEL].md and .csv).  Timing is the harness's
# (bench/sql/harness.sql): clock_timestamp() around a PL/pgSQL EXECUTE,
# on-CPU time where /proc/self/schedstat is readable.
#
# A floor build (make FLOOR=1 install: wrappers that read no clock) is
# measured by running this script again with --label floor against it;
# its "exact" column is then the bookkeeping alone.
#
# Usage: bench/matrix.sh [--rounds N] [--workloads "W1 W2"] [--label L]
#                        [--variants "stock auto exact exact_nd plain ordered profile profile1 profile8 profile2 profile5 profile50 profile_exact profile_cg
#                                    profile_a0 profile_a5 profile_a10 profile_cg_a5"]
#                        [--port P] [--rows N] [--modes "off-nobuf off typed nobuf"]
#                        (19: also stock_system stock_tsc)
#                        [--profile]  (perf record of W1: exact and profiled as
#                                      typed, TIMING OFF with and without BUFFERS)
#                        [--profile-variants "off/exact off-nobuf/exact"]
# Uses the fasttime installed in pg_config's PostgreSQL (PG_CONFIG).
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=7
workloads="W1 W2 W3 W4"
label=""
port=5530
rows=5000000
kinds="stock exact plain ordered"
modes="off-nobuf off typed nobuf"
profile=0
profile_variants="typed/exact typed/profile off/exact off-nobuf/exact"
while [ $# -gt 0 ]; do
	case $1 in
		--rounds) rounds=$2; shift ;;
		--workloads) workloads=$2; shift ;;
		--label) label=$2; shift ;;
		--port) port=$2; shift ;;
		--rows) rows=$2; shift ;;
		--variants) kinds=$2; shift ;;
		--modes) modes=$2; shift ;;
		--profile) profile=1 ;;
		--profile-variants) profile=1; profile_variants=$2; shift ;;
		-h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'; exit 0 ;;
		*) echo "bench/matrix.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done

. bench/lib.sh
out=bench/out
mkdir -p "$out"
log() { echo "matrix: $*" >&2; }
log "loading (lotsarows $rows rows)"
case " $kinds " in
	*_worker" "*) bench_cluster "$port" "$rows" "fasttime.tick_source = worker" ;;
	*) bench_cluster "$port" "$rows" ;;
esac
major=$(bpsql -At -c "SELECT current_setting('server_version_num')::int / 10000")

# the variants: mode x (stock, exact, ...), and plain
bpsql <<EOF
DELETE FROM bench_variants;
INSERT INTO bench_variants(id, title, prefix, clock_source, settings)
SELECT m.id || '/' || v.id, m.id || ', ' || v.id, m.prefix, v.clock, v.settings
  FROM (VALUES ('off-nobuf', 'EXPLAIN (ANALYZE, TIMING OFF, BUFFERS OFF) '),
			   ('off', 'EXPLAIN (ANALYZE, TIMING OFF) '),
			   ('typed', 'EXPLAIN (ANALYZE) '),
			   ('nobuf', 'EXPLAIN (ANALYZE, BUFFERS OFF) '),
			   ('off-buf', 'EXPLAIN (ANALYZE, TIMING OFF, BUFFERS) '),
			   ('off-wal', 'EXPLAIN (ANALYZE, TIMING OFF, BUFFERS, WAL) ')) m(id, prefix),
	   (VALUES ('stock', 'clock_gettime', 'fasttime.node_timing=exact'),
			   ('exact', 'try_tsc', 'fasttime.node_timing=exact'),
			   ('auto', 'auto', 'fasttime.node_timing=exact'),
			   ('exact_nd', 'try_tsc', 'fasttime.node_timing=exact;fasttime.derived_usage=off'),
			   ('plain', 'try_tsc', 'fasttime.node_timing=exact;fasttime.ordered_reads=off'),
			   ('ordered', 'try_tsc', 'fasttime.node_timing=exact;fasttime.ordered_reads=on'),
			   ('profile', 'try_tsc', 'fasttime.node_timing=profile'),
			   ('profile1', 'try_tsc', 'fasttime.node_timing=profile;fasttime.profile_interval_max=1'),
			   ('profile8', 'try_tsc', 'fasttime.node_timing=profile;fasttime.profile_interval_max=8'),
			   ('profile2', 'try_tsc', 'fasttime.node_timing=profile;fasttime.profile_interval=2;fasttime.profile_interval_max=2'),
			   ('profile5', 'try_tsc', 'fasttime.node_timing=profile;fasttime.profile_interval=5;fasttime.profile_interval_max=5'),
			   ('profile50', 'try_tsc', 'fasttime.node_timing=profile;fasttime.profile_interval=50;fasttime.profile_interval_max=50'),
			   ('profile_exact', 'try_tsc', 'fasttime.node_timing=profile;fasttime.profile_after=3600000'),
			   ('profile_cg', 'clock_gettime', 'fasttime.node_timing=profile'),
			   ('profile_worker', 'try_tsc', 'fasttime.node_timing=profile;fasttime.tick_source=worker'),
			   ('profile_cg_worker', 'clock_gettime', 'fasttime.node_timing=profile;fasttime.tick_source=worker'),
			   ('profile_a0', 'try_tsc', 'fasttime.node_timing=profile;fasttime.profile_after=0'),
			   ('profile_a5', 'try_tsc', 'fasttime.node_timing=profile;fasttime.profile_after=5'),
			   ('profile_a10', 'try_tsc', 'fasttime.node_timing=profile;fasttime.profile_after=10'),
			   ('profile_cg_a5', 'clock_gettime', 'fasttime.node_timing=profile;fasttime.profile_after=5'),
			   ('stock_system', 'clock_gettime', 'fasttime.node_timing=exact;timing_clock_source=system'),
			   ('stock_tsc', 'clock_gettime', 'fasttime.node_timing=exact;timing_clock_source=tsc')) v(id, clock, settings);
INSERT INTO bench_variants VALUES ('plain', 'plain statement', '', NULL, '');
UPDATE bench_variants SET settings = settings || ';fasttime.tick_source=signal'
 WHERE settings LIKE '%node_timing=profile%' AND settings NOT LIKE '%tick_source%';
EOF
bpsql -c "DELETE FROM bench_variants WHERE id <> 'plain' AND split_part(id, '/', 2) <> ALL (string_to_array('$kinds', ' '))"
bpsql -c "DELETE FROM bench_variants WHERE id <> 'plain' AND split_part(id, '/', 1) <> ALL (string_to_array('$modes', ' '))"
core_auto=
if [ "$major" -ge 19 ]; then
	core_auto=$(bpsql -At -c "SELECT value FROM fasttime_status() WHERE name = 'core_tsc_enabled'")
	case $core_auto in
		true | on | yes) core_auto="TSC in effect" ;;
		*) core_auto="system clock" ;;
	esac
	# the server refuses timing_clock_source = tsc where it cannot use the TSC
	if ! bpsql -At -c "SET timing_clock_source = tsc" >/dev/null 2>&1; then
		log "timing_clock_source = tsc refused by this server: stock_tsc left out"
		bpsql -c "DELETE FROM bench_variants WHERE split_part(id, '/', 2) = 'stock_tsc'"
		kinds=$(echo " $kinds " | sed 's/ stock_tsc / /; s/^ //; s/ $//')
	fi
fi
variants=$(bpsql -At -c "SELECT string_agg(id, ' ' ORDER BY id) FROM bench_variants")
status=$(bpsql -At -c "SET fasttime.clock_source = try_tsc; SELECT current_setting('fasttime.clock_source_status')")
vec=$(bpsql -At -c "SELECT value FROM fasttime_status() WHERE name = 'wrapper_vector_code'")

script=$BENCH_DIR/runs.sql
{
	for w in $workloads; do
		for ((r = 0; r <= rounds; r++)); do
			if [ "$r" -eq 0 ]; then phase=warmup; else phase=measure; fi
			# each round starts one variant further on: no variant always
			# runs right after the same one
			read -r -a vs <<<"$variants"
			for ((k = 0; k < ${#vs[@]}; k++)); do
				v=${vs[$(((k + r) % ${#vs[@]}))]}
				echo "SELECT bench_measure('$w', '$v', $r, '$phase') \\g /dev/null"
			done
			echo "SELECT '$w round $r/$rounds';"
		done
	done
} >"$script"
log "PostgreSQL $major, try_tsc in effect as $status, vector code $vec; $rounds rounds"
bpsql -At -f "$script" | sed -u 's/^/matrix: /' >&2

if [ "$profile" = 1 ]; then
	mkdir -p "$out/profile-pg$major${label:+-$label}"
	bash bench/profile.sh "$BENCH_DIR" "$port" "$out/profile-pg$major${label:+-$label}" \
		W1 $profile_variants >&2 ||
		log "profile failed"
fi

name=matrix-pg$major${label:+-$label}
# median and minimum per variant, on-CPU where known, as multiples of plain's
bpsql -At -F , >"$out/$name.csv" <<'EOF'
WITH m AS (
	SELECT workload, variant,
		   percentile_cont(0.5) WITHIN GROUP (ORDER BY coalesce(cpu_ms, ms)) AS med,
		   min(coalesce(cpu_ms, ms)) AS lo
	  FROM bench_results WHERE phase = 'measure' AND ms IS NOT NULL
	 GROUP BY workload, variant)
SELECT m.workload, m.variant, round(m.med::numeric, 1), round((m.med / p.med)::numeric, 3),
	   round(m.lo::numeric, 1), round((m.lo / p.lo)::numeric, 3)
  FROM m JOIN m p ON p.workload = m.workload AND p.variant = 'plain'
 ORDER BY 1, 2;
EOF
# every measured run, in the order run, for ratios taken round by round
# (bench/paired.py)
bpsql -At -F , >"$out/$name-rounds.csv" <<'EOF'
SELECT workload, variant, round, round(coalesce(cpu_ms, ms)::numeric, 2)
  FROM bench_results WHERE phase = 'measure' AND ms IS NOT NULL ORDER BY seq;
EOF
{
	echo "### PostgreSQL $major${label:+ ($label build)}: time as a multiple of the plain query"
	echo
	echo "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) vCPUs," \
		"kernel clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null);" \
		"try_tsc timed with $status; wrapper vector code $vec; $rounds rounds after 1 warm-up," \
		"interleaved; on-CPU time (medians, then minimums); \`bench/matrix.sh${label:+ --label $label}\`, $(date -u +%Y-%m-%d)."
	hdr="| workload | mode"
	sep="|---|---"
	for v in $kinds; do
		case $v in
			ordered) hdr+=" | exact, both reads ordered" ;;
			plain) hdr+=" | exact, plain reads" ;;
			exact) hdr+=" | exact (default reads: $(bpsql -At -c 'SHOW fasttime.ordered_reads'))" ;;
			exact_nd) hdr+=" | exact, derived_usage off" ;;
			profile) hdr+=" | profiled (1 to $(bpsql -At -c 'SHOW fasttime.profile_interval_max') ticks)" ;;
			profile1) hdr+=" | profiled (1 ms ticks)" ;;
			profile8) hdr+=" | profiled (1 to 8 ms ticks)" ;;
			profile2) hdr+=" | profiled (2 ms ticks)" ;;
			profile5) hdr+=" | profiled (5 ms ticks)" ;;
			profile50) hdr+=" | profiled (50 ms ticks)" ;;
			profile_exact) hdr+=" | profiled, never switching" ;;
			auto) hdr+=" | exact, clock_source = auto" ;;
			profile_cg) hdr+=" | profiled, clock_gettime" ;;
			profile_worker) hdr+=" | profiled, tick worker" ;;
			profile_cg_worker) hdr+=" | profiled, clock_gettime, tick worker" ;;
			stock) [ "$major" -ge 19 ] && hdr+=" | stock, timing_clock_source auto ($core_auto)" || hdr+=" | stock" ;;
			stock_system) hdr+=" | stock, timing_clock_source = system" ;;
			stock_tsc) hdr+=" | stock, timing_clock_source = tsc" ;;
			*) hdr+=" | $v" ;;
		esac
		sep+="|---:"
	done
	# the table of medians (csv columns 3, 4), then of minimums (5, 6)
	for cols in "3 4 medians" "5 6 minimums"; do
		read -r cms cx what <<<"$cols"
		echo
		echo "$what of the rounds:"
		echo
		echo "$hdr |"
		echo "$sep|"
		for w in $workloads; do
			plain=$(awk -F, -v w="$w" -v c="$cms" '$1 == w && $2 == "plain" { print $c }' "$out/$name.csv")
			for mode in $modes; do
				row="| $w (plain $plain ms) | $mode"
				for v in $kinds; do
					x=$(awk -F, -v w="$w" -v k="$mode/$v" -v c="$cx" '$1 == w && $2 == k { print $c }' "$out/$name.csv")
					row+=" | ${x:-n/a}×"
				done
				echo "$row |"
			done
		done
	done
} >"$out/$name.md"
cat "$out/$name.md"
