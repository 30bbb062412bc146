#!/usr/bin/env bash
# bench/nested_cpu.sh -- what instrumenting every nested statement costs
# per statement, judged by the backend's own CPU time: a PL/pgSQL loop of N
# one-row index lookups under auto_explain (log_analyze,
# log_nested_statements, log_min_duration = 100 s: nothing is logged),
# each mode run in turn in one session, several rounds, and fasttime
# builds alternated by restarting the server.
#
#   PG_CONFIG=... bench/nested_cpu.sh "A.so [B.so ...]" PORT ALTERNATIONS ROUNDS N "MODES" OUT
#
# Each .so is preloaded by absolute path (shared_preload_libraries =
# '<so>,auto_explain'; nothing is installed).  Modes:
#   plain     auto_explain.log_analyze = off (nothing instrumented)
#   stock     log_analyze, clock_source = clock_gettime, node_timing = exact
#             (fasttime leaves the plan as stock built it)
#   stockoff  the same with auto_explain.log_timing = off
#   exact     log_analyze, clock_source = try_tsc, node_timing = exact
#   off       try_tsc, log_timing = off (fasttime's wrappers, no clock)
#   profile   try_tsc, node_timing = profile
#   default   log_analyze, fasttime's settings at their defaults
#   stockbuf, exactbuf, defaultbuf
#             stock, exact, default with auto_explain.log_buffers = on
# Why CPU, from inside: the host is shared and noisy; the backend reads
# its own on-CPU time (/proc/self/schedstat, ns) before and after each
# SELECT tiny(N), so neither the client, nor the other processes, nor the
# time the backend waits for a CPU count.  Each round runs every mode
# once; the report gives, per build, the median over rounds of each
# mode's ratio to stock and to plain within the same round, with the
# interquartile range, and the median ns per statement.  Raw lines
# (build round mode ms) go to OUT.times.
set -u
cd "$(dirname "$0")/.."
SOS=$1 P=$2 A=$3 R=$4 N=$5 MODES=$6 OUT=$7
. test/cluster.sh
D=/tmp/ft-nested-cpu-$P
set -- $SOS
ft_cluster_start $D "$P" "shared_preload_libraries = '$1,auto_explain'" "jit = off" "autovacuum = off" \
	"shared_buffers = '256MB'" "max_parallel_workers_per_gather = 0" >/dev/null || exit 1
trap 'ft_cluster_stop $D' EXIT
ft_psql $D "$P" -q -c "CREATE TABLE a AS SELECT g, g % 50 AS k FROM generate_series(1, 200000) g" \
	-c "CREATE INDEX a_g ON a (g)" -c "VACUUM ANALYZE a" \
	-c "CREATE FUNCTION tiny(n int) RETURNS bigint LANGUAGE plpgsql AS \$\$ DECLARE r bigint := 0; x bigint; BEGIN FOR i IN 1..n LOOP SELECT k INTO x FROM a WHERE g = i; r := r + x; END LOOP; RETURN r; END \$\$" >/dev/null
session() {
	echo "SET auto_explain.log_min_duration = '100s'; SET auto_explain.log_nested_statements = on;"
	echo "SELECT tiny($N) \\g /dev/null"
	echo "SELECT tiny($N) \\g /dev/null"
	for r in $(seq 1 "$R"); do
		for m in $MODES; do
			case $m in
			plain) s="SET auto_explain.log_analyze = off;" ;;
			stock) s="SET auto_explain.log_analyze = on; SET auto_explain.log_timing = on; SET fasttime.clock_source = clock_gettime; SET fasttime.node_timing = exact;" ;;
			stockoff) s="SET auto_explain.log_analyze = on; SET auto_explain.log_timing = off; SET fasttime.clock_source = clock_gettime; SET fasttime.node_timing = exact;" ;;
			exact) s="SET auto_explain.log_analyze = on; SET auto_explain.log_timing = on; SET fasttime.clock_source = try_tsc; SET fasttime.node_timing = exact;" ;;
			off) s="SET auto_explain.log_analyze = on; SET auto_explain.log_timing = off; SET fasttime.clock_source = try_tsc; SET fasttime.node_timing = exact;" ;;
			profile) s="SET auto_explain.log_analyze = on; SET auto_explain.log_timing = on; SET fasttime.clock_source = try_tsc; SET fasttime.node_timing = profile;" ;;
			default) s="SET auto_explain.log_analyze = on; SET auto_explain.log_timing = on; RESET fasttime.clock_source; RESET fasttime.node_timing;" ;;
			stockbuf) s="SET auto_explain.log_analyze = on; SET auto_explain.log_timing = on; SET auto_explain.log_buffers = on; SET fasttime.clock_source = clock_gettime; SET fasttime.node_timing = exact;" ;;
			exactbuf) s="SET auto_explain.log_analyze = on; SET auto_explain.log_timing = on; SET auto_explain.log_buffers = on; SET fasttime.clock_source = try_tsc; SET fasttime.node_timing = exact;" ;;
			defaultbuf) s="SET auto_explain.log_analyze = on; SET auto_explain.log_timing = on; SET auto_explain.log_buffers = on; RESET fasttime.clock_source; RESET fasttime.node_timing;" ;;
			*) echo "unknown mode $m" >&2; exit 1 ;;
			esac
			case $m in *buf) ;; *) s="SET auto_explain.log_buffers = off; $s" ;; esac
			echo "$s"
			echo "SELECT split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint AS s0 \\gset"
			echo "SELECT tiny($N) \\g /dev/null"
			echo "SELECT 'M', $r, '$m', split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint - :s0;"
		done
	done
}
: >"$OUT.times"
for alt in $(seq 1 "$A"); do
	for so in $SOS; do
		sed -i "s|^shared_preload_libraries = .*|shared_preload_libraries = '$so,auto_explain'|" $D/data/postgresql.conf
		ft_as_owner "$FT_BINDIR/pg_ctl" -D $D/data -w restart -l $D/server.log >/dev/null
		session | ft_psql $D "$P" -X -q -At 2>&1 |
			awk -F'|' -v so="$(basename "$so")" '/^M\|/ { print so, $2, $3, $4 / 1e6 }' >>"$OUT.times"
	done
done
python3 - "$OUT.times" "$MODES" "$N" <<'PY' | tee "$OUT"
import sys, statistics as st
rows = [l.split() for l in open(sys.argv[1])]
modes, n = sys.argv[2].split(), int(sys.argv[3])
groups, cur = [], None
for so, r, m, t in rows:
    if m == modes[0]:
        cur = {'so': so}
        groups.append(cur)
    cur[m] = float(t)
for so in dict.fromkeys(g['so'] for g in groups):
    gs = [g for g in groups if g['so'] == so and all(m in g for m in modes)]
    print(f"{so}: {len(gs)} rounds of tiny({n})")
    for m in modes:
        line = f"  {m:9s} {st.median(g[m] for g in gs) / n * 1e6:7.0f} ns/stmt"
        for base in ('stock', 'plain'):
            if base in modes:
                rs = sorted(g[m] / g[base] for g in gs)
                q = lambda p: rs[min(len(rs) - 1, int(p * len(rs)))]
                line += f"  /{base} {st.median(rs):.3f} [{q(0.25):.3f}-{q(0.75):.3f}]"
        print(line)
PY
