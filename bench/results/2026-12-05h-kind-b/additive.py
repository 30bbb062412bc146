import sys, statistics as st, collections
d = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    r, n, t = line.split()
    d[int(r)][n] = float(t)
rows = [v for v in d.values() if all(k in v for k in "ABCD")]
med = {k: st.median(v[k] for v in rows) for k in "ABCDEF" if all(k in v for v in rows)}
print("medians ms:", {k: round(x, 1) for k, x in med.items()})
dh = [v["B"] - v["A"] for v in rows]; ds = [v["D"] - v["C"] for v in rows]
rat = [a / b for a, b in zip(dh, ds)]
print("n=%d  d_hash median %.1f  d_scan median %.1f  ratio of medians %.3f" % (len(rows), st.median(dh), st.median(ds), st.median(dh) / st.median(ds)))
q = st.quantiles(rat, n=4)
print("per-round ratio median %.3f quartiles %.3f-%.3f" % (st.median(rat), q[0], q[2]))
if "E" in med:
    de = [v["F"] - v["E"] for v in rows]
    print("d_index median %.1f ratio to d_scan %.3f" % (st.median(de), st.median(de) / st.median(ds)))
