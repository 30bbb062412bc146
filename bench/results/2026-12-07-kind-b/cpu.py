import subprocess, re, sys, statistics, random
tab = sys.argv[2] if len(sys.argv)>2 else 'w1'
q = sys.argv[3] if len(sys.argv)>3 else f"select count(*) from {tab}"
modes = {
 'plain': ("", q),
 'worker': ("set fasttime.tick_source=worker", f"explain analyze {q}"),
 'signal': ("set fasttime.tick_source=signal", f"explain analyze {q}"),
 'toff': ("", f"explain (analyze, timing off) {q}"),
}
rounds = int(sys.argv[1]) if len(sys.argv)>1 else 9
tp = subprocess.run("pgrep -f 'fasttime ticker'", shell=True, capture_output=True, text=True).stdout.split()[0]
res = {m: [] for m in modes}
script = f"{q};\n"*2
order=list(modes)
rd = lambda p: f"split_part(pg_read_file('/proc/{p}/schedstat'), ' ', 1)::bigint"
for r in range(rounds):
    random.shuffle(order)
    for m in order:
        pre, qq = modes[m]
        if pre: script += pre + ";\n"
        script += f"select {rd('self')} as s0, {rd(tp)} as t0, clock_timestamp() as w0 \\gset\n{qq} \\g /dev/null\n"
        script += f"select '@@', '{m}', {rd('self')} - :s0, {rd(tp)} - :t0, extract(epoch from clock_timestamp() - :'w0')*1e9;\n"
out = subprocess.run(["su","postgres","-c","/var/cache/fasttime-ci/pg18/bin/psql -X -q -At -p 56300 -d postgres"], input=script, capture_output=True, text=True)
for line in out.stdout.splitlines():
    if line.startswith('@@'):
        _, m, b, t, w = line.split('|'); res[m].append((int(b)/1e6, int(t)/1e6, float(w)/1e6))
if out.stderr: print(out.stderr[:500])
bp = statistics.median([x[0] for x in res['plain']])
for m in modes:
    b = statistics.median([x[0] for x in res[m]]); t = statistics.median([x[1] for x in res[m]]); s = statistics.median([x[0]+x[1] for x in res[m]])
    bmin = min(x[0] for x in res[m])
    print(f"{m:7s} n {len(res[m])} backend med {b:7.2f} ms (min {bmin:7.2f}) ticker med {t:6.3f} ms  sum med {s:7.2f}  backend/plain {b/bp:.3f} sum/plain {s/bp:.3f}")
