#!/usr/bin/env python3
"""bench/accuracy.py DIR RUNS MAJOR STATUS "W1 W2 ..." [COMMAND] [MACHINE] [SETTINGS]

Formats bench/accuracy.sh's EXPLAIN (ANALYZE, FORMAT JSON) outputs
(DIR/W.MODE.R.json, and the backend's profile tick count in DIR/W.MODE.R.ticks
when present) as a markdown report.  Modes: exact (fasttime.node_timing =
exact, every call timed: the reference), profile (node_timing = profile,
try_tsc), profile_cg (profile, clock_gettime) and exact2, exact run again in
the same time window: the check's own noise floor.

The target it judges: on plans of >= 200 ms, per node holding >= 10 % of
the plan's time whose calls take >= 1 us, profiled timing within +-5 % of
exact timing's mean.  Per workload: the plan's Execution Time (mean over the
exact runs); per plan node (matched by position in the plan tree) its
inclusive time, Actual Total Time x Actual Loops; its share, inclusive time
over the root's; its time per call, inclusive time over (rows + loops),
rows being Actual Rows x Actual Loops (a call returns a row or ends a loop).
A node is judged when the plan's exact mean Execution Time >= 200 ms, its
exact mean share >= 10 % and its time per call >= 1 us.  Per judged node:
exact mean, and for profile, profile_cg and exact2 the bias (mean / exact
mean - 1) and one run's error (root mean square of each run's deviation
from the exact mean, relative).  Also per mode: runs in which a child read
longer than its parent (inclusive times, allowing for EXPLAIN's rounding),
and whether rows and loops were the same in every run.  The nodes not
judged are listed with the reason.

The same judgement is made a second time on each node's share of its own
run (its inclusive time over the root's in that run, against exact
timing's mean share): a host whose speed moves between runs moves every
node's time, which the first judgement counts as error in every mode (the
floor shows how much), while a share moves only when time goes to the
wrong node.  The root's share is 1 in every mode: it is judged by time
only.
"""
import json
import math
import sys

MODES = ("exact", "profile", "profile_cg", "exact2")
REF = "exact"
COMPARED = ("profile", "profile_cg", "exact2")
FLOOR = "exact2"

PLAN_MS = 200.0        # plan's exact mean Execution Time, ms
SHARE = 0.10           # node's share of the root's inclusive time
PER_CALL_MS = 1e-3     # node's time per call, ms (1 us)
TARGET = 0.05          # |bias| within target


def nodes(plan, parent, depth, out):
    """Plan nodes in pre-order."""
    loops = plan.get("Actual Loops", 0)
    per_loop = plan.get("Actual Total Time", 0.0)
    rows = plan.get("Actual Rows", 0)
    name = plan["Node Type"]
    if "Relation Name" in plan:
        name += " on " + plan["Relation Name"]
    if "Subplan Name" in plan:
        name += " (%s)" % plan["Subplan Name"]
    me = len(out)
    out.append({"type": plan["Node Type"], "name": name, "depth": depth,
                "total": per_loop * loops, "rows": rows, "loops": loops,
                "per_loop": per_loop, "parent": parent})
    for child in plan.get("Plans", []):
        nodes(child, me, depth + 1, out)
    return out


def load(d, w, m, r):
    with open("%s/%s.%s.%d.json" % (d, w, m, r)) as f:
        top = json.load(f)[0]
    ticks = None
    try:
        with open("%s/%s.%s.%d.ticks" % (d, w, m, r)) as f:
            ticks = int(f.read().split()[-1])
    except (OSError, ValueError, IndexError):
        pass
    return {"nodes": nodes(top["Plan"], None, 0, []),
            "exec": top.get("Execution Time", 0.0), "ticks": ticks}


def child_longer(run):
    """Nodes whose inclusive time exceeds their parent's by more than
    EXPLAIN's rounding (0.0005 ms per loop)."""
    bad = []
    for i, n in enumerate(run):
        p = n["parent"]
        if p is None or n["loops"] == 0:
            continue
        tol = 0.0005 * (n["loops"] + run[p]["loops"]) + 1e-9
        if n["total"] > run[p]["total"] + tol:
            bad.append(i)
    return bad


def mean(xs):
    return sum(xs) / len(xs)


def rms(xs, ref):
    return math.sqrt(sum((x - ref) ** 2 for x in xs) / len(xs))


def pct(x, signed=True):
    return ("%+.1f %%" if signed else "%.1f %%") % (100.0 * x)


