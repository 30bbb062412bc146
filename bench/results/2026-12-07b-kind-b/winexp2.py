import subprocess, json, sys
PSQL=["/var/cache/fasttime-ci/pg18/bin/psql","-X","-At","-h","/tmp","-p","56300","-d","postgres","-U","postgres"]
Q="SELECT count(*), sum(w) FROM (SELECT sum(key) OVER (ORDER BY key % 1000, key ROWS BETWEEN 3 PRECEDING AND CURRENT ROW) AS w FROM shares_ints WHERE key <= 500000) s"
for i in range(int(sys.argv[1])):
    sql = "SET work_mem='256MB'; SET max_parallel_workers_per_gather=0; EXPLAIN (ANALYZE, BUFFERS OFF, VERBOSE, CLOCK_SOURCE, FORMAT JSON) " + Q
    out = subprocess.run(PSQL, input=sql, capture_output=True, text=True).stdout
    d = json.loads(out[out.index("["):out.rindex("]")+1])[0]
    p=d["Plan"]; w=p["Plans"][0]
    tot=lambda n: n["Actual Total Time"]*n["Actual Loops"]
    extra={k:v for k,v in d.items() if k not in ("Plan","Planning","Triggers")}
    print(round(tot(p)-tot(w),1), round(tot(w)-sum(tot(c) for c in w["Plans"]),1), json.dumps({k:extra[k] for k in extra if 'Tick' in k or 'Timing' in k or 'Execution' in k}), flush=True)
