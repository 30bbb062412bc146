#!/usr/bin/env bash
# bench/lean_pair.sh -- two or more fasttime builds compared on the same
# statements by the backend's own CPU time, the builds alternated by
# restarting one server (each .so preloaded by absolute path, nothing
# installed), as bench/nested_cpu.sh does.
#
#   PG_CONFIG=... bench/lean_pair.sh "A.so B.so [...]" PORT ALTERNATIONS ROUNDS "ITEMS" OUT
#
# Data: bench/sql/setup.sql with lotsarows 5M rows (W1; FT_LEAN_ROWS) and smaller join
# and wide tables than bench/clock_cost.sh's (FT_LEAN_ORDERS, default
# 200000 orders; 20000 customers, 2000 products, FT_LEAN_WIDE 20000 wide
# rows), so that a round takes seconds.  Items (workload/mode):
#   W1..W4/typed    EXPLAIN (ANALYZE) as typed (18: BUFFERS on)
#   W1..W4/buf      EXPLAIN (ANALYZE, BUFFERS)
#   W1..W4/offbuf   EXPLAIN (ANALYZE, TIMING OFF, BUFFERS)
#   W1..W4/nobuf    EXPLAIN (ANALYZE, BUFFERS OFF)
#   W1..W4/bufwal   EXPLAIN (ANALYZE, BUFFERS, WAL)
#   W1/nd           W1/typed with fasttime.derived_usage = off
#   P1/typed        a parallel query whose Gather returns 1.67M rows
#                   (2 workers), EXPLAIN (ANALYZE): the leader's CPU
#   OLTP/ae         20000 one-row index lookups in a PL/pgSQL loop under
#                   auto_explain (log_analyze, log_buffers,
#                   log_nested_statements; nothing logged)
# Every item runs with fasttime.clock_source = try_tsc and
# fasttime.node_timing = exact where the build has it (exact timing,
# ordered reads), or FT_LEAN_NODE_TIMING (profile: profiled timing).
# The builds' file names must differ (the report names them so).  Each
# round runs every item once; each alternation runs ROUNDS rounds per
# build.  The report gives, per item, the median over
# (alternation, round) pairs of each build's time over the first build's
# in the same alternation and round, with the quartiles and the extremes,
# and the first build's median ms.  Raw lines (so alt round item ms) go to
# OUT.times.
set -u
cd "$(dirname "$0")/.."
SOS=$1 P=$2 A=$3 R=$4 ITEMS=$5 OUT=$6
. test/cluster.sh
D=/tmp/ft-lean-pair-$P
set -- $SOS
ft_cluster_start $D "$P" "shared_preload_libraries = '$1,auto_explain'" "jit = off" "autovacuum = off" \
	"shared_buffers = '1GB'" "max_parallel_workers_per_gather = 0" "log_min_messages = warning" >/dev/null || exit 1
trap 'ft_cluster_stop $D' EXIT
ft_psql $D "$P" -q -v rows="${FT_LEAN_ROWS:-5000000}" -v orders="${FT_LEAN_ORDERS:-200000}" -v customers=20000 \
	-v products=2000 -v wide="${FT_LEAN_WIDE:-20000}" -f bench/sql/setup.sql >/dev/null || exit 1
ft_psql $D "$P" -q -f bench/sql/harness.sql >/dev/null || exit 1
ft_psql $D "$P" -q -c "CREATE TABLE a AS SELECT g, g % 50 AS k FROM generate_series(1, 200000) g" \
	-c "CREATE INDEX a_g ON a (g)" -c "VACUUM ANALYZE a" \
	-c "CREATE FUNCTION tiny(n int) RETURNS bigint LANGUAGE plpgsql AS \$\$ DECLARE r bigint := 0; x bigint; BEGIN FOR i IN 1..n LOOP SELECT k INTO x FROM a WHERE g = i; r := r + x; END LOOP; RETURN r; END \$\$" >/dev/null
# the workloads' queries and settings, from harness.sql
declare -A Q S
for w in W1 W2 W3 W4; do
	Q[$w]=$(ft_psql $D "$P" -At -c "SELECT query FROM bench_workloads WHERE id = '$w'")
	S[$w]=$(ft_psql $D "$P" -At -c "SELECT regexp_replace(settings, '([a-z_]+)=([^;]+)', 'SET \1 = ''\2'';', 'g') FROM bench_workloads WHERE id = '$w'")
