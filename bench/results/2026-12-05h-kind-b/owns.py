import json, sys, collections, statistics as st
rows=[json.loads(l) for l in open(sys.argv[1])]
def nodes(p, out, path=""):
    kids = p.get("Plans", [])
    name = path + "/" + p["Node Type"] + (":" + p.get("Alias","") if p.get("Alias") else "")
    tot = p.get("Shares Total Time", p.get("Actual Total Time", 0)) * p.get("Actual Loops", 1) if "Shares Total Time" not in p else p["Shares Total Time"]
    own = tot - sum((k.get("Shares Total Time") or k.get("Actual Total Time",0)) for k in kids if k.get("Parent Relationship") != "InitPlan")
    out[name] = (tot, own)
    for k in kids: nodes(k, out, name)
    return out
by = collections.defaultdict(dict)
for r in rows:
    if "plan" not in r or r["round"] == 0: continue
    by[(r["mode"], r["round"])][r["which"]] = (r["plan"]["Execution Time"], nodes(r["plan"]["Plan"], {}))
for mode in sorted(set(m for m, _ in by)):
    diffs = collections.defaultdict(list); dex = []
    for (m, rd), v in by.items():
        if m != mode or len(v) < 2: continue
        (eb, nb), (ew, nw) = v["base"], v["work"]
        dex.append(ew - eb)
        for k in nb: diffs[k].append(nw[k][1] - nb[k][1])
    print(mode, "n", len(dex), "dExec median %.1f" % st.median(dex))
    for k, d in diffs.items():
        print("   own d median %7.1f  mean %7.1f  %s" % (st.median(d), st.mean(d), k.split("/")[-1] + " " + "/".join(x.split(":")[0] for x in k.split("/")[1:-1])))
