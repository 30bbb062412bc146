#!/usr/bin/env bash
# overlap.sh NAME PORT [all]: the Aggregate's own time of truth pair leaf_qual
# (base and work query, 6 rounds each) under profiled timing with the TSC
# and with clock_gettime ticks, and with "all" also 1 ms ticks throughout
# and exact timing.  PG_CONFIG names the installation.  Prints one line a
# run: config, base|work, Execution Time, agg_own, the scan's time.
cd "$(dirname "$0")/../../.."
. test/cluster.sh
dir=/tmp/exp-$1; port=$2
ft_cluster_start "$dir" "$port" "shared_buffers = 1GB" >/dev/null || exit 1
q() { ft_psql "$dir" "$port" -At -q "$@"; }
q -c "CREATE EXTENSION IF NOT EXISTS fasttime" -c "CREATE TABLE lotsarows AS SELECT g AS key FROM generate_series(1, 5000000) g" -c "VACUUM ANALYZE lotsarows" >/dev/null
base="SELECT count(*) FROM lotsarows WHERE key >= 0"
work="SELECT count(*) FROM lotsarows WHERE key >= 0 AND ln(key::float8) >= 0 AND sqrt(key::float8) >= 0 AND cos(key::float8) >= -2 AND sin(key::float8) >= -2"
cfgs=("profile:SET fasttime.clock_source = try_tsc; SET fasttime.node_timing = profile"
	"profile_cg:SET fasttime.clock_source = clock_gettime; SET fasttime.node_timing = profile")
[ "${3:-}" = all ] && cfgs+=("profile1:SET fasttime.clock_source = try_tsc; SET fasttime.node_timing = profile; SET fasttime.profile_interval_max = 1"
	"exact:SET fasttime.clock_source = try_tsc")
for cfg in "${cfgs[@]}"; do
  name=${cfg%%:*}; sets=${cfg#*:}
  for r in 1 2 3 4 5 6; do
    for w in base work; do
      sql=$base; [ $w = work ] && sql=$work
      q -c "SET max_parallel_workers_per_gather = 0; $sets" -c "EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON) $sql" | python3 -c "
import json,sys
d=json.load(sys.stdin)[0]; a=d['Plan']; s=a['Plans'][0]
print('$name','$w', round(d['Execution Time'],1), 'agg_own', round(a['Actual Total Time']-s['Actual Total Time'],1), 'scan', round(s['Actual Total Time'],1))"
    done
  done
done
ft_cluster_stop "$dir"
