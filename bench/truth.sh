#!/usr/bin/env bash
# bench/truth.sh: ground truth for node times.  Every timing mode is judged
# by pairs of queries that differ only by known work inside one plan node
# (bench/sql/truth.sql), never by another mode.
#
# For each pair the two queries have the same plan, rows and node calls;
# the second adds work (cheap per-row work in a leaf or a parent, rare
# heavy calls of CPU or of waits, a skewed rescanned inner side, a SubPlan,
# a set-returning function per outer row, hash/sort/aggregate builds, a
# LIMIT, a parallel scan, a bitmap heap scan, an Append's member, a
# Memoize's and a Materialize's inner scan, a nested loop's and a merge
# join's join filter, rare waits in a parent, a CTE read twice, an
# InitPlan, a parallel sort) to one node, the target.  The difference of the
# two run times is the cost of the work.  A truthful mode shows it on the
# target's inclusive time and nowhere outside the target's subtree; the
# per-call observer effect of the mode cancels, since both queries make
# the same calls.
#
# In one server, each round runs every pair; within a pair every mode, in
# an order that rotates from round to round, base and work query each as
# EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON) in a transaction of its own
# (the pair's settings and the mode's are transaction-local).  Round 0 is a
# warm-up.  Modes (--modes, any of):
#   plain     the queries without EXPLAIN: the runtime difference itself
#   alone     for the pairs that have one (truth.sql), the same work in the
#             target's scan under a bare count(*), without EXPLAIN: whether
#             the plain query is additive (its difference against this)
#   stock     fasttime.clock_source = clock_gettime, node_timing = exact
#             (stock instrumentation)
#   off       exact timing, plain TSC reads (fasttime.ordered_reads = off)
#   on        exact timing, both reads ordered (ordered_reads = on)
#   profile   fasttime.node_timing = profile (where the build has it)
#   profile1  profile with 1 ms ticks throughout (fasttime.profile_interval_max = 1)
#   profile8  profile with ticks lengthening from 1 to 8 ms (profile_interval_max = 8)
#   profile2  profile with 2 ms ticks throughout (fasttime.profile_interval = 2)
#   profile5  profile with 5 ms ticks throughout (fasttime.profile_interval = 5)
#   profile_cg  profile with fasttime.clock_source = clock_gettime
#   profile_cg_worker  profile_cg with fasttime.tick_source = worker (the
#             tick worker instead of timer signals in the backend; the
#             server then starts with it, so that the worker runs)
#   floor     the default exact mode again: the check's own noise
# Every profile mode but profile_cg_worker sets tick_source = signal, the
# default.
# stock, off, on and floor also set fasttime.node_timing = exact (where
# the build has it), whatever its default.
# bench/truth.py then reports, per pair and mode: the error on the target
# (its inclusive time's difference against the mode's own Execution Time
# difference, and against the plain runtime difference), the leak (the sum
# of the absolute differences of the own times of all nodes outside the
# target's subtree, against the Execution Time difference), child longer
# than parent, and whether rows and loops were the same everywhere.  An
# InitPlan's time counts in the node that runs it (a CTE's in the CTE Scan
# that reads it first, another in the node whose expression uses it).
# On 18 and later, node times are unrounded (bench/shares_explain.c,
# built here and LOADed into each session); before, EXPLAIN's per-loop
# averages times loops, off by up to 0.0005 ms a loop.
# Output: bench/out/truth-pgMAJOR.md (and the raw runs, .jsonl).
#
# Usage: bench/truth.sh [--rounds R] [--modes "off on ..."]
#                       [--pairs "leaf_qual ..."] [--port P] [--rows N]
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=5
modes="plain stock off on floor"
pairs=""
port=5533
rows=5000000
while [ $# -gt 0 ]; do
	case $1 in
		--rounds) rounds=$2; shift ;;
		--modes) modes=$2; shift ;;
		--pairs) pairs=$2; shift ;;
		--port) port=$2; shift ;;
		--rows) rows=$2; shift ;;
		-h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'; exit 0 ;;
		*) echo "bench/truth.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done

. bench/lib.sh
out=bench/out
mkdir -p "$out"
echo "truth: loading" >&2
# the tick worker runs only in a server started with it
case " $modes " in
	*" profile_cg_worker "*) bench_cluster "$port" "$rows" "fasttime.tick_source = worker" ;;
	*) bench_cluster "$port" "$rows" ;;
esac
bpsql -f bench/sql/truth.sql >/dev/null
major=$(bpsql -At -c "SELECT current_setting('server_version_num')::int / 10000")
[ -n "$pairs" ] || pairs=$(bpsql -At -c "SELECT string_agg(id, ' ' ORDER BY id) FROM truth_pairs")
default_reads=$(bpsql -At -c "SELECT current_setting('fasttime.ordered_reads')")
# bench/shares_explain.c, on 18 and later (its per-node EXPLAIN hook):
# each node's inclusive time unrounded.  EXPLAIN prints the average per
# loop rounded to 0.001 ms, so a node of 300,000 loops (memoize_inner's
# scan) is off by up to 150 ms; bench/truth.py takes the unrounded figure
# where it is there.  Before 18 the module would send it as a NOTICE,
# which this script does not read: the rounded figures are used there.
load_sql=
if [ "$major" -ge 18 ]; then
	lib=$BENCH_DIR-lib
	trap 'ft_cluster_stop "$BENCH_DIR"; rm -rf "$BENCH_DIR" "$BENCH_DIR-lib"' EXIT
	rm -rf "$lib"
	mkdir -p "$lib/build" && chmod 755 "$lib"
	cp bench/shares_explain.c "$lib/build/"
	printf 'MODULES = shares_explain\nPGXS := $(shell $(PG_CONFIG) --pgxs)\ninclude $(PGXS)\n' >"$lib/build/Makefile"
	if make -C "$lib/build" -s PG_CONFIG="${PG_CONFIG:-pg_config}" with_llvm=no >"$lib/build/build.log" 2>&1 &&
		cp "$lib/build/shares_explain.so" "$lib/" && chmod 755 "$lib/shares_explain.so"; then
		load_sql="LOAD '$lib/shares_explain.so';"
	else
		echo "truth: bench/shares_explain.c did not build (below); EXPLAIN's rounded times are used" >&2
		cat "$lib/build/build.log" >&2
	fi
