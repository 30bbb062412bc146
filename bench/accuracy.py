#!/usr/bin/env python3
"""bench/accuracy.py DIR INTERVAL RUNS MAJOR STATUS "W1 W2 ..."

Formats bench/accuracy.sh's EXPLAIN (ANALYZE, FORMAT JSON) outputs
(DIR/W.MODE.R.json for MODE in ordered, start, plain, sampled, sampled_on,
ordered2) as a
markdown report.  The reference is exact timing with ordered reads
("ordered"); "ordered2" is the same mode run again in the same time
window, so its distance from the reference is the check's own noise floor.

Per plan node whose reference mean is at least 1 ms (and whose per-loop
time EXPLAIN prints with enough resolution), in plan order:
  - the bias of exact timing with the start read ordered (the default)
    and with plain RDTSC, of sampled timing (start reads ordered, and
    both), and the floor's: each mode's mean against the reference's mean;
  - one run's error for sampled and for the floor: the root mean square of
    each run's deviation from the reference's mean;
  - a verdict: sampled is within target when its bias is within +-3 % and
    its one-run error at most 1.5 x the floor's.
Per mode, over all runs: how often a child read longer than its parent
(inclusive times, allowing for EXPLAIN's rounding).
"""
import json
import math
import sys

MODES = ("ordered", "start", "plain", "sampled", "sampled_on", "ordered2")


def nodes(plan, parent, out):
    """Plan nodes in pre-order: dict with type, total ms, rows, loops,
    per-loop ms and the index of the parent."""
    loops = plan.get("Actual Loops", 0)
    per_loop = plan.get("Actual Total Time", 0.0)
    me = len(out)
    out.append({"type": plan["Node Type"], "total": per_loop * loops,
                "rows": plan.get("Actual Rows"), "loops": loops,
                "per_loop": per_loop, "parent": parent,
                "rel": plan.get("Parent Relationship", "")})
    for child in plan.get("Plans", []):
        nodes(child, me, out)
    return out


def load(path):
    with open(path) as f:
        return nodes(json.load(f)[0]["Plan"], None, [])


def child_longer(run):
    """Parent-child pairs where the child's inclusive time exceeds the
    parent's by more than EXPLAIN's rounding (0.0005 ms per loop)."""
    bad = []
    for i, n in enumerate(run):
        p = n["parent"]
        if p is None or n["loops"] == 0:
            continue
        par = run[p]
        tol = 0.0005 * (n["loops"] + par["loops"]) + 1e-9
        if n["total"] > par["total"] + tol:
            bad.append(i)
    return bad


def rms(xs, ref):
    return math.sqrt(sum((x - ref) ** 2 for x in xs) / len(xs))


def main():
    d, interval, runs, major, status, workloads = sys.argv[1:7]
    runs = int(runs)
    print("### PostgreSQL %s: sampled timing (at least 1 in %s calls) and exact timing's"
          " read disciplines against ordered exact timing" % (major, interval))
    print()
    print("%d runs after a warm-up (`bench/accuracy.sh`); in each, the six modes in an"
          " order that rotates from run to run, one server, try_tsc timed with %s."
          " Reference: exact timing with both reads ordered (LFENCE;RDTSC). Floor: the"
          " reference mode run again, so its bias and one-run error are what this"
          " check measures of two identical modes. Per node of at least 1 ms: mean"
          " inclusive time (Actual Total Time x Actual Loops), each mode's bias against"
          " the reference's mean, one run's error = root mean square of each run's"
          " deviation from the reference's mean. Target for sampled: |bias| <= 3 %% and"
          " one run's error <= 1.5 x the floor's." % (runs, status))
    print()
    print("| workload | node | ordered ms | exact, start ordered | exact, plain |"
          " sampled | sampled, both ordered | floor | sampled one run | floor one run |"
          " sampled within target |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|:---:|")
    totals = {"nodes": 0, "ok": 0, "within5": 0, "floor_within5": 0,
              "beyond15": 0, "floor_beyond15": 0}
    flips = {m: 0 for m in MODES}
    flip_runs = 0
    misses = []
    for w in workloads.split():
        data = {m: [load("%s/%s.%s.%d.json" % (d, w, m, r)) for r in range(1, runs + 1)]
                for m in MODES}
        ref = data["ordered"]
        shape = [(n["type"], n["rows"], n["loops"]) for n in ref[0]]
        for m in MODES:
            for run in data[m]:
                if [(n["type"], n["rows"], n["loops"]) for n in run] != shape:
                    print("| %s | ROWS OR LOOPS DIFFER between runs (%s) | | | | | | | | | |" % (w, m))
                    break
            for run in data[m]:
                flips[m] += len(child_longer(run))
        flip_runs += runs
        for i, node in enumerate(ref[0]):
            mean = {m: sum(run[i]["total"] for run in data[m]) / runs for m in MODES}
            e = mean["ordered"]
            name = "&nbsp;&nbsp;" * min(i, 6) + node["type"]
            if e < 1.0:
                continue
            if node["loops"] > 1 and node["per_loop"] < 0.1:
                print("| %s | %s | %.2f | n/a | n/a | n/a | n/a | n/a | n/a | n/a | per-loop time %.3f ms:"
                      " below EXPLAIN's 1 us resolution x %d loops |"
                      % (w, name, e, node["per_loop"], node["loops"]))
                continue
            bias = {m: 100.0 * (mean[m] - e) / e for m in MODES}
            one_s = 100.0 * rms([run[i]["total"] for run in data["sampled"]], e) / e
            one_f = 100.0 * rms([run[i]["total"] for run in data["ordered2"]], e) / e
            ok = abs(bias["sampled"]) <= 3.0 and one_s <= 1.5 * one_f + 1e-9
            totals["nodes"] += 1
            totals["ok"] += ok
            totals["within5"] += abs(bias["sampled"]) <= 5.0
            totals["floor_within5"] += abs(bias["ordered2"]) <= 5.0
            totals["beyond15"] += abs(bias["sampled"]) > 15.0
            totals["floor_beyond15"] += abs(bias["ordered2"]) > 15.0
            if not ok:
                misses.append("%s %s (bias %+.1f %%, one run %.1f %% vs floor %.1f %%)"
                              % (w, node["type"], bias["sampled"], one_s, one_f))
            print("| %s | %s | %.2f | %+.1f %% | %+.1f %% | %+.1f %% | %+.1f %% | %+.1f %% | %.1f %% | %.1f %% | %s |"
                  % (w, name, e, bias["start"], bias["plain"], bias["sampled"],
                     bias["sampled_on"], bias["ordered2"], one_s, one_f,
                     "yes" if ok else "**no**"))
    print()
    print("Nodes of at least 1 ms: %d; sampled within target: %d. Mean within +-5 %% of the"
          " reference: sampled %d, floor %d; beyond +-15 %%: sampled %d, floor %d."
          % (totals["nodes"], totals["ok"], totals["within5"], totals["floor_within5"],
             totals["beyond15"], totals["floor_beyond15"]))
    print()
    print("A child read longer than its parent, over %d plans per mode: %s."
          % (flip_runs, ", ".join("%s %d" % (m, flips[m]) for m in MODES)))
    if misses:
        print()
        print("Sampled outside the target: " + "; ".join(misses) + ".")


if __name__ == "__main__":
    main()
