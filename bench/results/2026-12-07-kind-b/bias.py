# The Aggregate's own share of a plan (its time minus its child's, over
# its time) under exact timing, profiled timing with the tick worker, and
# with signals, interleaved.  Needs a server on port 56300 preloading
# fasttime (18 here) and, in database postgres:
#   CREATE FUNCTION burn(n int, v int) RETURNS int LANGUAGE plpgsql AS $$
#   DECLARE x int := 0; BEGIN FOR i IN 1..n LOOP x := x + 1; END LOOP;
#   RETURN x + v; END $$;
# Q (environment) is the query; argument: rounds.
import subprocess, json, sys, statistics
import os
q = os.environ.get("Q", "SELECT sum(burn(9500, x)) FROM (SELECT burn(22000, g) AS x FROM generate_series(1, 2000) g OFFSET 0) s")
modes = {'exact': "SET fasttime.node_timing = exact;", 'worker': "SET fasttime.tick_source = worker;", 'signal': "SET fasttime.tick_source = signal;"}
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
res = {m: [] for m in modes}
for r in range(rounds):
    for m, pre in modes.items():
        out = subprocess.run(["su","postgres","-c","/var/cache/fasttime-ci/pg18/bin/psql -X -At -p 56300 -d postgres"], input=f"SET max_parallel_workers_per_gather=0; SET fasttime.profile_interval_max = 1; {pre}\nEXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON) {q};\n", capture_output=True, text=True).stdout
        j = json.loads(out[out.index('['):])[0]['Plan']
        child = j['Plans'][0]
        while child.get('Node Type') == 'Subquery Scan' and child.get('Plans'): child = child['Plans'][0] if False else child; break
        own = (j['Actual Total Time'] - child['Actual Total Time']) / j['Actual Total Time']
        res[m].append(own)
for m in modes:
    print(m, ' '.join('%.3f' % x for x in res[m]), 'median %.3f' % statistics.median(res[m]))
print(json.dumps({k: v for k, v in j.items() if k in ('Node Type',)}), child['Node Type'])
