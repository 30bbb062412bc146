#!/usr/bin/env python3
"""cpu.py ROUNDS "Q22 Q11" "mode ..." -> per-query per-mode backend on-CPU ns, interleaved in one backend"""
import sys, subprocess, random, statistics, re, collections
rounds=int(sys.argv[1]); qs=sys.argv[2].split(); modes=sys.argv[3].split()
M={
 'plain': ('', None),
 'off': ('', 'ANALYZE, TIMING OFF'),
 'def': ('', 'ANALYZE'),
 'exact': ('SET fasttime.node_timing = exact;', 'ANALYZE'),
 'exact_tsc': ('SET fasttime.node_timing = exact; SET fasttime.clock_source = try_tsc;', 'ANALYZE'),
 'pa1000': ('SET fasttime.profile_after = 1000;', 'ANALYZE'),
 'int2': ('SET fasttime.profile_interval = 2;', 'ANALYZE'),
 'pa5': ('SET fasttime.profile_after = 5;', 'ANALYZE'),
 'pa10': ('SET fasttime.profile_after = 10;', 'ANALYZE'),
 'pa2': ('SET fasttime.profile_after = 2;', 'ANALYZE'),
 'pa0': ('SET fasttime.profile_after = 0;', 'ANALYZE'),
 'stock': ('SET fasttime.node_timing = exact; SET fasttime.clock_source = clock_gettime;', 'ANALYZE'),
}
lines=['\\set QUIET on','\\pset pager off']
order=[]
for r in range(rounds):
    for q in qs:
        ms=modes[:]; random.shuffle(ms)
        for m in ms:
            pre, ex = M[m]
            sql=open(f'/work/scratch/s17/{q}.sql').read().strip()
            stmt = sql if ex is None else f'EXPLAIN ({ex}) {sql}'
            lines.append('RESET ALL;'+pre)
            lines.append("SELECT split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint AS s0 \\gset")
            lines.append('\\o /dev/null')
            lines.append(stmt+';')
            lines.append('\\o')
            lines.append(f"SELECT 'M {r} {q} {m} ' || (split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint - :s0);")
inp='\n'.join(lines)+'\n'
p=subprocess.run(['/var/cache/fasttime-ci/pg18/bin/psql','-h','/tmp/ft-tpch','-p','56301','-U','postgres','-d','postgres','-At','-X'],input=inp,capture_output=True,text=True)
if p.returncode: print(p.stderr); sys.exit(1)
d=collections.defaultdict(list)
for l in p.stdout.splitlines():
    if l.startswith('M '):
        _,r,q,m,ns=l.split(); d[(int(r),q,m)]=int(ns)
print('query', ' '.join(f'{m:>16}' for m in modes))
geo=collections.defaultdict(list)
for q in qs:
    base=[d[(r,q,'plain')] for r in range(rounds)]
    row=[]
    for m in modes:
        rat=[d[(r,q,m)]/d[(r,q,'plain')] for r in range(rounds)]
        mn=min(d[(r,q,m)] for r in range(rounds))/min(base)
        med=statistics.median(rat)
        geo[m].append(med)
        row.append(f'{med:6.3f}/{mn:6.3f}')
    print(f'{q:5} plain={min(base)/1e6:7.1f}ms', ' '.join(f'{x:>16}' for x in row))
import math
print('geomean of paired medians', ' '.join(f'{m}={math.exp(sum(map(math.log,geo[m]))/len(geo[m])):.3f}' for m in modes))
