#!/usr/bin/env bash
# w1modes.sh PGBIN SOCKDIR PORT ROUNDS: W1 (count(*) over w1) in one server, modes interleaved
# (rotating order); backend CPU (schedstat) per statement; prints per mode min and median ratio to plain
set -u
B=$1 H=$2 P=$3 R=$4
declare -A M
M[plain]="SET fasttime.node_timing=exact|SELECT count(*)::text || 'r' FROM w1"
M[exact]="SET fasttime.node_timing=exact|EXPLAIN (ANALYZE) SELECT count(*) FROM w1"
M[timing_off]="SET fasttime.node_timing=exact|EXPLAIN (ANALYZE, TIMING OFF) SELECT count(*) FROM w1"
M[profile]="SET fasttime.node_timing=profile|EXPLAIN (ANALYZE) SELECT count(*) FROM w1"
M[profile_a5]="SET fasttime.node_timing=profile; SET fasttime.profile_after=5|EXPLAIN (ANALYZE) SELECT count(*) FROM w1"
M[profile_a0]="SET fasttime.node_timing=profile; SET fasttime.profile_after=0|EXPLAIN (ANALYZE) SELECT count(*) FROM w1"
M[profile_i2]="SET fasttime.node_timing=profile; SET fasttime.profile_interval=2|EXPLAIN (ANALYZE) SELECT count(*) FROM w1"
modes=(${MODES:-plain timing_off exact profile profile_a5 profile_a0 profile_i2})
n=${#modes[@]}
out=/tmp/w1modes.out; : > $out
for ((r=0; r<=R; r++)); do
  for ((i=0; i<n; i++)); do
    m=${modes[$(((i+r)%n))]}
    s=${M[$m]%%|*}; q=${M[$m]#*|}
    t=$($B/psql -h $H -p $P -U postgres -XAt -c "SET fasttime.clock_source=try_tsc; $s" -c "select split_part(pg_read_file('/proc/self/schedstat'),' ',1)" -c "$q" -c "select split_part(pg_read_file('/proc/self/schedstat'),' ',1)" | grep -E '^[0-9]+$' | paste -sd' ' | awk '{printf "%.3f", ($2-$1)/1e6}')
    [ $r -gt 0 ] && echo "$r $m $t" >> $out
  done
done
python3 - "$out" <<'PY'
import sys,collections,statistics
d=collections.defaultdict(dict)
for l in open(sys.argv[1]):
    r,m,t=l.split(); d[m][r]=float(t)
pl=d['plain']
for m in d:
    rs=[d[m][r]/pl[r] for r in d[m] if r in pl and pl[r]>0]
    q=statistics.quantiles(rs,n=4) if len(rs)>2 else [0,0,0]
    print(f"{m:12s} min/min {min(d[m].values())/min(pl.values()):.3f}  median paired {statistics.median(rs):.3f} (IQR {q[0]:.3f}-{q[2]:.3f})  median ms {statistics.median(d[m].values()):.1f}")
PY
