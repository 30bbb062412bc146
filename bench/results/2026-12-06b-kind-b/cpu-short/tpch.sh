#!/bin/bash
# persistent TPC-H cluster for investigation
cd /work/main
export PG_CONFIG=/var/cache/fasttime-ci/pg18/bin/pg_config
. test/cluster.sh
D=/tmp/ft-tpch; P=56301
case "$1" in
start)
mkdir -p $D-lib; chmod 755 $D-lib; rm -f $D-lib/fasttime.so; cp ${SO:-/tmp/ft-s16-18/var/cache/fasttime-ci/pg18/lib/postgresql/fasttime.so} $D-lib/fasttime.so; chmod 755 $D-lib/fasttime.so
ft_cluster_start "$D" "$P" "jit = off" "autovacuum = off" "shared_buffers = '4GB'" "work_mem = '256MB'" "max_parallel_workers_per_gather = 0" "track_io_timing = off" "log_min_messages = warning" "shared_preload_libraries = '$D-lib/fasttime.so'"
;;
load) ft_psql "$D" "$P" -q -v scale=1 -f bench/sql/analytic.sql ;;
stop) ft_cluster_stop "$D" ;;
restart) ft_cluster_stop "$D"; rm -f $D-lib/fasttime.so; cp $SO $D-lib/fasttime.so; chmod 755 $D-lib/fasttime.so; ft_as_owner "$FT_BINDIR/pg_ctl" -D "$D/data" -l "$D/server.log" -w -t 60 start >/dev/null ;;
esac
