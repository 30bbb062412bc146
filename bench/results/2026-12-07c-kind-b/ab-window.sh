#!/bin/bash
# A/B: head vs fix, pinned cross-CPU (backend CPU0, worker CPU1) and unpinned
LIB=/var/cache/fasttime-ci/pg18/lib/postgresql/fasttime.so
for round in 1 2; do
 for v in head fix; do
  for pin in cross none; do
   cp /tmp/fasttime-$v.so $LIB
   su postgres -c "/var/cache/fasttime-ci/pg18/bin/pg_ctl -D /tmp/pgx18/data -l /tmp/pgx18/log restart -w" >/dev/null
   sleep 1
   PM=$(head -1 /tmp/pgx18/data/postmaster.pid); W=$(pgrep -f "fasttime ticker")
   if [ $pin = cross ]; then taskset -p 1 $PM >/dev/null; taskset -p 2 $W >/dev/null; fi
   out=$(python3 /work/main/bench/results/2026-12-07b-kind-b/winexp2.py 30 2>&1 | awk '{printf "%s/%s ", $1, $2}')
   echo "$round $v $pin $out"
  done
 done
done
cp /tmp/fasttime-fix.so $LIB
su postgres -c "/var/cache/fasttime-ci/pg18/bin/pg_ctl -D /tmp/pgx18/data -l /tmp/pgx18/log restart -w" >/dev/null
