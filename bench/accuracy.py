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
    """Plan nodes in pre-order: (type, total ms, rows, loops)."""
    loops = plan.get("Actual Loops", 0)
    out.append((plan["Node Type"],
                plan.get("Actual Total Time", 0.0) * loops,
                plan.get("Actual Rows"), loops))
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
        for i, (ntype, _, _, _) in enumerate(exact[0]):
            e = sum(run[i][1] for run in exact) / runs
            s = sum(run[i][1] for run in sampled) / runs
            if e <= 0:
                continue
            bias = 100.0 * (s - e) / e
            rms = 100.0 * math.sqrt(sum((run[i][1] - e) ** 2 for run in sampled) / runs) / e
            worst[w] = max(worst.get(w, 0.0), abs(bias))
            print("| %s | %s%s | %.2f | %.2f | %+.2f %% | %.2f %% |"
                  % (w, "&nbsp;&nbsp;" * min(i, 6), ntype, e, s, bias, rms))
    print()
    print("Largest |bias| per workload: " +
          ", ".join("%s %.2f %%" % (w, worst[w]) for w in workloads.split() if w in worst) + ".")
    print("Exact runs vary too (the same node's time differs from run to run); the"
          " bias column includes that noise.")


if __name__ == "__main__":
    main()
