import subprocess, re, sys, statistics, random
tab = sys.argv[2] if len(sys.argv)>2 else 'w1'
modes = {
 'plain': ("", f"select count(*) from {tab}"),
 'worker': ("set fasttime.tick_source=worker", f"explain analyze select count(*) from {tab}"),
 'signal': ("set fasttime.tick_source=signal", f"explain analyze select count(*) from {tab}"),
 'toff': ("", f"explain (analyze, timing off) select count(*) from {tab}"),
}
rounds = int(sys.argv[1]) if len(sys.argv)>1 else 9
res = {m: [] for m in modes}
script = f"select count(*) from {tab};\n"*2 + "\\timing on\n"
order=list(modes)
for r in range(rounds):
    random.shuffle(order)
    for m in order:
        pre, q = modes[m]
        if pre: script += "\\timing off\n" + pre + ";\n\\timing on\n"
        script += f"\\echo @@{m}\n{q};\n"
out = subprocess.run(["su","postgres","-c","/var/cache/fasttime-ci/pg18/bin/psql -X -q -p 56300 -d postgres"], input=script, capture_output=True, text=True).stdout
cur=None
for line in out.splitlines():
    if line.startswith('@@'): cur=line[2:]
    mm = re.match(r"Time: ([0-9.]+) ms", line)
    if mm and cur: res[cur].append(float(mm.group(1))); cur=None
base = min(res['plain']); bm = statistics.median(res['plain'])
for m in modes:
    print(f"{m:8s} n {len(res[m])} min {min(res[m]):8.2f} med {statistics.median(res[m]):8.2f}  min/plain {min(res[m])/base:.3f} med/plain {statistics.median(res[m])/bm:.3f}")
