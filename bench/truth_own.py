#!/usr/bin/env python3
"""bench/truth_own.py TRUTH.jsonl "PAIR ..." "MODE ..."

Each plan node's own time (its inclusive time, Actual Total Time x Actual
Loops, less its children's), median over the rounds, in the base and the
work query of each truth pair, per mode: where a pair's leak
(bench/truth.py) went, node by node.  Reads the .jsonl bench/truth.sh
writes (bench/out/truth-pgN.jsonl).
"""
import json
import statistics
import sys


def walk(plan, out, parent=None):
    me = len(out)
    out.append([plan["Node Type"], plan.get("Actual Total Time", 0) * plan.get("Actual Loops", 0),
                parent])
    for child in plan.get("Plans", []):
        walk(child, out, me)
    return out


def main():
    rows = [json.loads(line) for line in open(sys.argv[1])]
    for pair in sys.argv[2].split():
        for mode in sys.argv[3].split():
            for which in ("base", "work"):
                own_runs = []
                names = []
                for r in rows:
                    if (r.get("pair") != pair or r.get("mode") != mode or r.get("which") != which
                            or "plan" not in r):
                        continue
                    nodes = walk(r["plan"]["Plan"], [])
                    own = [n[1] for n in nodes]
                    for n in nodes:
                        if n[2] is not None:
                            own[n[2]] -= n[1]
                    own_runs.append(own)
                    names = [n[0] for n in nodes]
                if own_runs:
                    print("%-12s %-10s %-5s " % (pair, mode, which) +
                          "  ".join("%s %.0f" % (names[i], statistics.median(o[i] for o in own_runs))
                                    for i in range(len(names))))


if __name__ == "__main__":
    main()
