#!/usr/bin/env python3
"""bench/analytic.py: the analytic query benchmark (22 TPC-H-like queries),
driven by bench/analytic.sh.  Two commands:

  run OUT --psql "PSQL ARGV" --queries FILE --fraction F [--rounds R]
          [--modes ...] [--queries-only "Q1 Q6 ..."]
      One psql session (one backend) runs every query in every mode in
      interleaved rounds; round 0 is a warm-up.  Writes OUT/runs.jsonl
      (one line per run: wall time, rows, EXPLAIN's Planning and Execution
      Time, whether the plan's shape is the plain query's, and the plan)
      and OUT/modes.json (what SHOW said under each mode).
  report OUT
      OUT/report.md and OUT/summary.csv from runs.jsonl.

Measurement.  Each run is one transaction: BEGIN, the mode's SET LOCALs,
SELECT analytic_run(query, explain) (bench/sql/analytic.sql), COMMIT.
analytic_run takes clock_timestamp() before and after an EXECUTE of the
statement text: the query itself (plain, rows discarded) or the EXPLAIN
of it (the JSON returned).  So every mode is timed the same way, on the
server, parse and planning included, the client's round trip and psql
left out; an EXPLAIN mode's time also holds writing its JSON (the plans
have 5-50 nodes: well under a millisecond, next to queries of 10 ms and
more).  In the plain run's transaction, after the timed statement, an
EXPLAIN (FORMAT JSON, COSTS OFF) without ANALYZE gives the plan every mode's
plan is compared with (node types, join types, strategies, relations,
indexes, parent relationships, subplan names, recursively), and ROW_COUNT
the rows every EXPLAIN's root must have returned.

Order: in round r the queries start at the r-th (rotating), and for the
k-th query the modes start at the (r + k)-th: over the rounds each mode
runs first, second, ... equally often for every query, before and after
each other.  (Before 2026-12-06 they started at the (r + p)-th for the
query at position p of the round; since p = k - r until the rotation
wraps, that is the k-th, whatever the round: each query ran its modes in
one order in almost every round, and the mode that always came first,
just after another query, paid for the caches that query had cooled:
Q19, 46 ms, read 1.214 for the mode run first and 0.993 for the one run
last in one run of 10 rounds.)

Report.  Per query and mode the minimum over the measured rounds, and its
ratio to the plain query's minimum; per mode the geometric mean of those
ratios over the queries and the worst query.  The same with medians.  The
spread: the ratio of the mode's run to the plain run of the same round
and query, its median, minimum and maximum over the rounds.
"""
import argparse
import csv
import json
import math
import os
import re
import shlex
import statistics
import subprocess
import sys
import time

MODES = {
    "plain": ("SET LOCAL fasttime.clock_source = clock_gettime;", None),
    "timing_off": ("SET LOCAL fasttime.clock_source = try_tsc; SET LOCAL fasttime.node_timing = exact;",
                   "EXPLAIN (ANALYZE, TIMING OFF, BUFFERS OFF, FORMAT JSON)"),
    "stock": ("SET LOCAL fasttime.clock_source = clock_gettime; SET LOCAL fasttime.node_timing = exact;",
              "EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON)"),
    "exact": ("SET LOCAL fasttime.clock_source = try_tsc; SET LOCAL fasttime.node_timing = exact;",
              "EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON)"),
    "profile": ("SET LOCAL fasttime.clock_source = try_tsc; SET LOCAL fasttime.node_timing = profile; SET LOCAL fasttime.tick_source = signal;",
                "EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON)"),
    # what a user gets: clock_source and node_timing at their defaults
    # (auto, profile): profiled timing with clock_gettime() where auto
    # refuses the TSC
    "default": ("SET LOCAL fasttime.clock_source = auto; SET LOCAL fasttime.node_timing TO DEFAULT; "
                "SET LOCAL fasttime.tick_source = signal;",
                "EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON)"),
    # profile with a shorter exact prefix, and with ticks of 2 ms from the start
    "profile_a5": ("SET LOCAL fasttime.clock_source = try_tsc; SET LOCAL fasttime.node_timing = profile; "
                   "SET LOCAL fasttime.profile_after = 5; SET LOCAL fasttime.tick_source = signal;",
                   "EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON)"),
    "profile_i2": ("SET LOCAL fasttime.clock_source = try_tsc; SET LOCAL fasttime.node_timing = profile; "
                   "SET LOCAL fasttime.profile_interval = 2; SET LOCAL fasttime.tick_source = signal;",
                   "EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON)"),
    # the default with the tick worker instead of timer signals (the
    # server then starts with it: analytic.sh)
    "default_worker": ("SET LOCAL fasttime.clock_source = auto; SET LOCAL fasttime.node_timing TO DEFAULT; "
                       "SET LOCAL fasttime.tick_source = worker;",
                       "EXPLAIN (ANALYZE, BUFFERS OFF, FORMAT JSON)"),
}
ORDER = ["plain", "timing_off", "stock", "exact", "profile", "default", "default_worker", "profile_a5",
         "profile_i2"]
