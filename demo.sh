#!/usr/bin/env bash
# A demo, for a scratch machine only: installs PostgreSQL 15 and build
# tools with apt-get (Debian's postgresql-15 package creates and starts a
# cluster of its own), builds fasttime and installs it into that
# PostgreSQL as root, and shows it working on a throwaway cluster that is
# removed afterwards.  Do not run it on a database host: to install
# fasttime there, see the README (Debian package or make install).
#
#   sudo ./demo.sh                         # Debian/Ubuntu, PostgreSQL 15
#   sudo PG_CONFIG=/path/to/pg_config ./demo.sh   # another installation
#
# Needs root for apt-get and make install; the cluster itself runs as the
# unprivileged user "postgres" (FT_TEST_USER to change).
set -euo pipefail
cd "$(dirname "$0")"

echo "== fasttime demo: for a scratch machine, not a database host (see README.md)"
if [ -z "${PG_CONFIG:-}" ]; then
	if command -v apt-get >/dev/null; then
		echo "== installing PostgreSQL 15 and build tools (apt-get)"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq
		# libipc-run-perl: for the TAP tests of test/run_all.sh
		apt-get install -y -qq --no-install-recommends build-essential \
			postgresql-15 postgresql-server-dev-15 libipc-run-perl >/dev/null
	fi
	export PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config
fi

echo "== building and installing fasttime for $("$PG_CONFIG" --version)"
make -s PG_CONFIG="$PG_CONFIG" clean >/dev/null
make -s PG_CONFIG="$PG_CONFIG"
make -s PG_CONFIG="$PG_CONFIG" install >/dev/null

. test/cluster.sh
dir=$(mktemp -d /tmp/fasttime-demo.XXXXXX)
port=${FT_DEMO_PORT:-55499}
trap 'ft_cluster_stop "$dir"; rm -rf "$dir"' EXIT
echo "== starting a throwaway cluster in $dir with shared_preload_libraries = 'fasttime'"
ft_cluster_start "$dir" "$port" "jit = off" "max_parallel_workers_per_gather = 0"
grep -A1 'fasttime:' "$dir/server.log" | sed 's/^.*\(LOG\|DETAIL\): */  /'

ft_psql "$dir" "$port" -q <<'SQL'
CREATE EXTENSION fasttime;
\echo
\echo == what fasttime found and chose
SELECT name, value FROM fasttime_status()
 WHERE name IN ('setting', 'effective_source', 'auto_reason', 'tsc_frequency_khz',
                'tsc_frequency_origin', 'kernel_clocksource', 'hypervisor',
                'ns_per_read_clock_gettime', 'ns_per_read_tsc');
\echo == cost of one clock read, per source (0.3 s each)
SELECT source, round(ns_per_loop::numeric, 1) AS ns_per_read, median_ns, verdict
  FROM fasttime_overhead(0.3);
\echo == EXPLAIN ANALYZE of count(*) over 3 million rows, four ways
CREATE TABLE demo AS SELECT g AS id FROM generate_series(1, 3000000) g;
VACUUM FREEZE ANALYZE demo;
SELECT count(*) FROM demo;
\echo -- TIMING OFF: no per-node clock reads at all
EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) SELECT count(*) FROM demo;
\echo -- stock timing: clock_gettime() twice per row
SET fasttime.clock_source = clock_gettime;
EXPLAIN (ANALYZE, COSTS OFF) SELECT count(*) FROM demo;
\echo -- fasttime: two ordered TSC reads per row (try_tsc falls back to clock_gettime where the TSC is not usable)
SET fasttime.clock_source = try_tsc;
SHOW fasttime.clock_source_status;
EXPLAIN (ANALYZE, COSTS OFF) SELECT count(*) FROM demo;
\echo -- fasttime profiled: exact for 20 ms, then each tick (1 ms, lengthening) credits the nodes running (rows exact)
SET fasttime.node_timing = profile;
EXPLAIN (ANALYZE, COSTS OFF) SELECT count(*) FROM demo;
SQL
echo "== done; the cluster is removed"
