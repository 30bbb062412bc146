#!/usr/bin/env python3
"""bench/accuracy.py DIR INTERVAL RUNS MAJOR STATUS "W1 W2 ..."

Formats bench/accuracy.sh's EXPLAIN (ANALYZE, FORMAT JSON) outputs
(DIR/W.MODE.R.json) as a markdown report.  Modes: ordered (exact, both
reads LFENCE;RDTSC: the reference), start (exact, start read ordered:
fasttime's default), plain (exact, plain RDTSC), sampled (start reads
ordered), sampled_on (both ordered), and ordered2 / start2, the same modes
as ordered / start run again in the same time window: the check's own
noise floor.

Per plan node whose reference mean is at least 1 ms (and whose per-loop
time EXPLAIN prints with enough resolution), in plan order:
  - start's and plain's bias against the reference (the cost of each read
    discipline in accuracy);
  - sampled against start and sampled_on against ordered (sampling alone,
    the read discipline the same): bias (mean against mean) and one run's
    error (root mean square of each run's deviation from the exact mean),
    beside the floor's (start2 against start, ordered2 against ordered);
  - a verdict per sampled mode: within target when |bias| <= 3 % and one
    run's error <= 1.5 x the floor's.
Summary: the share of nodes within +-5 % and beyond +-15 % for each
sampled mode and its floor, and how often a child read longer than its
parent in each mode (inclusive times, allowing for EXPLAIN's rounding).
"""
import json
import math
import sys

MODES = ("ordered", "start", "plain", "sampled", "sampled_on", "ordered2", "start2")
PAIRS = (("sampled", "start", "start2"), ("sampled_on", "ordered", "ordered2"))


def nodes(plan, parent, out):
    """Plan nodes in pre-order."""
    loops = plan.get("Actual Loops", 0)
    per_loop = plan.get("Actual Total Time", 0.0)
    me = len(out)
    out.append({"type": plan["Node Type"], "total": per_loop * loops,
                "rows": plan.get("Actual Rows"), "loops": loops,
                "per_loop": per_loop, "parent": parent})
    for child in plan.get("Plans", []):
        nodes(child, me, out)
    return out


def load(path):
    with open(path) as f:
        return nodes(json.load(f)[0]["Plan"], None, [])


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


def rms(xs, ref):
    return math.sqrt(sum((x - ref) ** 2 for x in xs) / len(xs))


def main():
    d, interval, runs, major, status, workloads = sys.argv[1:7]
    runs = int(runs)
    print("### PostgreSQL %s: sampled timing (at least 1 in %s calls) and exact timing's"
          " read disciplines" % (major, interval))
    print()
    print("%d runs after a warm-up (`bench/accuracy.sh`); in each, the seven modes in an"
          " order that rotates from run to run, one server, try_tsc timed with %s."
          " Per node of at least 1 ms (mean inclusive time, Actual Total Time x Actual"
          " Loops): start's and plain's bias against ordered exact timing (the"
          " reference); sampled against exact timing with the same reads (sampled vs"
          " start, sampled_on vs ordered): bias and one run's error (root mean square of"
          " each run's deviation from the exact mean), beside the floor (the exact mode"
          " run again). Target: |bias| <= 3 %% and one run's error <= 1.5 x the"
          " floor's." % (runs, status))
    print()
    print("| workload | node | ordered ms | start vs ordered | plain vs ordered |"
          " sampled vs start | floor | one run | floor | sampled_on vs ordered | floor |"
          " one run | floor | within target (sampled / sampled_on) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---:|")
    tot = {"nodes": 0}
    for m, _, f in PAIRS:
        for k in (m, f):
            tot[k + "_5"] = 0
            tot[k + "_15"] = 0
        tot[m + "_ok"] = 0
    flips = {m: 0 for m in MODES}
    misses = {m: [] for m, _, _ in PAIRS}
    plans = 0
    for w in workloads.split():
        data = {m: [load("%s/%s.%s.%d.json" % (d, w, m, r)) for r in range(1, runs + 1)]
                for m in MODES}
        ref = data["ordered"]
        shape = [(n["type"], n["rows"], n["loops"]) for n in ref[0]]
        for m in MODES:
            for run in data[m]:
                if [(n["type"], n["rows"], n["loops"]) for n in run] != shape:
                    print("| %s | ROWS OR LOOPS DIFFER between runs (%s) |%s" % (w, m, " |" * 12))
                    break
            for run in data[m]:
                flips[m] += len(child_longer(run))
        plans += runs
        for i, node in enumerate(ref[0]):
            mean = {m: sum(run[i]["total"] for run in data[m]) / runs for m in MODES}
            e = mean["ordered"]
            name = "&nbsp;&nbsp;" * min(i, 6) + node["type"]
            if e < 1.0 or mean["start"] <= 0:
                continue
            if node["loops"] > 1 and node["per_loop"] < 0.1:
                print("| %s | %s | %.2f | n/a | n/a | n/a | n/a | n/a | n/a | n/a | n/a | n/a | n/a |"
                      " per-loop time %.3f ms: below EXPLAIN's 1 us resolution x %d loops |"
                      % (w, name, e, node["per_loop"], node["loops"]))
                continue
            tot["nodes"] += 1
            cells = []
            verdict = []
            for m, x, f in PAIRS:
                base = mean[x]
                b = 100.0 * (mean[m] - base) / base
                bf = 100.0 * (mean[f] - base) / base
                one = 100.0 * rms([run[i]["total"] for run in data[m]], base) / base
                onef = 100.0 * rms([run[i]["total"] for run in data[f]], base) / base
                ok = abs(b) <= 3.0 and one <= 1.5 * onef + 1e-9
                tot[m + "_ok"] += ok
                tot[m + "_5"] += abs(b) <= 5.0
                tot[f + "_5"] += abs(bf) <= 5.0
                tot[m + "_15"] += abs(b) > 15.0
                tot[f + "_15"] += abs(bf) > 15.0
                if not ok:
                    misses[m].append("%s %s (%+.1f %%, one run %.1f %% vs floor %.1f %%)"
                                     % (w, node["type"], b, one, onef))
                cells += ["%+.1f %%" % b, "%+.1f %%" % bf, "%.1f %%" % one, "%.1f %%" % onef]
                verdict.append("yes" if ok else "**no**")
            print("| %s | %s | %.2f | %+.1f %% | %+.1f %% | %s | %s |"
                  % (w, name, e, 100.0 * (mean["start"] - e) / e,
                     100.0 * (mean["plain"] - e) / e, " | ".join(cells), " / ".join(verdict)))
    n = tot["nodes"]
    print()
    for m, x, f in PAIRS:
        print("- %s against %s, %d nodes of at least 1 ms: within target %d; mean within"
              " +-5 %%: %d (floor %d); beyond +-15 %%: %d (floor %d)."
              % (m, x, n, tot[m + "_ok"], tot[m + "_5"], tot[f + "_5"], tot[m + "_15"],
                 tot[f + "_15"]))
    print("- A child read longer than its parent, over %d plans per mode: %s."
          % (plans, ", ".join("%s %d" % (m, flips[m]) for m in MODES)))
    for m, _, _ in PAIRS:
        if misses[m]:
            print("- %s outside the target: %s." % (m, "; ".join(misses[m])))


if __name__ == "__main__":
    main()
