#!/usr/bin/env bash
# w1pair.sh PGBIN SO_A SO_B ROUNDS "SETTINGS" [QUERY]: two clusters (ports 55671/55672), one per build, same data;
# each round: EXPLAIN ANALYZE on A then B (order alternating), Execution Time; prints median B/A and quartiles
set -u
B=$1 A_SO=$2 B_SO=$3 R=$4 S=$5 Q=${6:-"SELECT count(*) FROM w1"}
for i in 1 2; do
  d=/tmp/w1pair$i; so=$([ $i = 1 ] && echo $A_SO || echo $B_SO); port=$((55670+i))
  if [ ! -d $d/d ]; then
    mkdir -p $d && chown postgres $d && runuser -u postgres -- $B/initdb -D $d/d -A trust >/dev/null
    cat >> $d/d/postgresql.conf <<EOC
port=$port
unix_socket_directories='$d'
shared_preload_libraries='$d/ft.so'
shared_buffers=512MB
jit=off
max_parallel_workers_per_gather=0
autovacuum=off
EOC
  fi
  cp $so $d/ft.so; chmod a+r $d/ft.so
  runuser -u postgres -- $B/pg_ctl -D $d/d -w stop >/dev/null 2>&1; runuser -u postgres -- $B/pg_ctl -D $d/d -l $d/log -w start >/dev/null || cat $d/log
  $B/psql -h $d -p $port -U postgres -Xqc "select 1 from pg_class where relname='w1'" | grep -q 1 || {
    $B/psql -h $d -p $port -U postgres -Xqc "create table w1 as select g from generate_series(1,5000000) g"; $B/psql -h $d -p $port -U postgres -Xqc "vacuum freeze analyze w1"; }
done
for r in $(seq 1 $R); do
  for i in $( [ $((r%2)) = 0 ] && echo "1 2" || echo "2 1"); do
    d=/tmp/w1pair$i; port=$((55670+i))
    SS=$S; [ $i = 2 ] && SS=${S2:-$S}
    t=$($B/psql -h $d -p $port -U postgres -XAt -c "$SS" -c "select split_part(pg_read_file('/proc/self/schedstat'),' ',1)" -c "EXPLAIN (ANALYZE, FORMAT JSON) $Q" -c "select split_part(pg_read_file('/proc/self/schedstat'),' ',1)" | grep -E '^[0-9]+$' | paste -sd' ' | awk '{printf "%.3f", ($2-$1)/1e6}')
    echo "$r $i $t"
  done
done > /tmp/w1pair.out
python3 - <<'PY'
import collections,statistics
d=collections.defaultdict(dict)
for l in open('/tmp/w1pair.out'):
    r,i,t=l.split(); d[r][i]=float(t)
rs=sorted(d[r]['2']/d[r]['1'] for r in d if '1' in d[r] and '2' in d[r])
q=statistics.quantiles(rs,n=4)
a=statistics.median(d[r]['1'] for r in d); b=statistics.median(d[r]['2'] for r in d)
print(f"B/A median {statistics.median(rs):.3f} IQR {q[0]:.3f}-{q[2]:.3f} n={len(rs)}; medians A {a:.1f} B {b:.1f} ms")
PY
