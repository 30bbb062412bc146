#!/bin/bash
# perf of W1 50M on 18: typed (profiled, default) vs TIMING OFF
set -u
cd /work/main
export PG_CONFIG=${PGC:?}
. test/cluster.sh
D=/tmp/s14/c18-$TAG; P=${PORT:-55810}
ft_cluster_start $D $P "shared_preload_libraries='fasttime'" "jit=off" "autovacuum=off" "shared_buffers='3GB'" "max_parallel_workers_per_gather=0" >/dev/null || exit 1
ft_psql $D $P -q -c "CREATE TABLE IF NOT EXISTS lotsarows(key int not null)" -c "TRUNCATE lotsarows" -c "INSERT INTO lotsarows SELECT generate_series(1,50000000)" -c "VACUUM FREEZE ANALYZE lotsarows"
for m in typed off; do
  case $m in typed) pre="EXPLAIN (ANALYZE)";; off) pre="EXPLAIN (ANALYZE, TIMING OFF, BUFFERS)";; esac
  fifo=/tmp/s14/fifo.$TAG.$m; rm -f $fifo; mkfifo $fifo
  { echo "SELECT pg_backend_pid();"; echo "SELECT count(*) FROM lotsarows;"; read -r _ < $fifo;
    for i in 1 2 3 4 5 6; do echo "$pre SELECT count(*) FROM lotsarows;"; done; } | ft_psql $D $P -At > /tmp/s14/out.$TAG.$m &
  cl=$!
  sleep 3; pid=$(head -1 /tmp/s14/out.$TAG.$m)
  perf record -q -e cpu-clock -F 5000 -p $pid -o /tmp/s14/perf.$TAG.$m.data 2>/dev/null &
  pp=$!; sleep 1; echo go > $fifo; wait $cl; kill -INT $pp; wait $pp
done
ft_cluster_stop $D