TITLES = {
    "plain": "plain (no EXPLAIN)",
    "timing_off": "EXPLAIN ANALYZE, TIMING OFF",
    "stock": "stock (`clock_gettime`)",
    "exact": "exact (TSC)",
    "profile": "profile (TSC)",
    "default": "default (`auto`, node_timing's default)",
    "profile_a5": "profile, `profile_after = 5`",
    "profile_i2": "profile, `profile_interval = 2`",
    "default_worker": "default, `tick_source = worker`",
    # runs before 2026-12-07d, whose default was the tick worker
    "default_signal": "default, `tick_source = signal`",
}
SHAPE_KEYS = ("Node Type", "Strategy", "Partial Mode", "Join Type", "Relation Name", "Alias",
              "Index Name", "Parent Relationship", "Subplan Name", "Scan Direction", "Command",
              "CTE Name", "Inner Unique")


def read_queries(path, fraction):
    """[(name, text)] from the file's "-- Q<n>" blocks, ";" dropped."""
    text = open(path).read()
    parts = re.split(r"^-- (Q\d+)[ \t]*$", text, flags=re.M)
    out = []
    for name, body in zip(parts[1::2], parts[2::2]):
        body = "\n".join(l for l in body.strip().splitlines() if not l.lstrip().startswith("--")).strip()
        if not body.endswith(";") or body[:-1].count(";"):
            sys.exit("analytic: %s: a block must hold one statement ending in ';'" % name)
        out.append((name, body[:-1].replace(":fraction", fraction)))
    if len(out) != len({n for n, _ in out}):
        sys.exit("analytic: a query name appears twice in %s" % path)
    return out


