# window shape: per-run Aggregate exclusive, WindowAgg inclusive, ticks, worker ticks; worker vs signal interleaved
import subprocess, json, sys, random
PSQL=["/var/cache/fasttime-ci/pg18/bin/psql","-X","-At","-h","/tmp","-p","56300","-d","postgres","-U","postgres"]
Q="SELECT count(*), sum(w) FROM (SELECT sum(key) OVER (ORDER BY key % 1000, key ROWS BETWEEN 3 PRECEDING AND CURRENT ROW) AS w FROM shares_ints WHERE key <= 500000) s"
def run(mode):
    sets = "SET work_mem='256MB'; SET max_parallel_workers_per_gather=0;" + ("SET fasttime.tick_source=signal;" if mode=="sig" else "")
    st = "SELECT 'st=' || string_agg(name||':'||value, ',') FROM fasttime_status() WHERE name IN ('profile_worker_ticks','profile_ticks');"
    sql = sets + st + "EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON) " + Q + ";" + st
    out = subprocess.run(PSQL+["-c", sql] if False else PSQL, input=sql, capture_output=True, text=True).stdout
    sts = [l[3:] for l in out.splitlines() if l.startswith("st=")]
    j = out[out.index("["):out.rindex("]")+1]
    d = json.loads(j)[0]
    p = d["Plan"]; w = p["Plans"][0]
    def tot(n): return n["Actual Total Time"]*n["Actual Loops"]
    a_ex = tot(p) - tot(w)
    w_ex = tot(w) - sum(tot(c) for c in w.get("Plans",[]))
    def parse(s): return dict(kv.split(":") for kv in s.split(","))
    s0, s1 = parse(sts[0]), parse(sts[1])
    wt = int(s1["profile_worker_ticks"])-int(s0["profile_worker_ticks"])
    pt = int(s1["profile_ticks"])-int(s0["profile_ticks"])
    return dict(mode=mode, exec=d["Execution Time"], agg_ex=a_ex, wa_ex=w_ex, wa_tot=tot(w), ticks=pt, wticks=wt)
rows=[]
for r in range(int(sys.argv[1])):
    for m in (["worker","sig"] if r%2==0 else ["sig","worker"]):
        x=run(m); rows.append(x); print(json.dumps(x), flush=True)
