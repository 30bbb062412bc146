#!/usr/bin/env bash
# Per-query set-up with every nested statement instrumented, two builds of
# fasttime alternately (2026-12-03c).
#   PG_CONFIG=... nested_ab.sh OLD.so NEW.so ALTERNATIONS ROUNDS N "MODES"
# Starts a throwaway cluster (test/cluster.sh, port 5497, fasttime
# preloaded), creates table a (200,000 rows, index on g) and tiny(n), a
# PL/pgSQL loop of n single-row index lookups.  For each alternation and
# build, the server is stopped, the build copied into pkglibdir (never
# over a library a running server has loaded) and started again; then
# one psql session runs ROUNDS rounds, each running SELECT tiny(N) once
# under each mode in turn, in the same session:
#   plain     auto_explain.log_analyze off (nothing instrumented)
#   stock     log_analyze, log_nested_statements, clock_source = clock_gettime
#             (fasttime leaves the plan as stock built it)
#   stockoff  the same with auto_explain.log_timing = off
#   exact     clock_source = try_tsc, node_timing = exact
#   off       try_tsc, log_timing = off (fasttime's wrappers, no clock)
#   profile   try_tsc, node_timing = profile
# (auto_explain.log_min_duration = 100 s: nothing is logged.)  AE_EXTRA,
# if set, is run after the auto_explain settings (e.g. AE_EXTRA="SET
# auto_explain.log_buffers = on;").  Prints one
# line per alternation, build and mode: min, median, and the medians of the
# per-round ratios to plain and to stock, with quartiles.
set -u
cd "$(dirname "$0")/../../.."
OLD=$1 NEW=$2 A=$3 R=$4 N=$5 MODES=$6
. test/cluster.sh
D=/tmp/ft-nested-ab; P=5497
lib=$("$FT_PG_CONFIG" --pkglibdir)
cp "$NEW" "$lib/fasttime.so"
ft_cluster_start $D $P "shared_preload_libraries = 'fasttime'" "jit = off" "autovacuum = off" \
	"shared_buffers = '256MB'" "max_parallel_workers_per_gather = 0" >/dev/null || exit 1
trap 'ft_cluster_stop $D' EXIT
ft_psql $D $P -q -c "CREATE EXTENSION fasttime" \
	-c "CREATE TABLE a AS SELECT g, g % 50 AS k FROM generate_series(1, 200000) g" \
	-c "CREATE INDEX a_g ON a (g)" -c "VACUUM ANALYZE a" \
	-c "CREATE FUNCTION tiny(n int) RETURNS bigint LANGUAGE plpgsql AS \$\$ DECLARE r bigint := 0; x bigint; BEGIN FOR i IN 1..n LOOP SELECT k INTO x FROM a WHERE g = i; r := r + x; END LOOP; RETURN r; END \$\$" >/dev/null
session() {
	echo "LOAD 'auto_explain'; SET auto_explain.log_min_duration = '100s'; SET auto_explain.log_nested_statements = on; ${AE_EXTRA:-}"
	echo "SELECT tiny($N); SELECT tiny($N);"
	for r in $(seq 1 "$R"); do
		for m in $MODES; do
			case $m in
			plain) s="SET auto_explain.log_analyze = off;" ;;
			stock) s="SET auto_explain.log_analyze = on; SET auto_explain.log_timing = on; SET fasttime.clock_source = clock_gettime; SET fasttime.node_timing = exact;" ;;
			stockoff) s="SET auto_explain.log_analyze = on; SET auto_explain.log_timing = off; SET fasttime.clock_source = clock_gettime; SET fasttime.node_timing = exact;" ;;
			exact) s="SET auto_explain.log_analyze = on; SET auto_explain.log_timing = on; SET fasttime.clock_source = try_tsc; SET fasttime.node_timing = exact;" ;;
			off) s="SET auto_explain.log_analyze = on; SET auto_explain.log_timing = off; SET fasttime.clock_source = try_tsc; SET fasttime.node_timing = exact;" ;;
			profile) s="SET auto_explain.log_analyze = on; SET auto_explain.log_timing = on; SET fasttime.clock_source = try_tsc; SET fasttime.node_timing = profile;" ;;
			esac
			echo "$s"; echo "\\echo M $r $m"; echo '\timing on'; echo "SELECT tiny($N);"; echo '\timing off'
		done
	done
}
for alt in $(seq 1 "$A"); do
	for b in old new; do
		ft_as_owner "$FT_BINDIR/pg_ctl" -D $D/data -w stop >/dev/null
		if [ $b = old ]; then cp "$OLD" "$lib/fasttime.so"; else cp "$NEW" "$lib/fasttime.so"; fi
		ft_as_owner "$FT_BINDIR/pg_ctl" -D $D/data -w start -l $D/server.log >/dev/null
		session | ft_psql $D $P -X -q -At 2>&1 | awk '/^M / { r=$2; m=$3; next } /^Time:/ { print r, m, $2 }' >$D/times
		python3 - $D/times "$MODES" "$alt $b" <<'PY'
import sys, statistics as st, collections
d = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    r, m, t = line.split(); d[int(r)][m] = float(t)
modes = sys.argv[2].split()
for m in modes:
    xs = [d[r][m] for r in d if m in d[r]]
    out = f"{sys.argv[3]} {m:8s} min {min(xs):8.2f} med {st.median(xs):8.2f}"
    for base in ("plain", "stock"):
        if base not in modes:
            continue
        rs = sorted(d[r][m] / d[r][base] for r in d if m in d[r] and base in d[r])
        out += f"  /{base} {st.median(rs):.3f} [{rs[len(rs)//4]:.3f}-{rs[3*len(rs)//4]:.3f}]"
    print(out)
PY
	done
done
