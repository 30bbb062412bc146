#!/usr/bin/env python3
"""ab.py ALTS ROUNDS OUT A.so B.so : alternate builds on the tpch cluster (restart), per item backend CPU ns"""
import sys, subprocess, random, statistics, collections, os
alts=int(sys.argv[1]); rounds=int(sys.argv[2]); out=sys.argv[3]; sos=sys.argv[4:]
PSQL=['/var/cache/fasttime-ci/pg18/bin/psql','-h','/tmp/ft-tpch','-p','56301','-U','postgres','-d','postgres','-At','-X']
def q(n): return open(f'/work/scratch/s17/{n}.sql').read().strip()
ITEMS={
 'Q22/ex': ('', 'EXPLAIN (ANALYZE) '+q('Q22')),
 'Q11/ex': ('', 'EXPLAIN (ANALYZE) '+q('Q11')),
 'Q19/ex': ('', 'EXPLAIN (ANALYZE) '+q('Q19')),
 'Q2/ex': ('', 'EXPLAIN (ANALYZE) '+q('Q2')),
 'Q22/ae': ("LOAD 'auto_explain'; SET auto_explain.log_min_duration = '100s'; SET auto_explain.log_analyze = on;", q('Q22')),
 'Q11/ae': ("LOAD 'auto_explain'; SET auto_explain.log_min_duration = '100s'; SET auto_explain.log_analyze = on;", q('Q11')),
 'md15/ae': ("LOAD 'auto_explain'; SET auto_explain.log_min_duration = '100s'; SET auto_explain.log_analyze = on;", "SELECT count(*) FROM generate_series(1, 20000) g WHERE md5(repeat(g::text, 30)) <> 'x'"),
}
res=collections.defaultdict(dict)
for a in range(alts):
    order = sos if a%2==0 else sos[::-1]
    for so in order:
        env=dict(os.environ, SO=so)
        subprocess.run(['/work/scratch/s17/tpch.sh','restart'],env=env,check=True,capture_output=True)
        lines=['\\set QUIET on']
        # warm-up
        for it,(pre,sql) in ITEMS.items():
            lines += ['RESET ALL;'+pre, '\\o /dev/null', sql+';', '\\o']
        for r in range(rounds):
            its=list(ITEMS); random.shuffle(its)
            for it in its:
                pre,sql=ITEMS[it]
                lines.append('RESET ALL;'+pre)
                lines.append("SELECT split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint AS s0 \\gset")
                lines += ['\\o /dev/null', sql+';', '\\o']
                lines.append(f"SELECT 'M {r} {it} ' || (split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint - :s0);")
        p=subprocess.run(PSQL,input='\n'.join(lines)+'\n',capture_output=True,text=True)
        if p.returncode: print(p.stderr); sys.exit(1)
        for l in p.stdout.splitlines():
            if l.startswith('M '):
                _,r,it,ns=l.split(); res[(a,int(r),it)][so]=int(ns)
        print(f'alt {a} {os.path.basename(os.path.dirname(so)) if False else so[-60:]} done', file=sys.stderr)
with open(out,'w') as f:
    for (a,r,it),d in sorted(res.items()):
        for so,ns in d.items(): f.write(f'{a} {r} {it} {so} {ns}\n')
A,B=sos[0],sos[1]
print(f'item  A_median_ms  B/A paired median (q1-q3) n')
for it in ITEMS:
    rat=[d[B]/d[A] for (a,r,i),d in res.items() if i==it and A in d and B in d]
    am=statistics.median([d[A] for (a,r,i),d in res.items() if i==it])/1e6
    qs=statistics.quantiles(rat,n=4)
    print(f'{it:8} {am:8.1f}  {statistics.median(rat):.4f} ({qs[0]:.4f}-{qs[2]:.4f}) {len(rat)}')
