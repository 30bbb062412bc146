#!/usr/bin/env python3
"""bench/accuracy.py DIR INTERVAL RUNS MAJOR STATUS "W1 W2 ..."

Formats bench/accuracy.sh's EXPLAIN (ANALYZE, FORMAT JSON) outputs
(DIR/W.exact.R.json, DIR/W.sampled.R.json) as a markdown report: per plan
node, in plan order, the mean inclusive time under exact and sampled
timing, the sampled mean's bias, and one sampled run's typical error.
"""
import json
import math
import sys


def nodes(plan, out):
    """Plan nodes in pre-order: (type, total ms, rows, loops, per-loop ms)."""
    loops = plan.get("Actual Loops", 0)
    out.append((plan["Node Type"],
                plan.get("Actual Total Time", 0.0) * loops,
                plan.get("Actual Rows"), loops, plan.get("Actual Total Time", 0.0)))
    for child in plan.get("Plans", []):
        nodes(child, out)
    return out


def load(path):
    with open(path) as f:
        return nodes(json.load(f)[0]["Plan"], [])


def main():
    d, interval, runs, major, status, workloads = sys.argv[1:7]
    runs = int(runs)
    print("### PostgreSQL %s: sampled timing (1 in %s calls) against exact timing"
          % (major, interval))
    print()
    print("Each workload run %d times exact and %d times sampled, alternately, after a"
          " warm-up (`bench/accuracy.sh`); try_tsc timed with %s. Per node: mean"
          " inclusive time (Actual Total Time x Actual Loops); bias = sampled mean"
          " against exact mean; one run = root mean square of each sampled run's"
          " deviation from the exact mean, i.e. the error to expect from a single"
          " EXPLAIN ANALYZE." % (runs, runs, status))
    print()
    print("| workload | node | exact ms | sampled ms | bias | one run |")
    print("|---|---|---:|---:|---:|---:|")
    worst = {}
    for w in workloads.split():
        exact = [load("%s/%s.exact.%d.json" % (d, w, r)) for r in range(1, runs + 1)]
        sampled = [load("%s/%s.sampled.%d.json" % (d, w, r)) for r in range(1, runs + 1)]
        shape = [(n[0], n[2], n[3]) for n in exact[0]]
        for run in exact + sampled:
            if [(n[0], n[2], n[3]) for n in run] != shape:
                print("| %s | ROWS OR LOOPS DIFFER between runs | | | | |" % w)
                break
        for i, node in enumerate(exact[0]):
            ntype = node[0]
            e = sum(run[i][1] for run in exact) / runs
            s = sum(run[i][1] for run in sampled) / runs
            if e <= 0:
                continue
            if node[3] > 1 and node[4] < 0.1:
                # EXPLAIN prints the per-loop average rounded to 1 us
                print("| %s | %s%s | %.2f | %.2f | n/a | n/a (per-loop time %.3f ms: below EXPLAIN's 1 us resolution x %d loops) |"
                      % (w, "&nbsp;&nbsp;" * min(i, 6), ntype, e, s, node[4], node[3]))
                continue
            bias = 100.0 * (s - e) / e
            rms = 100.0 * math.sqrt(sum((run[i][1] - e) ** 2 for run in sampled) / runs) / e
            worst[w] = max(worst.get(w, 0.0), abs(bias))
            print("| %s | %s%s | %.2f | %.2f | %+.2f %% | %.2f %% |"
                  % (w, "&nbsp;&nbsp;" * min(i, 6), ntype, e, s, bias, rms))
    print()
    print("Largest |bias| per workload: " +
          ", ".join("%s %.2f %%" % (w, worst[w]) for w in workloads.split() if w in worst) + ".")
    print()
    print("Exact timing is not the truth either: it adds its own cost (two clock reads"
          " per call) to every node, and a parent's time includes its children's timing"
          " cost.  So a parent of many cheap calls (W1's Aggregate) reads lower under"
          " sampling, which is closer to the uninstrumented time; and exact runs vary"
          " from run to run too, which the bias column includes.  A node whose own calls"
          " are cheap and whose plan is large (W2's outer Seq Scan) reads higher under"
          " sampling, most likely because a timed call runs code that the untimed calls between"
          " two samples have let go cold, and that cost lands inside its measured interval.  The"
          " estimator itself is unbiased: t/009_sampling.pl checks it against a clock"
          " that advances exactly 1 us per read.")


if __name__ == "__main__":
    main()
