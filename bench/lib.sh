# bench/lib.sh: a throwaway benchmark cluster with the data and harness
# loaded, shared by bench/matrix.sh and bench/accuracy.sh.  Source it, then
#   bench_cluster PORT ROWS [CONF...]
#                                start (CONF: more postgresql.conf lines),
#                                load bench/sql/setup.sql and
#                                bench/sql/harness.sql; stopped on exit
#   bpsql [psql args...]         a psql session on it
# PG_CONFIG selects the PostgreSQL installation (its installed fasttime).
# FT_BENCH_SHARED_BUFFERS sets shared_buffers (default 1GB).  A table of
# more than a quarter of it is scanned through a small ring of buffers,
# each page read again from the kernel's page cache on every run: W1 at
# 50M rows (1.7 GB) then measures memory copies whose time varies by
# +-15 % here; with 8GB its pages stay in shared buffers after the warm-up.

. test/cluster.sh

bench_cluster() {
	local port=$1 rows=$2
	shift 2
	BENCH_DIR=/tmp/fasttime-bench-$port
	trap 'ft_cluster_stop "$BENCH_DIR"; rm -rf "$BENCH_DIR"' EXIT
	ft_cluster_start "$BENCH_DIR" "$port" "jit = off" \
		"max_parallel_workers_per_gather = 0" "shared_buffers = '${FT_BENCH_SHARED_BUFFERS:-1GB}'" \
		"autovacuum = off" "track_io_timing = off" "log_min_messages = warning" "$@" ||
		return 1
	BENCH_PORT=$port
	bpsql -c "CREATE EXTENSION fasttime" || return 1
	bpsql -v rows="$rows" -v orders=1000000 -v customers=100000 -v products=10000 \
		-v wide=100000 -f bench/sql/setup.sql >/dev/null || return 1
	bpsql -f bench/sql/harness.sql >/dev/null
}

bpsql() { ft_psql "$BENCH_DIR" "$BENCH_PORT" -q "$@"; }
