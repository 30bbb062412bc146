#!/usr/bin/env bash
# The plain query's own additivity for truth.sh's hash_build pair: the
# md5 work's marginal cost under the Hash (A->B) against its marginal
# cost in the same scan under a bare count(*) (C->D).  No EXPLAIN.
set -euo pipefail
cd /work/main
port=${PORT:-56120} rounds=${ROUNDS:-30}
. bench/lib.sh
bench_cluster "$port" 1000
bpsql -f bench/sql/truth.sql >/dev/null
set_sql="SET enable_mergejoin=off; SET enable_nestloop=off; SET work_mem='256MB'; SET max_parallel_workers_per_gather=0;"
A="SELECT count(*) FROM truth_fact f JOIN truth_dim d ON d.id = f.dim_id WHERE d.grp >= 0"
B="SELECT count(*) FROM truth_fact f JOIN truth_dim d ON d.id = f.dim_id WHERE d.grp >= 0 AND md5(md5(md5(md5(d.pad)))) <> ''"
C="SELECT count(*) FROM truth_dim d WHERE d.grp >= 0"
D="SELECT count(*) FROM truth_dim d WHERE d.grp >= 0 AND md5(md5(md5(md5(d.pad)))) <> ''"
E="SELECT count(*) FROM (SELECT d.id FROM truth_dim d WHERE d.grp >= 0 ORDER BY d.id DESC OFFSET 0) s"
F="SELECT count(*) FROM (SELECT d.id FROM truth_dim d WHERE d.grp >= 0 AND md5(md5(md5(md5(d.pad)))) <> '' ORDER BY d.id DESC OFFSET 0) s"
names=(A B C D E F); qs=("$A" "$B" "$C" "$D" "$E" "$F")
for q in "${qs[@]}"; do bpsql -c "$set_sql $q" >/dev/null; bpsql -c "$set_sql EXPLAIN $q"; done
out=${OUT:-/work/scratch/s15/additive.txt}; : > "$out"
for r in $(seq 1 "$rounds"); do
  for k in 0 1 2 3 4 5; do
    i=$(( (k + r) % 6 ))
    t=$( { echo "$set_sql"; echo '\timing on'; echo "${qs[$i]};"; } | bpsql -At 2>&1 | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -1)
    echo "$r ${names[$i]} $t" >> "$out"
  done
done
echo done
