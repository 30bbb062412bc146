#!/usr/bin/env bash
# perf record of W1 (5M rows) EXPLAIN ANALYZE as typed on 18: profile vs TIMING OFF vs exact, new backend each, perf following the postmaster's children
set -u
cd /work/main
export PG_CONFIG=${PG_CONFIG:-/tmp/ft-a-18/var/cache/fasttime-ci/pg18/bin/pg_config}
. test/cluster.sh
D=$(mktemp -d); chmod 755 $D; PORT=${PORT:-55730}
ft_cluster_start $D $PORT "shared_preload_libraries='fasttime'" "shared_buffers=1GB" "jit=off" "autovacuum=off" "max_parallel_workers_per_gather=0" || { echo start failed; cat $D/*.log; }
ft_psql $D $PORT -q -c "CREATE TABLE lotsarows(key int not null)" -c "INSERT INTO lotsarows SELECT generate_series(1,5000000)" -c "VACUUM FREEZE ANALYZE lotsarows"
pm=$(head -1 $D/data/postmaster.pid 2>/dev/null || head -1 $(find $D -name postmaster.pid | head -1))
OUT=/work/scratch/perfw1
for v in "profile:EXPLAIN (ANALYZE) SELECT count(*) FROM lotsarows" "off:EXPLAIN (ANALYZE, TIMING OFF) SELECT count(*) FROM lotsarows" "plain:SELECT count(*) FROM lotsarows"; do
  name=${v%%:*}; q=${v#*:}
  perf record -e cpu-clock -F 2000 -g -p $pm -o $OUT/$name.data 2>/dev/null >/dev/null &
  ppid=$!; sleep 1
  { for i in $(seq 15); do echo "$q;"; done; } | ft_psql $D $PORT -qAt > /dev/null
  kill -INT $ppid; wait $ppid
done
ft_cluster_stop $D
