#!/usr/bin/env python3
"""Per run, the share of a mode's Execution Time difference that lands on
the target of the memory-latency pairs (inclusive time, all loops).

Usage: python3 shares.py RAW.jsonl[.gz] ...   (raw runs of bench/truth.sh)

The median that bench/truth.py reports hides how a discipline fails: plain
reads were right in most runs and wrong by half or more in a few.  This
prints every run.
"""
import gzip
import json
import sys

PAIRS = (("mem_leaf", "Seq Scan"), ("mem_probe", "Hash Join"))


def nodes(plan, out):
    out.append((plan["Node Type"],
                plan.get("Actual Total Time", 0) * plan.get("Actual Loops", 0)))
    for child in plan.get("Plans", []):
        nodes(child, out)
    return out


def main():
    for path in sys.argv[1:]:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt") as f:
            rows = [json.loads(line) for line in f if line.strip()]
        print(path)
        rounds = sorted({r["round"] for r in rows})
        for pair, target in PAIRS:
            modes = []
            for r in rows:
                if r["pair"] == pair and r["mode"] not in modes:
                    modes.append(r["mode"])
            for mode in modes:
                shares = []
                for rd in rounds:
                    runs = {r["which"]: r["plan"] for r in rows
                            if r["pair"] == pair and r["mode"] == mode
                            and r["round"] == rd and "plan" in r}
                    if len(runs) != 2:
                        continue
                    base = nodes(runs["base"]["Plan"], [])
                    work = nodes(runs["work"]["Plan"], [])
                    i = [k for k, n in enumerate(base) if n[0] == target][0]
                    d_exec = runs["work"]["Execution Time"] - runs["base"]["Execution Time"]
                    shares.append("%4.0f %%" % (100 * (work[i][1] - base[i][1]) / d_exec))
                if shares:
                    print("  %-9s %-8s %s" % (pair, mode, "  ".join(shares)))


if __name__ == "__main__":
    main()
