#!/usr/bin/env python3
"""Check that EXPLAIN (ANALYZE, FORMAT JSON) output has sane node times.

Reads the JSON (as psql -At prints it) on stdin.  Sane means:
  - every Actual Startup Time and Actual Total Time is >= 0, startup <= total;
  - no node claims more time than the query took: total * loops is at most
    the Execution Time times the number of processes whose times are summed
    there (1, plus the workers launched by every Gather above the node);
  - the top node, which only the leader runs, is within the Execution Time.
Prints one line describing the plan or the first violations; exits 1 on a
violation, 2 when the input is not an EXPLAIN ANALYZE JSON document.

test/fault/check_explain.py
"""
import json
import sys

SLACK_MS = 0.01  # EXPLAIN rounds to 3 decimals


def walk(node, procs, out):
    out.append((node, procs))
    inner = procs
    if node.get("Node Type") in ("Gather", "Gather Merge"):
        inner = procs + node.get("Workers Launched", 0)
    for child in node.get("Plans", []):
        walk(child, inner, out)


def main():
    # --as-measured: the clocks disagreed, so times are shown as the TSC
    # measured them (fasttime never rewrites a number): only the rules that
    # hold for any measurement (no negative time, startup <= total) apply
    as_measured = "--as-measured" in sys.argv[1:]
    text = sys.stdin.read()
    try:
        doc = json.loads(text)
        top = doc[0]
        plan = top["Plan"]
        exec_ms = float(top["Execution Time"])
    except (ValueError, KeyError, IndexError, TypeError) as e:
        print("not EXPLAIN ANALYZE JSON (%s): %r" % (e, text[:200]))
        return 2
    nodes = []
    walk(plan, 1, nodes)
    bad = []
    worst = 0.0
    for node, procs in nodes:
        name = node.get("Node Type", "?")
        loops = float(node.get("Actual Loops", 0))
        start = node.get("Actual Startup Time")
        total = node.get("Actual Total Time")
        if start is None or total is None:
            continue  # never executed, or no timing
        if start < 0 or total < 0:
            bad.append("%s: negative time (startup %s, total %s)" % (name, start, total))
        if start > total + SLACK_MS:
            bad.append("%s: startup %s > total %s" % (name, start, total))
        summed = total * loops
        worst = max(worst, summed / procs)
        if as_measured:
            continue
        if summed > exec_ms * procs + SLACK_MS * max(loops, 1):
            bad.append("%s: %.3f ms x %g loops > execution time %.3f ms x %d processes"
                       % (name, total, loops, exec_ms, procs))
    if not as_measured and plan.get("Actual Total Time", 0) > exec_ms + SLACK_MS:
        bad.append("top node %s: %.3f ms > execution time %.3f ms"
                   % (plan.get("Node Type"), plan["Actual Total Time"], exec_ms))
    if bad:
        print("; ".join(bad[:4]))
        return 1
    print("%d nodes, execution %.3f ms, largest node time per process %.3f ms"
          % (len(nodes), exec_ms, worst))
    return 0


if __name__ == "__main__":
    sys.exit(main())