done
item_sql() {
	local w=${1%/*} m=${1#*/} pre q s=""
	case $m in
	typed) pre="EXPLAIN (ANALYZE)" ;;
	buf) pre="EXPLAIN (ANALYZE, BUFFERS)" ;;
	offbuf) pre="EXPLAIN (ANALYZE, TIMING OFF, BUFFERS)" ;;
	nobuf) pre="EXPLAIN (ANALYZE, BUFFERS OFF)" ;;
	bufwal) pre="EXPLAIN (ANALYZE, BUFFERS, WAL)" ;;
	nd) pre="EXPLAIN (ANALYZE)"; s="SET fasttime.derived_usage = off;" ;;
	ae) pre="" ;;
	*) echo "unknown mode $m" >&2; exit 1 ;;
	esac
	case $w in
	W?) q="$pre ${Q[$w]}"; s="$s ${S[$w]}" ;;
	P1) q="$pre SELECT key FROM lotsarows WHERE key % 3 <> 0"
		s="$s SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;" ;;
	OLTP) q="SELECT tiny(20000)"
		s="SET auto_explain.log_min_duration = '100s'; SET auto_explain.log_nested_statements = on; SET auto_explain.log_analyze = on; SET auto_explain.log_buffers = on;" ;;
	esac
	echo "RESET ALL; SET fasttime.clock_source = try_tsc; $s"
	# exact timing (or FT_LEAN_NODE_TIMING) whatever the build's default
	# (a build without fasttime.node_timing has exact timing only)
	echo "SELECT set_config(name, '${FT_LEAN_NODE_TIMING:-exact}', false) FROM pg_settings WHERE name = 'fasttime.node_timing' \\g /dev/null"
	echo "SELECT split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint AS s0 \\gset"
	printf '%s \\g /dev/null\n' "$(echo "$q" | tr '\n' ' ')"
	echo "SELECT 'M', :r, '$1', split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint - :s0;"
}
session() {
	for it in $ITEMS; do echo "\\set r 0"; item_sql "$it"; done	# warm-up
	for r in $(seq 1 "$R"); do
		echo "\\set r $r"
		# each round starts one item further on
		set -- $ITEMS
		local n=$# k
		local arr=("$@")
		for ((k = 0; k < n; k++)); do item_sql "${arr[$(((k + r) % n))]}"; done
	done
}
: >"$OUT.times"
for alt in $(seq 1 "$A"); do
	for so in $SOS; do
		sed -i "s|^shared_preload_libraries = .*|shared_preload_libraries = '$so,auto_explain'|" $D/data/postgresql.conf
		ft_as_owner "$FT_BINDIR/pg_ctl" -D $D/data -w restart -l $D/server.log >/dev/null
		vec=$(ft_psql $D "$P" -At -c "SELECT 1" >/dev/null; ft_psql $D "$P" -At -c "SHOW fasttime.clock_source_status" 2>/dev/null)
		session | ft_psql $D "$P" -X -q -At 2>&1 |
			awk -F'|' -v so="$(basename "$so")" -v alt="$alt" '/^M\|/ { if ($2 > 0) print so, alt, $2, $3, $4 / 1e6; next } /ERROR/ { print > "/dev/stderr" }' >>"$OUT.times"
	done
	echo "alternation $alt done" >&2
done
python3 - "$OUT.times" "$SOS" "$ITEMS" <<'PY' | tee "$OUT"
import sys, statistics as st, os
rows = [l.split() for l in open(sys.argv[1])]
sos = [os.path.basename(s) for s in sys.argv[2].split()]
items = sys.argv[3].split()
t = {(so, int(a), int(r), it): float(ms) for so, a, r, it, ms in rows}
base = sos[0]
print(f"ratios to {base}: median [quartiles] (min-max) over alternation x round pairs; {base}'s median ms")
for it in items:
    for so in sos[1:]:
        rs = sorted(t[(so, a, r, i)] / t[(base, a, r, i)] for (b, a, r, i) in t if b == base and i == it and (so, a, r, i) in t)
        if not rs:
            continue
        q = lambda p: rs[min(len(rs) - 1, int(p * len(rs)))]
        bm = st.median(v for (b, a, r, i), v in t.items() if b == base and i == it)
        print(f"  {it:12s} {so:16s} {st.median(rs):.3f} [{q(0.25):.3f}-{q(0.75):.3f}] ({rs[0]:.3f}-{rs[-1]:.3f}) n={len(rs)}  base {bm:.1f} ms")
PY