class Psql:
    def __init__(self, argv):
        self.p = subprocess.Popen(argv + ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=0"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, bufsize=1)
        self.n = 0

    def run(self, sql):
        self.n += 1
        mark = "__analytic_done_%d__" % self.n
        sql = sql.rstrip()
        if not sql.endswith(";"):
            sql += ";"
        self.p.stdin.write(sql + "\n\\echo " + mark + "\n")
        self.p.stdin.flush()
        lines = []
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("psql ended: %s" % "".join(lines))
            if line.rstrip("\n") == mark:
                break
            lines.append(line)
        text = "".join(lines)
        if "ERROR:" in text or "FATAL:" in text:
            raise RuntimeError("psql: %s\n%s" % (sql[:300], text))
        return text

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def shape(plan):
    """The plan's shape, comparable between EXPLAIN with and without ANALYZE."""
    return [[plan.get(k) for k in SHAPE_KEYS], [shape(c) for c in plan.get("Plans", [])]]


def quote(text):
    tag = "$aq$"
    assert tag not in text
    return tag + text + tag


def cmd_run(a):
    out = a.out
    os.makedirs(out, exist_ok=True)
    queries = read_queries(a.queries, a.fraction)
    if a.only:
        want = a.only.split()
        queries = [q for q in queries if q[0] in want]
    modes = a.modes.split()
    for m in modes:
        if m not in MODES:
            sys.exit("analytic: unknown mode %s (known: %s)" % (m, " ".join(ORDER)))
    if "plain" not in modes:
        modes = ["plain"] + modes  # the reference for plans, rows and ratios
    psql = Psql(shlex.split(a.psql))
    psql.run("SET client_min_messages = warning;")
    raw = open(os.path.join(out, "runs.jsonl"), "a")
    t_start = time.monotonic()
    bad = 0
    for r in range(a.rounds + 1):
        t_round = time.monotonic()
        for qi in range(len(queries)):
            qk = (qi + r) % len(queries)
            name, q = queries[qk]
            ref_shape, ref_rows, results = None, None, []
            for mi in range(len(modes)):
                # the query's own index, not its position in the round:
                # (r + qi) is the query's index itself until it wraps, so
                # each query would run its modes in one order every round
                mode = modes[(mi + r + qk) % len(modes)]
                sets, explain = MODES[mode]
                text = psql.run("BEGIN; %s SELECT analytic_run(%s, %s);" % (
                    sets, quote(q), "NULL" if explain is None else quote(explain)))
                res = json.loads(text.strip().splitlines()[-1])
                rec = {"round": r, "query": name, "mode": mode, "position": mi, "ms": res["ms"]}
                if explain is None:
                    rec["rows"] = res["rows"]
                    plan = json.loads(psql.run("EXPLAIN (FORMAT JSON, COSTS OFF) %s;" % q))[0]
                    ref_shape, ref_rows = shape(plan["Plan"]), res["rows"]
                    rec["plan"] = plan
                else:
                    plan = res["plan"][0]
                    top = plan["Plan"]
                    rec["rows"] = round(top.get("Actual Rows", 0) * top.get("Actual Loops", 1))
                    rec["exec_ms"] = plan.get("Execution Time")
                    rec["plan_ms"] = plan.get("Planning Time")
                    rec["plan"] = plan
                psql.run("COMMIT;")
                results.append(rec)
            for rec in results:
                if rec["mode"] != "plain":
                    rec["same_plan"] = shape(rec["plan"]["Plan"]) == ref_shape
                    rec["same_rows"] = rec["rows"] == ref_rows
                    if not (rec["same_plan"] and rec["same_rows"]):
                        bad += 1
                        print("analytic: round %d %s %s: %s" % (
                            r, name, rec["mode"],
                            "plan differs from the plain query's" if not rec["same_plan"]
                            else "%s rows, plain %s" % (rec["rows"], ref_rows)),
                            file=sys.stderr, flush=True)
                raw.write(json.dumps(rec) + "\n")
            raw.flush()
        print("analytic: round %d of %d done%s, %.0f s (%.0f s in all)" % (
            r, a.rounds, " (warm-up)" if r == 0 else "", time.monotonic() - t_round,
            time.monotonic() - t_start), file=sys.stderr, flush=True)
    facts = {}
    for m in modes:
        facts[m] = psql.run(
            "BEGIN; %s SELECT string_agg(name || ' = ' || setting, ', ' ORDER BY name) FROM pg_settings "
            "WHERE name IN ('fasttime.clock_source', 'fasttime.clock_source_status', 'fasttime.node_timing', "
            "'fasttime.ordered_reads', 'fasttime.profile_interval', 'fasttime.profile_interval_max', "
            "'fasttime.profile_after', 'fasttime.tick_source'); COMMIT;" % MODES[m][0]).strip()
    with open(os.path.join(out, "modes.json"), "w") as f:
        json.dump({"modes": facts, "queries": dict(queries), "mismatches": bad,
                   "seconds": round(time.monotonic() - t_start)}, f, indent=1)
    psql.close()


def gmean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def read_runs(out):
    path = os.path.join(out, "runs.jsonl")
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        import gzip
        f = gzip.open(path + ".gz", "rt")
    else:
        f = open(path)
    with f:
        return [json.loads(l) for l in f if l.strip()]


def qkey(name):
    return int(name[1:]) if name[1:].isdigit() else 0


def cmd_report(a):
    out = a.out
    runs = [r for r in read_runs(out) if r["round"] > 0]
    queries = sorted({r["query"] for r in runs}, key=qkey)
    # (modes of older runs this script no longer runs, after the rest)
    modes = [m for m in ORDER if any(r["mode"] == m for r in runs)]
    modes += sorted({r["mode"] for r in runs} - set(modes))
    rounds = sorted({r["round"] for r in runs})
    t = {}  # (query, mode) -> {round: rec}
    for r in runs:
        t.setdefault((r["query"], r["mode"]), {})[r["round"]] = r
    rows, csv_rows = [], []
    per_mode = {m: {"min": [], "med": [], "lo": [], "hi": [], "pmed": []} for m in modes if m != "plain"}
    mism = {m: 0 for m in modes}
    for q in queries:
        plain = t[(q, "plain")]
        pmin = min(x["ms"] for x in plain.values())
        pmed = statistics.median(x["ms"] for x in plain.values())
        cells = []
        csv_rows.append([q, "plain", len(plain), "%.3f" % pmin, "%.3f" % pmed, "1", "1", "1", "1", "", "", ""])
        for m in modes:
            if m == "plain":
                continue
            d = t.get((q, m), {})
            ms = [x["ms"] for x in d.values()]
            mmin, mmed = min(ms), statistics.median(ms)
            per_round = [d[rr]["ms"] / plain[rr]["ms"] for rr in rounds if rr in d and rr in plain]
            lo, hi = min(per_round), max(per_round)
            per_mode[m]["pmed"].append(statistics.median(per_round))
            rmin, rmed = mmin / pmin, mmed / pmed
            bad = sum(1 for x in d.values() if not (x.get("same_plan") and x.get("same_rows")))
            mism[m] += bad
            ex = [x["exec_ms"] for x in d.values() if x.get("exec_ms") is not None]
            pl = [x["plan_ms"] for x in d.values() if x.get("plan_ms") is not None]
            per_mode[m]["min"].append((rmin, q))
            per_mode[m]["med"].append((rmed, q))
            per_mode[m]["lo"].append(lo)
            per_mode[m]["hi"].append(hi)
            cells.append("%.3f / %.3f (%.2f–%.2f)%s" % (rmin, rmed, lo, hi, " **plan!**" if bad else ""))
            csv_rows.append([q, m, len(d), "%.3f" % mmin, "%.3f" % mmed, "%.4f" % rmin, "%.4f" % rmed,
                             "%.4f" % lo, "%.4f" % hi, "%.3f" % min(ex) if ex else "",
                             "%.3f" % min(pl) if pl else "", bad])
        rows.append("| %s | %.1f | %.1f | %s |" % (q, pmin, pmed, " | ".join(cells)))
    em = [m for m in modes if m != "plain"]
    head = ["| mode | geomean of min ratios | worst (min) | geomean of median ratios | worst (median) "
            "| per-round ratios: geomean of the medians (of the lows – of the highs) | plan or rows differing |",
            "|---|---:|---|---:|---|---|---:|"]
    for m in em:
        pm = per_mode[m]
        wmin = max(pm["min"])
        wmed = max(pm["med"])
        head.append("| %s | **%.3f** | %.3f (%s) | %.3f | %.3f (%s) | %.3f (%.3f – %.3f) | %d |" % (
            TITLES.get(m, m), gmean([x for x, _ in pm["min"]]), wmin[0], wmin[1],
            gmean([x for x, _ in pm["med"]]), wmed[0], wmed[1],
            gmean(pm["pmed"]), gmean(pm["lo"]), gmean(pm["hi"]), mism[m]))
    plain_total_min = sum(min(x["ms"] for x in t[(q, "plain")].values()) for q in queries)
    # where the EXPLAIN modes' wall time goes: Execution Time, Planning Time, the rest
    split = ["| mode | sum of min wall, ms | sum of min Execution Time, ms | median of (wall − Execution − Planning), ms |",
             "|---|---:|---:|---:|"]
    split.append("| plain | %.0f | | |" % plain_total_min)
    for m in em:
        recs = [x for (q, mm), d in t.items() if mm == m for x in d.values()]
        wall = sum(min(x["ms"] for x in t[(q, m)].values()) for q in queries)
        exe = sum(min(x["exec_ms"] for x in t[(q, m)].values()) for q in queries)
        rest = statistics.median(x["ms"] - x["exec_ms"] - (x.get("plan_ms") or 0) for x in recs)
        split.append("| %s | %.0f | %.0f | %.2f |" % (m, wall, exe, rest))
    facts = {}
    mpath = os.path.join(out, "modes.json")
    if os.path.exists(mpath):
        facts = json.load(open(mpath))
    text = ["## Summary", "",
            "%d queries, %d measured rounds (after a warm-up); ratio = the mode's time over the "
            "plain query's, both wall-clock on the server, planning included. Min: per query "
            "the minimum over the rounds, then the geometric mean over the queries; median "
            "likewise. Per-round ratios: each round's mode time over the same round's plain "
            "time, per query their median, lowest and highest; the column gives the geometric "
            "means of those over the queries." % (len(queries), len(rounds)), ""] + head + [
            "", "Plain query set: %.1f s (sum of the minima)." % (plain_total_min / 1000), "",
            "Where the EXPLAIN modes' time goes:", ""] + split + [
            "", "## Per query", "",
            "Plain: min and median ms. Each mode: min ratio / median ratio (per-round low–high).", "",
            "| query | plain min | plain median | " + " | ".join(TITLES.get(m, m) for m in em) + " |",
            "|---|---:|---:|" + "---|" * len(em)] + rows
    if facts.get("modes"):
        text += ["", "## Modes as run (SHOW under each mode's SET LOCALs)", ""]
        for m in modes:
            text.append("- %s: %s" % (m, facts["modes"].get(m, "?")))
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(text) + "\n")
    with open(os.path.join(out, "summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["query", "mode", "rounds", "min_ms", "median_ms", "ratio_min", "ratio_median",
                    "round_ratio_low", "round_ratio_high", "exec_min_ms", "planning_min_ms",
                    "plan_or_rows_differing"])
        w.writerows(csv_rows)
    print("\n".join(head))
    print("plain set %.1f s; mismatches: %s" % (plain_total_min / 1000, mism))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("out")
    r.add_argument("--psql", required=True)
    r.add_argument("--queries", required=True)
    r.add_argument("--fraction", required=True, help="Q11's 0.0001 / scale")
    r.add_argument("--rounds", type=int, default=5)
    r.add_argument("--modes", default=" ".join(ORDER))
    r.add_argument("--only", default="", help="a subset of the queries, by name")
    p = sub.add_parser("report")
    p.add_argument("out")
    a = ap.parse_args()
    {"run": cmd_run, "report": cmd_report}[a.cmd](a)


if __name__ == "__main__":
    main()