def main():
    d, runs, major, status, workloads = sys.argv[1:6]
    command = sys.argv[6] if len(sys.argv) > 6 else "bench/accuracy.sh"
    machine = sys.argv[7] if len(sys.argv) > 7 else ""
    settings = sys.argv[8] if len(sys.argv) > 8 else ""
    runs = int(runs)
    workloads = workloads.split()

    print("### PostgreSQL %s: profiled timing against exact timing" % major)
    print()
    print("- Machine: %stry_tsc timed with %s." % (machine + "; " if machine else "", status))
    print("- Command: `%s`" % command)
    if settings:
        print("- Settings: %s." % settings)
    print("- Method: %d run%s after a warm-up; in each, the four modes in an order that rotates"
          " from run to run, one server, each EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON) in"
          " a transaction of its own: exact (fasttime.node_timing = exact, the reference),"
          " profile (node_timing = profile, try_tsc), profile_cg (profile, clock_gettime),"
          " exact2 (exact again: the floor, what this check reads between two identical"
          " configurations)." % (runs, "" if runs == 1 else "s"))
    print("- Criterion (the target): on plans of >= %d ms (exact mean Execution Time), per"
          " node holding >= %d %% of the plan's time (exact mean inclusive time, Actual Total"
          " Time x Actual Loops, over the root's) whose calls take >= 1 us (inclusive time"
          " over rows + loops, rows = Actual Rows x Actual Loops: where exact timing's own"
          " reads weigh little), profiled timing within +-%d %% of exact timing's mean."
          " Bias = mode's mean / exact mean - 1; one run = root mean square of each run's"
          " deviation from the exact mean, relative: the error to expect from a single"
          " EXPLAIN ANALYZE."
          % (PLAN_MS, SHARE * 100, TARGET * 100))
    print()

    judged = []        # (w, node name, e, share, per_call, {m: (bias, one)}, note)
    left_out = []      # (w, node name, e, share, per_call, profile bias, why)
    plans = []         # per workload: plan-level cells
    flips = {m: 0 for m in MODES}
    same = {m: True for m in MODES}
    plan_runs = 0
    for w in workloads:
        data = {m: [load(d, w, m, r) for r in range(1, runs + 1)] for m in MODES}
        plan_runs += runs
        ref = data[REF][0]["nodes"]
        structure = [n["type"] for n in ref]
        shape = [(n["type"], n["rows"], n["loops"]) for n in ref]
        w_same = {}
        w_flips = {}
        comparable = True
        for m in MODES:
            w_same[m] = all([(n["type"], n["rows"], n["loops"]) for n in run["nodes"]] == shape
                            for run in data[m])
            same[m] = same[m] and w_same[m]
            if not all([n["type"] for n in run["nodes"]] == structure for run in data[m]):
                comparable = False
            w_flips[m] = sum(1 for run in data[m] if child_longer(run["nodes"]))
            flips[m] += w_flips[m]
        ex = {m: mean([run["exec"] for run in data[m]]) for m in MODES}
        ticks = {}
        for m in ("profile", "profile_cg"):
            t = [run["ticks"] for run in data[m] if run["ticks"] is not None]
            ticks[m] = "%.0f" % mean(t) if t else "n/a"
        plans.append((w, ex, ticks, w_same, w_flips))
        if not comparable:
            left_out.append((w, "(every node)", None, None, None, None,
                             "plan shapes differ between runs: nodes not comparable"))
            continue
        plan_ms = ex[REF]
        root = mean([run["nodes"][0]["total"] for run in data[REF]])
        for i, node in enumerate(ref):
            tot = {m: [run["nodes"][i]["total"] for run in data[m]] for m in MODES}
            e = mean(tot[REF])
            calls = mean([run["nodes"][i]["rows"] * run["nodes"][i]["loops"]
                          + run["nodes"][i]["loops"] for run in data[REF]])
            share = e / root if root > 0 else 0.0
            per_call = e / calls if calls > 0 else None
            name = "&nbsp;&nbsp;" * node["depth"] + node["name"]
            res = {}
            sres = {}
            shares = {m: [run["nodes"][i]["total"] / run["nodes"][0]["total"]
                          if run["nodes"][0]["total"] > 0 else 0.0 for run in data[m]]
                      for m in MODES}
            es = mean(shares[REF])
            for m in COMPARED:
                if e > 0:
                    res[m] = (mean(tot[m]) / e - 1.0, rms(tot[m], e) / e)
                else:
                    res[m] = None
                if es > 0 and i > 0:
                    sres[m] = (mean(shares[m]) / es - 1.0, rms(shares[m], es) / es)
                else:
                    sres[m] = None
            why = []
            if plan_ms < PLAN_MS:
                why.append("plan < %d ms (%.0f ms)" % (PLAN_MS, plan_ms))
            if share < SHARE:
                why.append("share < %d %%" % (SHARE * 100))
            if per_call is None:
                why.append("never executed")
            elif per_call < PER_CALL_MS:
                why.append("calls < 1 us")
            if why:
                pb = res["profile"][0] if res["profile"] else None
                left_out.append((w, name, e, share, per_call, pb, ", ".join(why)))
                continue
            note = ""
            if node["loops"] > 1 and node["per_loop"] < 0.05:
                note = ("per-loop time %.3f ms, printed to 0.001 ms: rounding up to +-%.0f %%"
                        % (node["per_loop"], 100.0 * 0.0005 / max(node["per_loop"], 1e-9)))
            judged.append((w, name, e, share, per_call, res, note, sres))

    print("#### Plans")
    print()
    print("Execution Time, mean ms (bias against exact); profile ticks per run (mean);"
          " rows and loops the same in every run of each mode; runs in which a child read"
          " longer than its parent, per mode (exact / profile / profile_cg / exact2).")
    print()
    print("| workload | exact ms | profile | profile_cg | exact2 | ticks (profile / cg) |"
          " rows & loops | child > parent runs |")
    print("|---|---:|---:|---:|---:|---:|---|---:|")
    for w, ex, ticks, w_same, w_flips in plans:
        e = ex[REF]
        cells = ["%.1f (%s)" % (ex[m], pct(ex[m] / e - 1.0) if e > 0 else "n/a")
                 for m in COMPARED]
        diff = [m for m in MODES if not w_same[m]]
        print("| %s | %.1f | %s | %s / %s | %s | %s |"
              % (w, e, " | ".join(cells), ticks["profile"], ticks["profile_cg"],
                 "same" if not diff else "DIFFER (" + ", ".join(diff) + ")",
                 " / ".join(str(w_flips[m]) for m in MODES)))
    print()

    print("#### Judged nodes")
    print()
    if judged:
        print("| workload | node | exact ms | share | us/call | profile | one run |"
              " profile_cg | one run | floor (exact2) | one run |"
              " within +-5 % (profile / cg / floor) | note |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
        for w, name, e, share, per_call, res, note, _ in judged:
            cells = []
            ok = []
            for m in COMPARED:
                b, one = res[m]
                cells += [pct(b), pct(one, False)]
                ok.append("yes" if abs(b) <= TARGET else "**no**")
            print("| %s | %s | %.2f | %.1f %% | %.2f | %s | %s | %s |"
                  % (w, name, e, 100.0 * share, per_call * 1000.0, " | ".join(cells),
                     " / ".join(ok), note))
    else:
        print("No node met the criterion (see the nodes not judged below).")
    print()

    by_share = [j for j in judged if j[7]["profile"] is not None]
    if by_share:
        print("#### Judged nodes, as shares of their own run")
        print()
        print("Each run's inclusive time of the node over its root's, against exact timing's"
              " mean share: the host's speed between runs cancels (the root is left out: its"
              " share is 1).")
        print()
        print("| workload | node | exact share | profile | one run | profile_cg | one run |"
              " floor (exact2) | one run | within +-5 % (profile / cg / floor) |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
        for w, name, e, share, per_call, res, note, sres in by_share:
            cells = []
            ok = []
            for m in COMPARED:
                b, one = sres[m]
                cells += [pct(b), pct(one, False)]
                ok.append("yes" if abs(b) <= TARGET else "**no**")
            print("| %s | %s | %.1f %% | %s | %s |"
                  % (w, name, 100.0 * share, " | ".join(cells), " / ".join(ok)))
        print()

    print("#### Summary")
    print()
    print("| mode | judged nodes within +-5 % | worst bias | as shares: within +-5 % |"
          " worst | child > parent runs | rows & loops |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for m in MODES:
        if m == REF:
            within = worst = swithin = sworst = "reference"
        elif by_share:
            swithin = "%d of %d" % (sum(1 for j in by_share if abs(j[7][m][0]) <= TARGET),
                                   len(by_share))
            sj = max(by_share, key=lambda j: abs(j[7][m][0]))
            sworst = "%s (%s %s)" % (pct(sj[7][m][0]), sj[0], sj[1].replace("&nbsp;", ""))
        else:
            swithin = "0 of 0"
            sworst = "n/a"
        if m == REF:
            pass
        elif judged:
            within = "%d of %d" % (sum(1 for j in judged if abs(j[5][m][0]) <= TARGET),
                                  len(judged))
            wj = max(judged, key=lambda j: abs(j[5][m][0]))
            worst = "%s (%s %s)" % (pct(wj[5][m][0]), wj[0], wj[1].replace("&nbsp;", ""))
        else:
            within = "0 of 0"
            worst = "n/a"
        label = m + (" (floor)" if m == FLOOR else "")
        print("| %s | %s | %s | %s | %s | %d of %d | %s |"
              % (label, within, worst, swithin, sworst, flips[m], plan_runs,
                 "same" if same[m] else "DIFFER"))
    print()
    print("The floor row is what this check reads between two identical configurations:"
          " a profiled bias no larger than the floor's is within the check's own noise.")
    print()

    print("#### Nodes not judged")
    print()
    if left_out:
        print("| workload | node | exact ms | share | us/call | profile bias | why |")
        print("|---|---|---:|---:|---:|---:|---|")
        for w, name, e, share, per_call, pb, why in left_out:
            print("| %s | %s | %s | %s | %s | %s | %s |"
                  % (w, name, "n/a" if e is None else "%.2f" % e,
                     "n/a" if share is None else "%.1f %%" % (100.0 * share),
                     "n/a" if per_call is None else "%.3f" % (per_call * 1000.0),
                     "n/a" if pb is None else pct(pb), why))
    else:
        print("None: every node met the criterion.")


if __name__ == "__main__":
    main()