fi
have_profile=$(bpsql -At -c "SELECT count(*) FROM pg_settings WHERE name = 'fasttime.node_timing'")

# the SET LOCAL commands of a mode, and the function that runs it
mode_sets() {
	case $1 in
		plain | alone | stock) echo "SET LOCAL fasttime.clock_source = clock_gettime;" ;;
		off | on) echo "SET LOCAL fasttime.clock_source = try_tsc; SET LOCAL fasttime.ordered_reads = $1;" ;;
		floor) echo "SET LOCAL fasttime.clock_source = try_tsc; SET LOCAL fasttime.ordered_reads = $default_reads;" ;;
		profile) echo "SET LOCAL fasttime.clock_source = try_tsc; SET LOCAL fasttime.node_timing = profile;" ;;
		profile1) echo "SET LOCAL fasttime.clock_source = try_tsc; SET LOCAL fasttime.node_timing = profile; SET LOCAL fasttime.profile_interval_max = 1;" ;;
		profile8) echo "SET LOCAL fasttime.clock_source = try_tsc; SET LOCAL fasttime.node_timing = profile; SET LOCAL fasttime.profile_interval_max = 8;" ;;
		profile2) echo "SET LOCAL fasttime.clock_source = try_tsc; SET LOCAL fasttime.node_timing = profile; SET LOCAL fasttime.profile_interval = 2; SET LOCAL fasttime.profile_interval_max = 2;" ;;
		profile5) echo "SET LOCAL fasttime.clock_source = try_tsc; SET LOCAL fasttime.node_timing = profile; SET LOCAL fasttime.profile_interval = 5; SET LOCAL fasttime.profile_interval_max = 5;" ;;
		profile_cg) echo "SET LOCAL fasttime.clock_source = clock_gettime; SET LOCAL fasttime.node_timing = profile;" ;;
		profile_cg_worker) echo "SET LOCAL fasttime.clock_source = clock_gettime; SET LOCAL fasttime.node_timing = profile; SET LOCAL fasttime.tick_source = worker;" ;;
		*) echo "bench/truth.sh: unknown mode $1" >&2; return 1 ;;
	esac
	case $1 in profile | profile1 | profile8 | profile2 | profile5 | profile_cg)
		echo "SET LOCAL fasttime.tick_source = signal;" ;;
	esac
	if [ "$1" != plain ] && [ "$1" != alone ] && [[ "$1" != profile* ]] && [ "$have_profile" = 1 ]; then
		echo "SET LOCAL fasttime.node_timing = exact;"
	fi
}
read -r -a mode_list <<<"$modes"
for m in "${mode_list[@]}"; do
	case $m in profile | profile1 | profile8 | profile2 | profile5 | profile_cg | profile_cg_worker)
		if [ "$have_profile" != 1 ]; then
			echo "bench/truth.sh: this build has no fasttime.node_timing: mode $m left out" >&2
			mode_list=("${mode_list[@]/$m}")
		fi ;;
	esac
done
read -r -a mode_list <<<"${mode_list[*]}"

alone_pairs=" $(bpsql -At -c "SELECT string_agg(id, ' ') FROM truth_pairs WHERE alone_base IS NOT NULL") "

raw=$out/truth-pg$major.jsonl
: >"$raw"
nmodes=${#mode_list[@]}
for ((r = 0; r <= rounds; r++)); do
	for p in $pairs; do
		for ((i = 0; i < nmodes; i++)); do
			mode=${mode_list[$(((i + r) % nmodes))]}
			fn=truth_explain
			col=
			[ "$mode" = plain ] && fn=truth_plain
			if [ "$mode" = alone ]; then
				[[ "$alone_pairs" == *" $p "* ]] || continue
				fn=truth_plain col=alone_
			fi
			# base first in even rounds, work first in odd ones
			if ((r % 2 == 0)); then order="base work"; else order="work base"; fi
			for which in $order; do
				printf '%s\n' "$load_sql" "BEGIN;" "$(mode_sets "$mode")" \
					"SELECT bench_apply_settings(settings) FROM truth_pairs WHERE id = '$p';" \
					"SELECT jsonb_build_object('pair', id, 'mode', '$mode', 'round', $r, 'which', '$which') || $fn($col$which) FROM truth_pairs WHERE id = '$p';" \
					"COMMIT;" |
					bpsql -At | grep '^{' >>"$raw.tmp" || { echo "truth: $p $mode $which failed" >&2; exit 1; }
			done
		done
	done
	# round 0 is a warm-up
	if [ "$r" -gt 0 ]; then cat "$raw.tmp" >>"$raw"; fi
	rm -f "$raw.tmp"
	echo "truth: round $r of $rounds done" >&2
done
status=$(bpsql -At -c "SET fasttime.clock_source = try_tsc" -c "SELECT current_setting('fasttime.clock_source_status')")
titles=$(bpsql -At -F $'\t' -c "SELECT id, target, title FROM truth_pairs ORDER BY id")
python3 bench/truth.py "$raw" "$major" "$status" "$default_reads" "$titles" >"$out/truth-pg$major.md"
cat "$out/truth-pg$major.md"
