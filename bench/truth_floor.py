#!/usr/bin/env python3
"""bench/truth_floor.py TRUTH.md RAW.jsonl[.gz] [MODE] [--interval-scale S] [--rounds N]

How much of a profiled mode's leak in the truth suite is the sampling
error of its ticks, and nothing else?  bench/truth.py judges each pair by
its leak: the own-time differences, between the base and the work query, of
every node but the target, summed in absolute value (each the median over
the rounds of the per-round difference), against the Execution Time
difference.  With exact timing the non-target nodes do the same work in
both queries, so their differences are the host's noise.  Profiled timing
adds its own: a node's own time is the time of the ticks that landed in
it, and with ticks at random phase against the plan's fine-grained calls
the count in a run of n ticks is multinomial, so a node holding a share p
of the run reads with a standard error of sqrt(w * T * p * (1 - p)) for
ticks of w ms over T ms.

This replays each pair under that model alone: the nodes' own times of the
mode's runs (median over rounds; every node but the target given the same
own time in base and work, the mean of the two medians: the null
hypothesis that nothing leaks), the mode's schedule (fasttime's defaults:
20 ms exact, then 250 ticks of 1 ms, 250 of 2 ms, then 4 ms; times S with
--interval-scale), the same number of rounds (or N), and the same
statistic; 2000 replays per pair.  It prints, per pair, the observed leak beside the
leak the model alone gives (median and 90th percentile) and the share of
replays within the 3 % target.  Where the observed leak sits inside the
model's spread, the leak is the ticks' sampling error, not a bias; the
spread at a shorter interval says what meeting the target would take.

TRUTH.md (bench/truth.sh's report) names each pair's target; RAW is its
.jsonl (gzipped or not).  MODE defaults to profile.
"""
import gzip
import math
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from truth import walk, find_target, subtree, self_times, median, paired  # noqa: E402

import json  # noqa: E402

PREFIX_MS = 20.0
SCHEDULE = [(250, 1.0), (250, 2.0), (None, 4.0)]   # (ticks, interval ms)
REPLAYS = 2000
TOL_LEAK = 0.03


def targets_of(md):
    out, pid = {}, None
    with open(md) as f:
        for line in f:
            m = re.match(r"^## ([a-z0-9_]+): ", line)
            if m:
                pid = m.group(1)
                continue
            m = re.match(r"^Target: (.+?)\. ", line)
            if m and pid:
                out[pid] = m.group(1)
    return out


def segments(T, scale):
    """(ticks, interval) of the profiled part of a run of T ms."""
    left = max(T - PREFIX_MS, 0.0)
    segs = []
    for n, w in SCHEDULE:
        w *= scale
        span = left if n is None else min(left, n * w)
        if span <= 0:
            break
        segs.append((span / w, w))
        left -= span
    return segs


def replay_self(own, T, scale, rnd):
    """One run's own times under the tick model: own is the true own times."""
    total = sum(own)
    if total <= 0:
        return list(own)
    p = [max(x, 0.0) / total for x in own]
    est = [pi * min(PREFIX_MS, T) for pi in p]
    for n, w in segments(T, scale):
        z = [rnd.gauss(0.0, math.sqrt(pi)) if pi > 0 else 0.0 for pi in p]
        s = sum(z)
        for i, pi in enumerate(p):
            # multinomial counts, normal approximation: n p + sqrt(n) (z - p S)
            est[i] += w * (n * pi + math.sqrt(n) * (z[i] - pi * s))
    return est


def main():
    argv = sys.argv[1:]
    opts = {"--interval-scale": 1.0, "--rounds": 0}
    args = []
    while argv:
        a = argv.pop(0)
        if a in opts:
            opts[a] = float(argv.pop(0))
        else:
            args.append(a)
    scale = opts["--interval-scale"]
    want_rounds = int(opts["--rounds"])
    md, raw = args[0], args[1]
    mode = args[2] if len(args) > 2 else "profile"
    targets = targets_of(md)
    opener = gzip.open if raw.endswith(".gz") else open
    runs = {}
    with opener(raw, "rt") as f:
        for line in f:
            r = json.loads(line)
            if r["mode"] != mode or "plan" not in r:
                continue
            r["nodes"] = walk(r["plan"]["Plan"], None, [])
            r["exec"] = r["plan"]["Execution Time"]
            runs.setdefault((r["pair"], r["which"]), []).append(r)
    rnd = random.Random(20261203)
    print("| pair | target | rounds | base ms | dExec ms | observed leak | model: median | model: 90th pct | model: replays within 3 % |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    met_obs = met_model = n_pairs = 0
    for pid in sorted(targets):
        b, w = runs.get((pid, "base"), []), runs.get((pid, "work"), [])
        pr = paired(b, w)
        if not pr:
            continue
        spec = targets[pid]
        nb = pr[0][0]["nodes"]
        t = find_target(nb, spec)
        if t is None:
            continue
        inside = subtree(nb, t) if spec.endswith("+") else {t}
        if any(n["type"] in ("Gather", "Gather Merge") for n in nb):
            note = " (parallel: replayed as one process)"
        else:
            note = ""
        dexec = median([y["exec"] - x["exec"] for x, y in pr])
        dself = [median(col) for col in zip(*[
            [sy - sx for sx, sy in zip(self_times(x["nodes"]), self_times(y["nodes"]))]
            for x, y in pr])]
        obs = sum(abs(dself[i]) for i in range(len(nb)) if i not in inside) / dexec
        # the truth under the null hypothesis
        sb = [median(c) for c in zip(*[self_times(x["nodes"]) for x, _ in pr])]
        sw = [median(c) for c in zip(*[self_times(y["nodes"]) for _, y in pr])]
        own_b, own_w = [], []
        for i in range(len(nb)):
            if i in inside:
                own_b.append(sb[i])
                own_w.append(sw[i])
            else:
                m = (sb[i] + sw[i]) / 2
                own_b.append(m)
                own_w.append(m)
        # the replayed runs last as long as their nodes' own times add up to
        # (not the median Execution Time, a median of another quantity)
        tb, tw = sum(max(x, 0.0) for x in own_b), sum(max(x, 0.0) for x in own_w)
        leaks = []
        for _ in range(REPLAYS):
            d = []
            for _r in range(want_rounds or len(pr)):
                eb = replay_self(own_b, tb, scale, rnd)
                ew = replay_self(own_w, tw, scale, rnd)
                d.append([y - x for x, y in zip(eb, ew)])
            dm = [median(col) for col in zip(*d)]
            leaks.append(sum(abs(dm[i]) for i in range(len(nb)) if i not in inside) / dexec)
        leaks.sort()
        within = sum(1 for x in leaks if x <= TOL_LEAK) / len(leaks)
        n_pairs += 1
        met_obs += obs <= TOL_LEAK
        met_model += within
        print("| %s | %s%s | %d | %.1f | %.1f | %.1f %% | %.1f %% | %.1f %% | %.0f %% |"
              % (pid, spec, note, len(pr), tb, dexec, 100 * obs,
                 100 * leaks[len(leaks) // 2], 100 * leaks[int(0.9 * len(leaks))], 100 * within))
    print()
    print("Pairs: %d; observed leak within 3 %%: %d; expected under the tick model alone: %.1f "
          "(interval scale %g, %s rounds)." % (n_pairs, met_obs, met_model, scale,
                                     want_rounds or "the same"))


if __name__ == "__main__":
    main()
