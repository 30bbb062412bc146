#!/usr/bin/env python3
"""bench/accuracy.py DIR RUNS MAJOR STATUS "W1 W2 ..."

Formats bench/accuracy.sh's EXPLAIN (ANALYZE, FORMAT JSON) outputs
(DIR/W.MODE.R.json) as a markdown report.  Modes: ordered (exact, both
reads LFENCE;RDTSC: the reference), start (exact, start read ordered),
plain (exact, plain RDTSC: fasttime's default), and ordered2, ordered run
again in the same time window: the check's own noise floor.

Per plan node whose reference mean is at least 1 ms (and whose per-loop
time EXPLAIN prints with enough resolution), in plan order: start's and
plain's bias against the reference (mean against mean) and one run's error
(root mean square of each run's deviation from the reference mean), beside
the floor's (ordered2 against ordered).  Summary: the share of nodes within
+-5 % and beyond +-15 % for each discipline and the floor, and how often a
child read longer than its parent in each mode (inclusive times, allowing
for EXPLAIN's rounding).  (Per-call sampled timing, which this report
once compared with exact timing, was removed.)
"""
import json
import math
import sys

MODES = ("ordered", "start", "plain", "ordered2")
FLOOR = "ordered2"
COMPARED = ("start", "plain")


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
    d, runs, major, status, workloads = sys.argv[1:6]
    runs = int(runs)
    print("### PostgreSQL %s: exact timing's read disciplines" % major)
    print()
    print("%d runs after a warm-up (`bench/accuracy.sh`); in each, the four modes in an"
          " order that rotates from run to run, one server, try_tsc timed with %s."
          " Per node of at least 1 ms (mean inclusive time, Actual Total Time x Actual"
          " Loops): start's and plain's bias against ordered exact timing (the"
          " reference) and one run's error (root mean square of each run's deviation"
          " from the reference mean), beside the floor (ordered run again)."
          % (runs, status))
    print()
    print("| workload | node | ordered ms | start vs ordered | one run | plain vs ordered |"
          " one run | floor | one run |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    tot = {"nodes": 0}
    for m in COMPARED + (FLOOR,):
        tot[m + "_5"] = 0
        tot[m + "_15"] = 0
    flips = {m: 0 for m in MODES}
    plans = 0
    for w in workloads.split():
        data = {m: [load("%s/%s.%s.%d.json" % (d, w, m, r)) for r in range(1, runs + 1)]
                for m in MODES}
        ref = data["ordered"]
        shape = [(n["type"], n["rows"], n["loops"]) for n in ref[0]]
        for m in MODES:
            for run in data[m]:
                if [(n["type"], n["rows"], n["loops"]) for n in run] != shape:
                    print("| %s | ROWS OR LOOPS DIFFER between runs (%s) |%s" % (w, m, " |" * 7))
                    break
            for run in data[m]:
                flips[m] += len(child_longer(run))
        plans += runs
        for i, node in enumerate(ref[0]):
            mean = {m: sum(run[i]["total"] for run in data[m]) / runs for m in MODES}
            e = mean["ordered"]
            name = "&nbsp;&nbsp;" * min(i, 6) + node["type"]
            if e < 1.0:
                continue
            if node["loops"] > 1 and node["per_loop"] < 0.1:
                print("| %s | %s | %.2f | n/a | n/a | n/a | n/a | n/a | n/a |"
                      " per-loop time %.3f ms: below EXPLAIN's 1 us resolution x %d loops |"
                      % (w, name, e, node["per_loop"], node["loops"]))
                continue
            tot["nodes"] += 1
            cells = []
            for m in COMPARED + (FLOOR,):
                b = 100.0 * (mean[m] - e) / e
                one = 100.0 * rms([run[i]["total"] for run in data[m]], e) / e
                tot[m + "_5"] += abs(b) <= 5.0
                tot[m + "_15"] += abs(b) > 15.0
                cells += ["%+.1f %%" % b, "%.1f %%" % one]
            print("| %s | %s | %.2f | %s |" % (w, name, e, " | ".join(cells)))
    n = tot["nodes"]
    print()
    for m in COMPARED:
        print("- %s against ordered, %d nodes of at least 1 ms: mean within +-5 %%: %d"
              " (floor %d); beyond +-15 %%: %d (floor %d)."
              % (m, n, tot[m + "_5"], tot[FLOOR + "_5"], tot[m + "_15"], tot[FLOOR + "_15"]))
    print("- A child read longer than its parent, over %d plans per mode: %s."
          % (plans, ", ".join("%s %d" % (m, flips[m]) for m in MODES)))


if __name__ == "__main__":
    main()
