#!/usr/bin/env python3
"""bench/shares.py: the absolute reference (issue 42, item 1), driven by
bench/shares.sh.  Three commands:

  run OUT --psql "PSQL ARGV" --pm PID [--rounds R] [--shapes ...]
          [--modes ...] [--freq HZ] [--stack BYTES]
      One psql session (one backend) runs every shape in every
      configuration, in interleaved rounds; perf records the plain runs.
      Writes OUT/runs.jsonl (every EXPLAIN plan, and each plain run's own
      EXPLAIN without ANALYZE) and OUT/perf/*.data.
  collapse OUT
      perf script of each OUT/perf/*.data, each sample reduced to its path
      of plan node types (below), counted: OUT/stacks.jsonl; the .data
      files are removed unless --keep.
  report OUT
      OUT/report.md and OUT/summary.csv from runs.jsonl and stacks.jsonl.

The pictures.  For one query, a picture gives each plan node a share of the
executor run: its exclusive time over the sum of all nodes' exclusive times
(for a serial plan, the root's inclusive time).

perf's picture is that of the plain query, uninstrumented: perf record
(cpu-clock, DWARF call graphs; the query run --reps times back to back in
each round, since the plain query is the quickest configuration and the
samples are the picture's noise) of the backend and of the processes the
postmaster forks meanwhile (parallel workers), each sample given to the
innermost plan node on its stack.  Samples outside every plan node (parse,
plan, ExecutorStart/End, commit, sending the result) are left out: the
shares are shares of the executor run.

A mode's picture: EXPLAIN (ANALYZE, VERBOSE, BUFFERS OFF, FORMAT JSON) of
the same query, exclusive time of a node = its inclusive time minus the inclusive times of the children that run inside it:
  - Outer, Inner, Member and SubPlan children (a SubPlan runs inside the
    expression of its parent);
  - a CTE's plan (an InitPlan "CTE name") runs inside the CTE Scan that
    reads it first; it is subtracted from the CTE Scan of that CTE with the
    largest inclusive time (the one that ran it; the others read its
    tuplestore); any other InitPlan from the node that runs it: the
    deepest node below the one it is listed under whose expressions use
    its result (the scan whose filter reads it), else that node;
  - below a Gather (Merge), inclusive times are summed over the processes
    (loops = processes); the Gather's own time is the leader's: its
    inclusive time minus the leader's part of its child (the child's time
    less its workers', from VERBOSE's per-worker figures).  Its share also
    holds the leader's waits for workers, which perf's CPU samples cannot
    see: the parallel shape's figures say how much that is.
A node's inclusive time is the instrumentation's total over all loops,
unrounded, which bench/shares_explain.c adds to EXPLAIN on 18 and later
(before 18, sends as a NOTICE at ExecutorEnd):
EXPLAIN itself prints the average per loop rounded to 0.001 ms, which times
250,000 loops is +-125 ms (without the module, that is what is used;
the report then says so).  The report also gives the distance
computed from the printed (rounded) times, what a reader of EXPLAIN gets.
Negative exclusive times (a child longer than its parent) count as 0.
Runs of one set are pooled (their exclusive times summed) before the
shares are taken, as perf's samples are.

Mapping samples to plan nodes (PostgreSQL 18's executor).  A sample's call
chain, from the outermost standard_ExecutorRun (ExecutePlan is inlined
into it on 18; a worker's is below ParallelQueryMain) to the leaf, is reduced to the plan node types it passes through:
  - entry functions, one frame per node call: the ExecProcNode callbacks
    (ExecAgg, ExecSeqScanWithQual, ExecHashJoin, ...) and MultiExecHash,
    MultiExecBitmap*: each starts a node;
  - access functions (SeqNext, IndexNext, CteScanNext, ...): a node's own
    scan function, which the entry function may tail-call (on 18
    ExecSeqScan jumps to SeqNext, so its frame is gone): one starts a node
    unless the node in progress is of its type already;
  - ExecScan (execScan.c, shared by scans), unless called by its scan's
    entry function: a scan (whose entry function tail-called it) of the
    type its access function then names.  Below a scan's access function
    (CteScanNext running the CTE's plan) a frame starts a node too: on 15
    the CTE's Seq Scan is ExecScan < CteScanNext < ExecScan;
  - ExecSubPlan, ExecScanSubPlan, ExecSetParamPlan, ExecHashSubPlan,
    buildSubPlanHash: the next node starts anew (a SubPlan's Seq Scan below
    a Seq Scan's filter is another node);
  - ExecReScan and what it calls belong to the node that calls it, as in
    EXPLAIN (a rescan is outside the child's ExecProcNode call); every
    other function (expressions, tuplesort, heap access, nodeHash.c's
    probe functions called by ExecHashJoin, the kernel) belongs to the
    node in progress.
The path is matched to the plan tree (EXPLAIN FORMAT JSON of the same
query): a node whose chain of ancestors, from the root, holds the path's
types in order, the last being the node itself and, for a chain that
reached standard_ExecutorRun, the first the root; a worker's path (a sample of a process
other than the session's backend, or below ParallelQueryMain) is matched
below a Gather.  A CTE's plan hangs below each CTE Scan of it (a sample there
passes through the scan that is reading).  A path whose frames were
tail-called away matches by skipping nodes; the fewest skips wins, and
between equals the chain that enters as many subplans as the stack did
(ExecSubPlan, ExecSetParamPlan, ... mark the node after them: Q15's CTE
read through a CTE Scan against the InitPlan that scan's filter runs).
Two nodes matching equally well (siblings of one type whose parents call
them from the same function, e.g. both sides of a Nested Loop or the two
Bitmap Index Scans of a BitmapAnd) are told apart by nothing on the stack:
such samples are counted as "ambiguous", and those nodes are one group in
every picture (perf's and each mode's) when distances are taken; the
report lists the groups.  The shapes are built to have none (a hash join's
two scans are apart by the Hash: [Hash Join, Hash, Seq Scan] is the inner
side).  Chains that did not reach standard_ExecutorRun (the copied stack was
too short) are matched from the leaf up and counted as "unrooted".

The distance between two pictures: total variation, half the sum of the
absolute share differences over all nodes, in points (0: the same picture,
100: disjoint).  Its noise, beside every figure: rounds alternate between
set A and set B (odd, even rounds), so that perf's picture and every mode's
are each measured twice in the same interleaving; the report gives the
distance of the pooled pictures, the distances within set A and within set
B, and each configuration's distance to itself (A against B).
"""
import argparse
import csv
import gzip
import json
import os
import re
import select
import shlex
import signal
import statistics
import subprocess
import sys
import time
from collections import defaultdict

MODES = {
    # id: (title, SET LOCAL commands)
    "stock": ("stock (clock_gettime)",
              "SET LOCAL fasttime.clock_source = clock_gettime; SET LOCAL fasttime.node_timing = exact;"),
    "on": ("exact, ordered reads",
           "SET LOCAL fasttime.clock_source = try_tsc; SET LOCAL fasttime.node_timing = exact; "
           "SET LOCAL fasttime.ordered_reads = on;"),
    "off": ("exact, plain reads",
            "SET LOCAL fasttime.clock_source = try_tsc; SET LOCAL fasttime.node_timing = exact; "
            "SET LOCAL fasttime.ordered_reads = off;"),
    "profile": ("profile",
                "SET LOCAL fasttime.clock_source = try_tsc; SET LOCAL fasttime.node_timing = profile; "
                "SET LOCAL fasttime.tick_source = signal;"),
    # the server starts the tick worker when a mode wants it (shares.sh),
    # so the defaults name their tick source, the default one
    "default": ("the defaults (auto, profile, timer signals)",
                "SET LOCAL fasttime.tick_source = signal;"),
    "default_worker": ("the defaults, tick worker",
                       "SET LOCAL fasttime.tick_source = worker;"),
    # read from runs before 2026-12-07d, whose "default" was the tick
    # worker (report only: those runs' own README names their modes)
    "default_sig": ("the defaults, timer signals (runs before 2026-12-07d)",
                    "SET LOCAL fasttime.tick_source = signal;"),
}
PLAIN_SETS = "SET LOCAL fasttime.clock_source = clock_gettime;"
EXPLAIN = "EXPLAIN (ANALYZE, VERBOSE, BUFFERS OFF, FORMAT JSON) "

# ---------------------------------------------------------------- mapping
ENTRY = {
    "ExecAgg": "Aggregate", "ExecAppend": "Append",
    "ExecBitmapAnd": "BitmapAnd", "MultiExecBitmapAnd": "BitmapAnd",
    "ExecBitmapOr": "BitmapOr", "MultiExecBitmapOr": "BitmapOr",
    "ExecBitmapHeapScan": "Bitmap Heap Scan",
    "ExecBitmapIndexScan": "Bitmap Index Scan", "MultiExecBitmapIndexScan": "Bitmap Index Scan",
    "ExecCteScan": "CTE Scan", "ExecCustomScan": "Custom Scan", "ExecForeignScan": "Foreign Scan",
    "ExecFunctionScan": "Function Scan", "ExecGather": "Gather", "ExecGatherMerge": "Gather Merge",
    "ExecGroup": "Group", "ExecHash": "Hash", "MultiExecHash": "Hash",
    "ExecHashJoin": "Hash Join", "ExecParallelHashJoin": "Hash Join",
    "ExecIncrementalSort": "Incremental Sort", "ExecIndexOnlyScan": "Index Only Scan",
    "ExecIndexScan": "Index Scan", "ExecLimit": "Limit", "ExecLockRows": "LockRows",
    "ExecMaterial": "Materialize", "ExecMemoize": "Memoize", "ExecMergeAppend": "Merge Append",
    "ExecMergeJoin": "Merge Join", "ExecModifyTable": "ModifyTable",
    "ExecNamedTuplestoreScan": "Named Tuplestore Scan", "ExecNestLoop": "Nested Loop",
    "ExecProjectSet": "ProjectSet", "ExecRecursiveUnion": "Recursive Union",
    "ExecResult": "Result", "ExecSampleScan": "Sample Scan",
    "ExecSeqScan": "Seq Scan", "ExecSeqScanWithQual": "Seq Scan",
    "ExecSeqScanWithProject": "Seq Scan", "ExecSeqScanWithQualProject": "Seq Scan",
    "ExecSeqScanEPQ": "Seq Scan", "ExecSetOp": "SetOp", "ExecSort": "Sort",
    "ExecSubqueryScan": "Subquery Scan", "ExecTableFuncScan": "Table Function Scan",
    "ExecTidRangeScan": "Tid Range Scan", "ExecTidScan": "Tid Scan", "ExecUnique": "Unique",
    "ExecValuesScan": "Values Scan", "ExecWindowAgg": "WindowAgg",
    "ExecWorkTableScan": "WorkTable Scan",
}
ACCESS = {
    "SeqNext": "Seq Scan", "SeqRecheck": "Seq Scan",
    "IndexNext": "Index Scan", "IndexNextWithReorder": "Index Scan",
    "IndexOnlyNext": "Index Only Scan", "BitmapHeapNext": "Bitmap Heap Scan",
    "CteScanNext": "CTE Scan", "FunctionNext": "Function Scan", "SubqueryNext": "Subquery Scan",
    "ValuesNext": "Values Scan", "TidNext": "Tid Scan", "TidRangeNext": "Tid Range Scan",
    "SampleNext": "Sample Scan", "WorkTableScanNext": "WorkTable Scan",
    "ForeignNext": "Foreign Scan", "TableFuncNext": "Table Function Scan",
    "NamedTuplestoreScanNext": "Named Tuplestore Scan",
    # the executor's loop over the hash join's states is inlined into
    # ExecHashJoin; where the compiler keeps it apart it names the node
    "ExecHashJoinImpl": "Hash Join", "MultiExecPrivateHash": "Hash", "MultiExecParallelHash": "Hash",
}
ANY_SCAN = "*scan"
# in a path, before a node entered through a subplan frame (ExecSubPlan,
# ExecSetParamPlan, ...): it tells a CTE's plan, read through its CTE
# Scan, from an InitPlan that the same scan's filter runs (Q15)
SUB_MARK = "^"
GENERIC_SCAN = {"ExecScan", "ExecScanExtended", "ExecScanFetch"}
SUBPLAN = {"ExecSubPlan", "ExecScanSubPlan", "ExecSetParamPlan", "ExecSetParamPlanMulti",
           "ExecHashSubPlan", "buildSubPlanHash", "ExecEvalSubPlan"}
RESCAN = "ExecReScan"
# ExecutePlan is inlined into standard_ExecutorRun on 18's -O2 build
LEADER_ROOTS = ("standard_ExecutorRun", "ExecutePlan")
WORKER_ROOT = "ParallelQueryMain"
# shapes from this ord on are the halves of pairs (bench/sql/shares.sql),
# run only when named
PAIR_ORD = 100
# a shape with more of perf's samples unmatched or left out as ambiguous
# than this is not judged
MAX_AMBIGUOUS = 0.20
# nodes that stacks could not tell apart, in more than this share of a
# shape's samples, are one group when the pictures are compared; fewer
# such samples are left out (a generic ExecScan frame below a nested loop
# in a few samples would otherwise merge its two sides)
MERGE_MIN = 0.02


def is_scan(t):
    return t == ANY_SCAN or t.endswith("Scan")


def compatible(path_type, node_type):
    path_type = path_type.lstrip(SUB_MARK)
    return path_type == node_type or (path_type == ANY_SCAN and is_scan(node_type))


def subplan_edge(nodes, i):
    """Node i is run from its parent's expression (a SubPlan, an InitPlan
    other than a CTE's), so a subplan frame lies between the two on the
    stack."""
    n = nodes[i]
    return n["rel"] == "SubPlan" or (n["rel"] == "InitPlan" and not (n["subplan"] or "").startswith("CTE "))


def reduce_chain(frames, other_process=False):
    """frames: function names from the leaf out; other_process: the sample
    is not the session's backend's (a parallel worker: the postmaster's
    children are recorded too).  Returns (worker, rooted, [node types from
    the outermost in])."""
    frames = [f.split(".")[0] for f in frames]  # .constprop.0, .isra.0, .cold
    outer = frames[::-1]
    worker = other_process or WORKER_ROOT in outer
    start, rooted = 0, False
    for k, f in enumerate(outer):
        if f in LEADER_ROOTS:
            rooted = True
            start = k + 1  # after the outermost run and the ExecutePlan in it
            if k + 1 < len(outer) and outer[k + 1] == "ExecutePlan":
                start = k + 2
            break
    path, cur, last = [], None, None  # last: the kind of the last node frame
    sub = False  # a subplan was entered since the last node: mark the next
    for f in outer[start:]:
        if f == RESCAN:
            break  # the rest is the calling node's
        if f in SUBPLAN:
            cur, last, sub = None, None, True
            continue
        t = ENTRY.get(f)
        if t:
            path.append(SUB_MARK + t if sub else t)
            cur, last, sub = t, "entry", False
            continue
        t = ACCESS.get(f)
        if t:
            if cur == ANY_SCAN and last == "generic":
                path[-1] = path[-1][:-len(ANY_SCAN)] + t
            elif not (cur == t and last in ("entry", "generic")):
                path.append(SUB_MARK + t if sub else t)
                sub = False
            cur, last = t, "access"
            continue
        if f in GENERIC_SCAN:
            # ExecScan called by its scan's entry function (or ExecScanFetch by
            # ExecScan) is that scan's;
            # anywhere else (below another node, or below a scan's access
            # function, which runs the plan below it: a CTE's) it is a
            # scan whose entry function tail-called it
            if not (cur is not None and is_scan(cur) and last in ("entry", "generic")):
                path.append(SUB_MARK + ANY_SCAN if sub else ANY_SCAN)
                cur, sub = ANY_SCAN, False
            last = "generic"
    return worker, rooted, path


# ---------------------------------------------------------------- plan trees
def plan_nodes(plan):
    """Pre-order list of dicts: id, type, label, parent, rel, plan, children."""
    out = []

    def walk(p, parent):
        me = len(out)
        label = p["Node Type"]
        if p.get("Partial Mode") and p["Partial Mode"] != "Simple":
            label = p["Partial Mode"] + " " + label
        if p.get("Strategy") and p["Node Type"] == "Aggregate" and p["Strategy"] != "Plain":
            label += " (%s)" % p["Strategy"].lower()
        if p.get("Parallel Aware"):
            label = "Parallel " + label
        if p.get("Relation Name"):
            label += " on " + p["Relation Name"]
            if p.get("Alias") and p["Alias"] != p["Relation Name"]:
                label += " " + p["Alias"]
        elif p.get("CTE Name"):
            label += " on " + p["CTE Name"] + (" " + p["Alias"] if p.get("Alias") else "")
        if p.get("Index Name"):
            label += " using " + p["Index Name"]
        rel = p.get("Parent Relationship")
        if rel in ("SubPlan", "InitPlan"):
            label = "[%s %s] %s" % (rel, p.get("Subplan Name", ""), label)
        out.append({"id": me, "type": p["Node Type"], "label": label, "parent": parent,
                    "rel": rel, "plan": p, "children": [], "cte": p.get("CTE Name"),
                    "subplan": p.get("Subplan Name")})
        if parent is not None:
            out[parent]["children"].append(me)
        for c in p.get("Plans", []):
            walk(c, me)
    walk(plan, None)
    return out


def signature(plan):
    keys = ("Node Type", "Parent Relationship", "Subplan Name", "Strategy", "Partial Mode",
            "Parallel Aware", "Join Type", "Relation Name", "Alias", "Index Name", "CTE Name",
            "Workers Planned")
    s = "(" + ",".join(str(plan.get(k, "")) for k in keys)
    for c in plan.get("Plans", []):
        s += signature(c)
    return s + ")"


def cte_root(nodes, name):
    for n in nodes:
        if n["rel"] == "InitPlan" and n["subplan"] == "CTE " + name:
            return n["id"]
    return None


def subtree_ids(nodes, i):
    keep, todo = set(), [i]
    while todo:
        j = todo.pop()
        keep.add(j)
        todo.extend(nodes[j]["children"])
    return keep


def initplan_users(nodes, i):
    """The nodes that may run InitPlan i (not a CTE's): those below the
    node it is listed under, that one included, whose expressions use its
    result (18: "(InitPlan 1)"; before: "$0"), in pre-order; the listing
    node alone if none does.  The executor runs an InitPlan when its
    parameter is first evaluated, so its plan runs inside one of them
    (the deepest user, the scan whose filter reads it, in every plan
    seen)."""
    n = nodes[i]
    m = re.search(r"returns (\$[0-9]+(?:,\$[0-9]+)*)", n["subplan"] or "")
    if m:
        refs = [re.compile(re.escape(r) + r"(?![0-9])") for r in m.group(1).split(",")]
    else:
        refs = [re.compile(re.escape("(%s)" % (n["subplan"] or "")))]
    below = sorted(subtree_ids(nodes, n["parent"]) - subtree_ids(nodes, i))
    users = []
    for j in below:
        text = " ".join(json.dumps(v) for k, v in nodes[j]["plan"].items()
                        if k != "Plans" and k.endswith(("Filter", "Cond", "Output", "Key", "Function Call")))
        if any(r.search(text) for r in refs):
            users.append(j)
    return users or [n["parent"]]


def chains(nodes):
    """For every node, its ancestor chains from the root (a CTE's plan
    hangs below each CTE Scan of it, another InitPlan below each node that
    uses its result, instead of the node it is listed under)."""
    parents = {n["id"]: [n["parent"]] if n["parent"] is not None else [] for n in nodes}
    for n in nodes:
        if n["rel"] == "InitPlan" and (n["subplan"] or "").startswith("CTE "):
            name = n["subplan"][4:]
            scans = [m["id"] for m in nodes if m["type"] == "CTE Scan" and m["cte"] == name]
            if scans:
                parents[n["id"]] = scans
        elif n["rel"] == "InitPlan" and n["parent"] is not None:
            parents[n["id"]] = initplan_users(nodes, n["id"])
    memo = {}

    def ch(i, depth=0):
        if i in memo:
            return memo[i]
        if depth > 50:
            return []
        if not parents[i]:
            r = [[i]]
        else:
            r = [c + [i] for p in parents[i] for c in ch(p, depth + 1)]
        memo[i] = r
        return r
    return {n["id"]: ch(n["id"]) for n in nodes}


def match_ids(path, worker, rooted, nodes, all_chains, marked=False):
    """The nodes a sample's path matches best: (ids, None), more than one
    when the stack cannot tell them apart, or (None, reason).  marked: the
    path was reduced with subplan marks (stacks collapsed since they were
    added; older ones did not record them)."""
    if not path:
        return None, "outside"
    best, best_ids = None, set()
    for n in nodes:
        if not compatible(path[-1], n["type"]):
            continue
        for chain in all_chains[n["id"]]:
            if worker:
                gathers = [k for k, i in enumerate(chain) if nodes[i]["type"] in ("Gather", "Gather Merge")]
                if not gathers:
                    continue
                chain = chain[gathers[-1] + 1:]
            types = [nodes[i]["type"] for i in chain]
            # match backwards, each path element to the nearest compatible
            # ancestor: the smallest span ending at this node
            k, j = len(path) - 1, len(types) - 1
            ok = compatible(path[k], types[j])
            k -= 1
            j -= 1
            while ok and k >= 0:
                while j >= 0 and not compatible(path[k], types[j]):
                    j -= 1
                if j < 0:
                    ok = False
                    break
                k -= 1
                j -= 1
            if not ok:
                continue
            first = j + 1  # index of the chain element path[0] matched
            if rooted:
                # a rooted path starts at the root: path[1:] embeds in
                # types[first + 1:], so also in types[1:]
                if len(path) == 1 and len(types) != 1:
                    continue
                if first != 0 and not compatible(path[0], types[0]):
                    continue
                cost = len(types) - len(path)
            else:
                cost = len(types) - first - len(path)
            # between chains that match equally well, the one entering as
            # many subplans as the stack did (a tie-break only: a stack
            # whose subplan frames were missed still matches)
            subs = sum(1 for q in range(max(first, 1), len(chain)) if subplan_edge(nodes, chain[q]))
            cost = (cost, 0 if not marked or subs == sum(1 for t in path if t.startswith(SUB_MARK)) else 1)
            if best is None or cost < best:
                best, best_ids = cost, {n["id"]}
            elif cost == best:
                best_ids.add(n["id"])
    if not best_ids:
        return None, "unmatched"
    return best_ids, None


def match(path, worker, rooted, nodes, all_chains, marked=False):
    """The node a sample's path lands on: (id, None), or (None, reason)."""
    ids, why = match_ids(path, worker, rooted, nodes, all_chains, marked)
    if ids is None:
        return None, why
    if len(ids) > 1:
        return None, "ambiguous"
    return next(iter(ids)), None


def inclusive(p, rounded):
    """A node's inclusive ms over all loops: unrounded where
    bench/shares_explain.c added it (unless rounded), else EXPLAIN's
    per-loop average (rounded to 0.001 ms) times loops."""
    if not rounded and "Shares Total Time" in p:
        return p["Shares Total Time"]
    return p.get("Actual Total Time", 0.0) * p.get("Actual Loops", 0)


def workers_inclusive(p, rounded):
    if not rounded and "Shares Workers Total Time" in p:
        return p["Shares Workers Total Time"]
    wt = [w["Actual Total Time"] * w["Actual Loops"] for w in p.get("Workers") or []
          if "Actual Total Time" in w and "Actual Loops" in w]
    return sum(wt) if wt else None


def exclusive_times(plan, rounded=False):
    """EXPLAIN's exclusive ms per pre-order node id (see the docstring)."""
    nodes = plan_nodes(plan)
    incl = [inclusive(n["plan"], rounded) for n in nodes]
    contained = {n["id"]: [] for n in nodes}
    for n in nodes:
        if n["parent"] is None:
            continue
        if n["rel"] == "InitPlan" and (n["subplan"] or "").startswith("CTE "):
            name = n["subplan"][4:]
            scans = [m["id"] for m in nodes if m["type"] == "CTE Scan" and m["cte"] == name]
            if scans:
                contained[max(scans, key=lambda i: incl[i])].append(n["id"])
                continue
        if n["rel"] == "InitPlan":
            contained[initplan_users(nodes, n["id"])[-1]].append(n["id"])
            continue
        contained[n["parent"]].append(n["id"])
    excl = {}
    for n in nodes:
        i = n["id"]
        sub = 0.0
        for c in contained[i]:
            if n["type"] in ("Gather", "Gather Merge") and nodes[c]["rel"] == "Outer":
                cp = nodes[c]["plan"]
                wt = workers_inclusive(cp, rounded)
                if wt is not None:
                    sub += max(0.0, incl[c] - wt)
                else:
                    sub += incl[c] / max(1, cp.get("Actual Loops", 1))
            else:
                sub += incl[c]
        excl[i] = incl[i] - sub
    return excl


def shares(d):
    pos = {k: max(0.0, v) for k, v in d.items()}
    tot = sum(pos.values())
    return {k: (100.0 * v / tot if tot > 0 else 0.0) for k, v in pos.items()}


def merge_groups(nodes, sets):
    """Node id -> its group's id (the smallest): the nodes of each set in
    sets are one group, sets that share a node one group too."""
    up = {n["id"]: n["id"] for n in nodes}

    def find(i):
        while up[i] != i:
            up[i] = up[up[i]]
            i = up[i]
        return i
    for ids in sets:
        ids = sorted(ids)
        for j in ids[1:]:
            a, b = find(ids[0]), find(j)
            if a != b:
                up[max(a, b)] = min(a, b)
    return {i: find(i) for i in up}


def group_sum(d, grp):
    out = defaultdict(float)
    for k, v in d.items():
        out[grp.get(k, k)] += v
    return dict(out)


def tv(a, b):
    keys = set(a) | set(b)
    return 0.5 * sum(abs(a.get(k, 0.0) - b.get(k, 0.0)) for k in keys)


def read_jsonl(out, name):
    path = os.path.join(out, name)
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        with gzip.open(path + ".gz", "rt") as f:
            return [json.loads(l) for l in f if l.strip()]
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


# ---------------------------------------------------------------- running
class Psql:
    def __init__(self, argv):
        self.p = subprocess.Popen(argv + ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=0"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, bufsize=1)
        self.n = 0

    def run(self, sql):
        self.n += 1
        mark = "__shares_done_%d__" % self.n
        sql = sql.rstrip()
        if not sql.endswith(";"):
            sql += ";"  # else psql would wait for the statement's end
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
            raise RuntimeError("psql: %s\n%s" % (sql, text))
        return text

    def close(self):
        self.p.stdin.close()
        self.p.wait()


class Perf:
    """perf record of the backend and the postmaster's new children, started
    with its events disabled; enabled around the plain query only."""

    def __init__(self, data, pids, freq, stack):
        d = os.path.dirname(data)
        self.ctl, self.ack = data + ".ctl", data + ".ack"
        for f in (self.ctl, self.ack):
            if os.path.exists(f):
                os.unlink(f)
            os.mkfifo(f)
        self.ackfd = os.open(self.ack, os.O_RDONLY | os.O_NONBLOCK)
        self.log = open(data + ".log", "w")
        self.p = subprocess.Popen(
            ["perf", "record", "-q", "-e", "cpu-clock", "-F", str(freq),
             "--call-graph", "dwarf,%d" % stack, "-p", ",".join(map(str, pids)),
             "-D", "-1", "--control", "fifo:%s,%s" % (self.ctl, self.ack),
             "-B", "-N", "-o", data],
            stdout=self.log, stderr=subprocess.STDOUT, cwd=d)
        deadline = time.monotonic() + 30
        self.ctlfd = None
        while self.ctlfd is None:
            try:
                self.ctlfd = os.open(self.ctl, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                if self.p.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("perf record did not start: %s" % open(data + ".log").read())
                time.sleep(0.02)

    def command(self, what):
        os.write(self.ctlfd, (what + "\n").encode())
        deadline = time.monotonic() + 30
        buf = b""
        while b"ack" not in buf:
            r, _, _ = select.select([self.ackfd], [], [], 0.5)
            if r:
                buf += os.read(self.ackfd, 64)
            elif self.p.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("perf did not acknowledge %s" % what)

    def stop(self):
        self.p.send_signal(signal.SIGINT)
        self.p.wait(timeout=120)
        os.close(self.ctlfd)
        os.close(self.ackfd)
        os.unlink(self.ctl)
        os.unlink(self.ack)
        self.log.close()


def explain_json(text):
    """EXPLAIN's JSON, with bench/shares_explain.c's NOTICE (before 18)
    attached to its nodes as "Shares Total Time" and "Shares Workers Total
    Time", as the module's hook adds them on 18 and later."""
    totals, rest = None, []
    for line in text.splitlines():
        m = re.match(r"^(?:psql:[^ ]* )?NOTICE:\s+shares_totals: (.*)$", line)
        if m:
            totals = json.loads(m.group(1))
        else:
            rest.append(line)
    plan = json.loads("\n".join(rest))[0]
    if totals is not None:
        nodes = plan_nodes(plan["Plan"])
        if len(nodes) == len(totals):
            for n, (tot, workers) in zip(nodes, totals):
                if tot >= 0:
                    n["plan"]["Shares Total Time"] = tot
                    if n["plan"].get("Workers") is not None or workers > 0:
                        n["plan"]["Shares Workers Total Time"] = workers
        else:
            print("shares: %d totals for %d plan nodes: not used" % (len(totals), len(nodes)),
                  file=sys.stderr)
    return plan


def settings_sql(settings):
    out = []
    for s in filter(None, settings.split(";")):
        k, v = s.split("=", 1)
        out.append("SET LOCAL %s = '%s';" % (k.strip(), v.strip()))
    return " ".join(out)


def cmd_run(a):
    out = a.out
    os.makedirs(os.path.join(out, "perf"), exist_ok=True)
    psql = Psql(shlex.split(a.psql))
    if a.load:
        psql.run("LOAD '%s';" % a.load)
    backend = int(psql.run("SELECT pg_backend_pid();").strip())
    shapes = json.loads(psql.run(
        "SELECT json_agg(json_build_object('id', id, 'ord', ord, 'title', title, 'settings', settings, "
        "'query', query) ORDER BY ord) FROM shares_shapes;"))
    pairs = json.loads(psql.run(
        "SELECT coalesce(json_agg(json_build_object('id', id, 'title', title, 'base', base, 'work', work, "
        "'target', target) ORDER BY id), '[]') FROM shares_pairs;"))
    if a.shapes:
        # a pair's name stands for its two shapes
        want = []
        for w in a.shapes.split():
            pr = [p for p in pairs if p["id"] == w]
            want += [pr[0]["base"], pr[0]["work"]] if pr else [w]
        shapes = [s for s in shapes if s["id"] in want]
    else:
        shapes = [s for s in shapes if s["ord"] < PAIR_ORD]
    ids = {s["id"] for s in shapes}
    pairs = [p for p in pairs if p["base"] in ids and p["work"] in ids]
    modes = a.modes.split()
    for m in modes:
        if m not in MODES:
            sys.exit("shares: unknown mode %s" % m)
    configs = ["perf"] + modes
    raw = open(os.path.join(out, "runs.jsonl"), "a")
    t_start = time.monotonic()
    for r in range(a.rounds + 1):
        sset = "warm-up" if r == 0 else ("A" if r % 2 else "B")
        for si in range(len(shapes)):
            shape = shapes[(si + r) % len(shapes)]
            sets = settings_sql(shape["settings"])
            for ci in range(len(configs)):
                cfg = configs[(ci + r) % len(configs)]
                rec = {"shape": shape["id"], "round": r, "set": sset, "config": cfg}
                if cfg == "perf":
                    psql.run("BEGIN; %s %s" % (sets, PLAIN_SETS))
                    rec["plan"] = json.loads(psql.run("EXPLAIN (VERBOSE, FORMAT JSON) " + shape["query"]))[0]
                    if r > 0:
                        data = os.path.join(out, "perf", "%s-%02d.data" % (shape["id"], r))
                        perf = Perf(data, [backend, a.pm], a.freq, a.stack)
                        perf.command("enable")
                        t0 = time.monotonic()
                        for _ in range(a.reps):
                            psql.run(shape["query"])
                        rec["ms"] = 1000 * (time.monotonic() - t0) / a.reps
                        perf.command("disable")
                        perf.stop()
                        rec["perf"] = os.path.basename(data)
                    else:
                        t0 = time.monotonic()
                        psql.run(shape["query"])
                        rec["ms"] = 1000 * (time.monotonic() - t0)
                    psql.run("COMMIT;")
                else:
                    text = psql.run("BEGIN; %s %s %s%s; COMMIT;" % (sets, MODES[cfg][1], EXPLAIN, shape["query"]))
                    rec["plan"] = explain_json(text)
                raw.write(json.dumps(rec) + "\n")
                raw.flush()
        print("shares: round %d of %d done (%s), %.0f s" % (r, a.rounds, sset, time.monotonic() - t_start),
              file=sys.stderr, flush=True)
    # what each mode ran with: SHOW, and EXPLAIN (CLOCK_SOURCE) on 18+
    facts = {}
    major = int(psql.run("SELECT current_setting('server_version_num')::int / 10000;").strip())
    probe = shapes[0]
    for m in modes:
        show = psql.run("BEGIN; %s SELECT string_agg(name || ' = ' || setting, ', ' ORDER BY name) "
                        "FROM pg_settings WHERE name IN ('fasttime.clock_source', 'fasttime.clock_source_status', "
                        "'fasttime.node_timing', 'fasttime.ordered_reads', 'fasttime.profile_interval', "
                        "'fasttime.profile_interval_max', 'fasttime.profile_after', 'fasttime.tick_source'); COMMIT;"
                        % MODES[m][1]).strip()
        lines = ""
        if major >= 18:
            text = psql.run("BEGIN; %s %s EXPLAIN (ANALYZE, CLOCK_SOURCE, BUFFERS OFF) %s; COMMIT;"
                            % (settings_sql(probe["settings"]), MODES[m][1], probe["query"]))
            lines = " / ".join(l.strip() for l in text.splitlines()
                               if l.strip().startswith(("Timing Source", "Node Timing")))
        facts[m] = {"settings": show, "clock_source_line": lines}
    with open(os.path.join(out, "modes.json"), "w") as f:
        json.dump({"modes": facts, "shapes": shapes, "pairs": pairs, "backend": backend,
                   "freq": a.freq, "reps": a.reps}, f, indent=1)
    psql.close()


# ---------------------------------------------------------------- collapse
def perf_samples(data):
    """(pid, [function names from the leaf out]) for each sample."""
    p = subprocess.Popen(["perf", "script", "-i", data, "-F", "pid,ip,sym", "--no-inline"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                         errors="replace")
    pid, frames = None, []
    for line in p.stdout:
        line = line.rstrip("\n")
        if not line.strip():
            if pid is not None:
                yield pid, frames
            pid, frames = None, []
        elif not line[0].isspace() or pid is None:
            m = re.match(r"\s*(\d+)", line)
            pid = int(m.group(1)) if m else -1
            frames = []
        else:
            parts = line.split()
            # "addr sym (dso)" or "sym" with -F sym
            name = parts[1] if len(parts) > 1 and re.match(r"^[0-9a-f]+$", parts[0]) else parts[0]
            frames.append(re.sub(r"\+0x[0-9a-f]+$", "", name))
    if pid is not None:
        yield pid, frames
    p.wait()


def cmd_collapse(a):
    out = a.out
    runs = read_jsonl(out, "runs.jsonl")
    backend = json.load(open(os.path.join(out, "modes.json")))["backend"]
    dst = open(os.path.join(out, "stacks.jsonl"), "a")
    done = set()
    if os.path.exists(os.path.join(out, "stacks.jsonl")):
        done = {json.loads(l)["perf"] for l in open(os.path.join(out, "stacks.jsonl"))}
    todo = [r for r in runs if r.get("perf") and r["perf"] not in done]
    t0 = time.monotonic()
    for i, r in enumerate(todo):
        data = os.path.join(out, "perf", r["perf"])
        counts = defaultdict(int)
        pids = defaultdict(int)
        examples = {}
        n = 0
        for pid, frames in perf_samples(data):
            n += 1
            worker, rooted, path = reduce_chain(frames, pid != backend)
            key = ("W" if worker else "L") + ("" if rooted else "?") + "|" + ">".join(path)
            counts[key] += 1
            pids[pid] += 1
            if key not in examples:
                examples[key] = frames[:40]
        rec = {"shape": r["shape"], "round": r["round"], "set": r["set"], "perf": r["perf"],
               "marked": True, "samples": n, "pids": len(pids), "counts": counts, "examples": examples}
        dst.write(json.dumps(rec) + "\n")
        dst.flush()
        if not a.keep:
            os.unlink(data)
            if os.path.exists(data + ".log"):
                os.unlink(data + ".log")
        print("shares: collapsed %s (%d samples), %d of %d, %.0f s" %
              (r["perf"], n, i + 1, len(todo), time.monotonic() - t0), file=sys.stderr, flush=True)


# ---------------------------------------------------------------- report
def fmt(x, nd=1):
    return ("%." + str(nd) + "f") % x


def cmd_report(a):
    out = a.out
    runs = read_jsonl(out, "runs.jsonl")
    stacks = read_jsonl(out, "stacks.jsonl")
    meta = json.load(open(os.path.join(out, "modes.json")))
    shapes = meta["shapes"]
    modes = [m for m in MODES if any(r["config"] == m for r in runs)]
    lines, summary = [], []
    per_mode = defaultdict(lambda: {"AB": [], "A": [], "B": []})
    summary_rounded = defaultdict(list)
    misses = defaultdict(dict)
    all_unrounded = True
    perf_self_all = []
    unjudged = {}
    for shape in shapes:
        sid = shape["id"]
        sruns = [r for r in runs if r["shape"] == sid and r["round"] > 0]
        if not sruns or shape.get("ord", 0) >= PAIR_ORD:
            continue
        plain_plans = [r["plan"] for r in sruns if r["config"] == "perf"]
        ref = plain_plans[0]["Plan"]
        nodes = plan_nodes(ref)
        sig = signature(ref)
        mism = [r for r in sruns if signature(r["plan"]["Plan"]) != sig]
        all_chains = chains(nodes)
        # perf's picture, per set
        pic = {"A": defaultdict(float), "B": defaultdict(float)}
        other = {"A": defaultdict(int), "B": defaultdict(int)}
        nsamp = {"A": 0, "B": 0}
        workers_seen = []
        unmatched_examples = {}
        ambiguous = []  # (set, node ids, samples)
        for st in stacks:
            if st["shape"] != sid or st["round"] == 0:
                continue
            s = st["set"]
            workers_seen.append(st["pids"])
            for key, c in st["counts"].items():
                head, _, p = key.partition("|")
                path = p.split(">") if p else []
                worker, rooted = head[0] == "W", "?" not in head
                nsamp[s] += c
                ids, why = match_ids(path, worker, rooted, nodes, all_chains, st.get("marked", False))
                if ids is None or len(ids) > 1:
                    why = why or "ambiguous"
                    other[s][why] += c
                    if why not in ("outside",) and len(unmatched_examples) < 6:
                        unmatched_examples[key] = st["examples"].get(key, [])[:25]
                    if not rooted and why == "outside":
                        other[s]["unrooted outside"] += c
                    if ids is not None:
                        ambiguous.append((s, ids, c))
                    continue
                pic[s][next(iter(ids))] += c
                if not rooted:
                    other[s]["unrooted (matched)"] += c
        # nodes that a stack could not tell apart (two index scans below
        # one BitmapAnd) are one group for the distances: each picture is
        # compared at the resolution perf's can give
        by_set = defaultdict(int)
        for _, ids, c in ambiguous:
            by_set[frozenset(ids)] += c
        big = [ids for ids, c in by_set.items() if c > MERGE_MIN * max(1, nsamp["A"] + nsamp["B"])]
        grp = merge_groups(nodes, big)
        left_out = 0
        for s, ids, c in ambiguous:
            if frozenset(ids) in big:
                pic[s][grp[min(ids)]] += c
            else:
                left_out += c
        pic = {s: group_sum(pic[s], grp) for s in pic}
        merged = sorted({tuple(sorted(i for i in grp if grp[i] == g)) for g in grp.values()} - {(g,) for g in grp})

        def group_name(i):
            return next(("+".join(str(j) for j in g) for g in merged if i in g), str(i))
        perf_ab = {k: pic["A"].get(k, 0) + pic["B"].get(k, 0) for k in set(pic["A"]) | set(pic["B"])}
        P = {"AB": shares(perf_ab), "A": shares(pic["A"]), "B": shares(pic["B"])}
        perf_self = tv(P["A"], P["B"])
        # a shape whose samples the stack cannot give to any node is shown
        # but not judged: perf's picture of it is not the query's
        amb = (left_out + sum(other[x].get("unmatched", 0) for x in "AB")) / max(1, nsamp["A"] + nsamp["B"])
        judged = amb <= MAX_AMBIGUOUS
        if not judged:
            unjudged[sid] = amb
        else:
            perf_self_all.append(perf_self)
        # the modes' pictures
        M, MN, MR, exec_ms, clipped = {}, {}, {}, {}, {}
        unrounded = all("Shares Total Time" in r["plan"]["Plan"] for r in sruns if r["config"] in modes)
        all_unrounded = all_unrounded and unrounded
        for m in modes:
            acc = {"A": defaultdict(float), "B": defaultdict(float)}
            accr = defaultdict(float)
            ex, neg = [], 0
            for r in sruns:
                if r["config"] != m:
                    continue
                e = exclusive_times(r["plan"]["Plan"])
                neg += sum(1 for v in e.values() if v < -0.005 * r["plan"]["Execution Time"])
                for k, v in e.items():
                    acc[r["set"]][k] += v
                for k, v in exclusive_times(r["plan"]["Plan"], rounded=True).items():
                    accr[k] += v
                ex.append(r["plan"]["Execution Time"])
            ab = {k: acc["A"].get(k, 0) + acc["B"].get(k, 0) for k in set(acc["A"]) | set(acc["B"])}
            MN[m] = shares(ab)
            acc = {x: group_sum(acc[x], grp) for x in acc}
            ab = group_sum(ab, grp)
            M[m] = {"AB": shares(ab), "A": shares(acc["A"]), "B": shares(acc["B"])}
            MR[m] = shares(group_sum(accr, grp))
            exec_ms[m] = statistics.median(ex) if ex else float("nan")
            clipped[m] = neg
        plain_ms = statistics.median([r["ms"] for r in sruns if r["config"] == "perf"])
        # the section
        lines.append("### %s: %s" % (sid, shape["title"]))
        lines.append("")
        lines.append("`%s`%s" % (shape["query"], ("  \nsettings: `%s`" % shape["settings"]) if shape["settings"] else ""))
        lines.append("")
        tot = {s: nsamp[s] for s in "AB"}
        notes = []
        notes.append("perf samples A/B: %d / %d" % (tot["A"], tot["B"]))
        for why in ("outside", "unrooted (matched)", "unrooted outside", "ambiguous", "unmatched"):
            c = other["A"].get(why, 0) + other["B"].get(why, 0)
            if c or why in ("ambiguous", "unmatched"):
                notes.append("%s %.1f %%" % (why, 100.0 * c / max(1, tot["A"] + tot["B"])))
        notes.append("processes sampled per plain run: %s" % ",".join(str(x) for x in sorted(set(workers_seen))))
        notes.append("plans: %s" % ("all %d the same as the plain query's" % len(sruns) if not mism
                                    else "**%d of %d differ from the plain query's**" % (len(mism), len(sruns))))
        lines.append("; ".join(notes) + ".")
        lines.append("")
        hdr = "| node | perf | " + " | ".join(MODES[m][0] for m in modes) + " |"
        lines.append(hdr)
        lines.append("|---|" + "---:|" * (1 + len(modes)))
        for n in nodes:
            i = n["id"]
            depth, p = 0, n["parent"]
            while p is not None:
                depth += 1
                p = nodes[p]["parent"]
            cells = []
            for pic_ in [P] + [M[m] for m in modes]:
                if any(i in g for g in merged):
                    cells.append("in %s" % "+".join(str(j) for g in merged if i in g for j in g))
                    continue
                a_, b_ = pic_["A"].get(i, 0.0), pic_["B"].get(i, 0.0)
                cells.append("%s ±%s" % (fmt(pic_["AB"].get(i, 0.0)), fmt(abs(a_ - b_) / 2)))
            if any(i in g for g in merged):
                cells[1:] = ["%s (%s)" % (fmt(MN[m].get(i, 0.0)), cells[1 + k]) for k, m in enumerate(modes)]
            lines.append("| %s%d %s | %s |" % ("&nbsp;" * 3 * depth, i, n["label"], " | ".join(cells)))
        for g in merged:
            cells = []
            for pic_ in [P] + [M[m] for m in modes]:
                a_, b_ = pic_["A"].get(g[0], 0.0), pic_["B"].get(g[0], 0.0)
                cells.append("%s ±%s" % (fmt(pic_["AB"].get(g[0], 0.0)), fmt(abs(a_ - b_) / 2)))
            lines.append("| nodes %s, as one (the stack cannot tell them apart) | %s |" % (
                "+".join(str(j) for j in g), " | ".join(cells)))
        dist_cells, miss_cells = [], []
        for m in modes:
            d = tv(M[m]["AB"], P["AB"])
            dA, dB = tv(M[m]["A"], P["A"]), tv(M[m]["B"], P["B"])
            self_ = tv(M[m]["A"], M[m]["B"])
            if judged:
                per_mode[m]["AB"].append(d)
                per_mode[m]["A"].append(dA)
                per_mode[m]["B"].append(dB)
            dist_cells.append("**%s** (A %s, B %s; self %s)" % (fmt(d), fmt(dA), fmt(dB), fmt(self_)))
            diffs = sorted(((M[m]["AB"].get(n["id"], 0) - P["AB"].get(n["id"], 0), n) for n in nodes
                            if grp[n["id"]] == n["id"]), key=lambda x: -abs(x[0]))
            miss_cells.append(", ".join("%s %s %+.1f" % (group_name(n["id"]), n["type"], dd) for dd, n in diffs[:2]
                                        if abs(dd) >= 0.05))
            misses[sid][m] = miss_cells[-1]
            summary.append({"shape": sid, "mode": m, "d": d, "dA": dA, "dB": dB, "self": self_,
                            "perf_self": perf_self, "exec_ms": exec_ms[m],
                            "worst_node": "%d %s" % (diffs[0][1]["id"], diffs[0][1]["label"]),
                            "worst_diff": diffs[0][0], "neg_nodes": clipped[m]})
        lines.append("| **distance** (points) | self %s | %s |" % (fmt(perf_self), " | ".join(dist_cells)))
        lines.append("| most apart from perf | | %s |" % " | ".join(miss_cells))
        if unrounded:
            lines.append("| distance from EXPLAIN's printed times (per loop, rounded to 0.001 ms) | | %s |" % " | ".join(
                fmt(tv(MR[m], P["AB"])) for m in modes))
            for m in modes:
                if judged:
                    summary_rounded[m].append(tv(MR[m], P["AB"]))
        lines.append("| Execution Time, median ms | plain %s (under perf, wall) | %s |" % (
            fmt(plain_ms, 0), " | ".join(fmt(exec_ms[m], 0) for m in modes)))
        if any(clipped.values()):
            lines.append("")
            lines.append("Nodes with a negative exclusive time (counted as 0): %s." % ", ".join(
                "%s %d" % (m, clipped[m]) for m in modes if clipped[m]))
        if unmatched_examples:
            lines.append("")
            lines.append("Paths not given to a node (examples):")
            for k, fr in unmatched_examples.items():
                lines.append("- `%s`: %s" % (k, " < ".join(fr[:14])))
        lines.append("")
    # summary table
    head = []
    head.append("| shape | perf self | " + " | ".join(MODES[m][0] for m in modes) + " |")
    head.append("|---|---:|" + "---:|" * len(modes))
    byshape = defaultdict(dict)
    for s in summary:
        byshape[s["shape"]][s["mode"]] = s
    for shape in shapes:
        sid = shape["id"]
        if sid not in byshape:
            continue
        row = byshape[sid]
        ps = next(iter(row.values()))["perf_self"]
        head.append("| %s | %s | %s |" % (
            sid + (" (not judged: %.0f %% of perf's samples unmatched)" % (100 * unjudged[sid])
                   if sid in unjudged else ""),
            fmt(ps), " | ".join(
            "%s (%s–%s; self %s)" % (fmt(row[m]["d"]), fmt(min(row[m]["dA"], row[m]["dB"])),
                                     fmt(max(row[m]["dA"], row[m]["dB"])), fmt(row[m]["self"]))
            for m in modes)))

    def mw(xs):
        return "%s / %s" % (fmt(statistics.median(xs)), fmt(max(xs))) if xs else "-"
    head.append("| **median / worst** | %s | %s |" % (mw(perf_self_all), " | ".join(
        "**%s** (A %s, B %s)" % (mw(per_mode[m]["AB"]), mw(per_mode[m]["A"]), mw(per_mode[m]["B"]))
        for m in modes)))
    if summary_rounded:
        head.append("| from printed times | | %s |" % " | ".join(mw(summary_rounded[m]) for m in modes))
    head += ["", "The two nodes furthest from perf's share, per shape and mode (points, + = the mode shows more):", "",
             "| shape | " + " | ".join(MODES[m][0] for m in modes) + " |", "|---|" + "---|" * len(modes)]
    for shape in shapes:
        if shape["id"] in misses:
            head.append("| %s | %s |" % (shape["id"], " | ".join(misses[shape["id"]][m] for m in modes)))
    head += ["", "Node times: %s." % (
        "unrounded (bench/shares_explain.c); the row 'from printed times' is the distance EXPLAIN's own "
        "rounded per-loop figures give" if all_unrounded else
        "**EXPLAIN's printed per-loop averages (rounded to 0.001 ms) times loops**: nodes with many "
        "short loops are off by up to 0.0005 ms a loop")]
    if not summary:
        head = ["(no shape but the pairs' halves was run)"]
    else:
        with open(os.path.join(out, "summary.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(summary[0].keys()))
            w.writeheader()
            for s in summary:
                w.writerow({k: (round(v, 3) if isinstance(v, float) else v) for k, v in s.items()})
    plines = pair_report(runs, stacks, meta, modes)
    facts = ["- `%s`: %s%s" % (m, meta["modes"][m]["settings"],
                                ("; " + meta["modes"][m]["clock_source_line"]) if meta["modes"][m]["clock_source_line"] else "")
             for m in modes if m in meta["modes"]]
    rounds = sorted({r["round"] for r in runs if r["round"] > 0})
    text = ["## Distance from perf's picture of the plain query, points (0 = the same picture)", "",
            "Per shape and mode: the distance of the pooled pictures (both sets), the distances within "
            "set A and within set B, and the mode's distance to itself (set A against set B); "
            "`perf self`: perf's picture of set A against set B. %d measured rounds (sets alternate), "
            "after a warm-up round." % len(rounds), ""] + head + [
            "", "Modes as run (SHOW under the mode; EXPLAIN (CLOCK_SOURCE) of the first shape):", ""] + facts + [
            "", "## Per shape: shares of the executor run, % (pooled; ± half the set A–B difference)", ""] + lines
    if plines:
        text = plines + [""] + text
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(text) + "\n")
    print("\n".join(plines + [""] + head))


def pair_report(runs, stacks, meta, modes):
    """The pairs (bench/sql/shares.sql): per configuration (perf's plain
    runs and each mode), each node's own time in the base and the work
    query (perf: samples x 1000 / freq / reps, ms of CPU; a mode: its
    exclusive time), the median over the rounds of a set; the target's
    subtree difference against the whole run's difference (err), and the
    absolute differences of every node outside the subtree summed (leak),
    as bench/truth.py judges a pair against the mode's own difference.
    perf's err and leak are what the plain query does by itself: where the
    other nodes' time changes with the target's work (caches, the core's
    overlap of a parent's work with a child's misses), a mode that shows
    it is right, and bench/truth.sh's pair cannot tell."""
    pairs = meta.get("pairs") or []
    if not pairs:
        return []
    freq, reps = meta.get("freq", 4000), meta.get("reps", 2)
    out = ["## Pairs: where added work lands, perf's plain runs against each mode", "",
           "Per pair and configuration: the target's subtree difference (work - base, medians over the "
           "rounds) against the whole run's difference: err (0: all of it in the subtree) and leak (the "
           "own-time differences of every node outside the subtree, summed in absolute value, against the "
           "run's difference); each for the pooled rounds, then set A and set B. perf: the plain queries' "
           "CPU samples, each given to the innermost plan node (the executor run only).", "",
           "| pair | target | config | base ms | d ms | err | leak | err A / B |",
           "|---|---|---|---:|---:|---:|---:|---|"]
    node_lines = ["", "Per node (+: in the target's subtree):", ""]
    for pr in pairs:
        sruns = {h: [r for r in runs if r["shape"] == pr[h] and r["round"] > 0] for h in ("base", "work")}
        if not sruns["base"] or not sruns["work"]:
            continue
        ref = [r for r in sruns["base"] if r["config"] == "perf"][0]["plan"]["Plan"]
        nodes = plan_nodes(ref)
        all_chains = chains(nodes)
        tgt = [n for n in nodes if n["label"].startswith(pr["target"])]
        if len(tgt) != 1:
            out.append("| %s | %s: %d nodes match | | | | | | |" % (pr["id"], pr["target"], len(tgt)))
            continue
        tid = tgt[0]["id"]
        sub = {tid}
        for n in nodes:
            p = n["parent"]
            while p is not None:
                if p == tid:
                    sub.add(n["id"])
                    break
                p = nodes[p]["parent"]
        # own ms per node, per (config, half, set, round)
        own = defaultdict(dict)
        for h in ("base", "work"):
            for st in stacks:
                if st["shape"] != pr[h] or st["round"] == 0:
                    continue
                acc = defaultdict(float)
                for key, c in st["counts"].items():
                    head, _, p = key.partition("|")
                    nid, _ = match(p.split(">") if p else [], head[0] == "W", "?" not in head, nodes, all_chains,
                                   st.get("marked", False))
                    if nid is not None:
                        acc[nid] += c * 1000.0 / freq / reps
                own[("perf", h, st["set"])][st["round"]] = acc
            for r in sruns[h]:
                if r["config"] in modes:
                    own[(r["config"], h, r["set"])][r["round"]] = exclusive_times(r["plan"]["Plan"])

        def judge(cfg, sets):
            med = {}
            for h in ("base", "work"):
                per_round = [v for s_ in sets for v in own[(cfg, h, s_)].values()]
                if not per_round:
                    return None
                med[h] = {n["id"]: statistics.median([d.get(n["id"], 0.0) for d in per_round]) for n in nodes}
                med[h + "_tot"] = statistics.median([sum(d.values()) for d in per_round])
                med[h + "_sub"] = statistics.median([sum(v for k, v in d.items() if k in sub) for d in per_round])
            d_tot = med["work_tot"] - med["base_tot"]
            d_sub = med["work_sub"] - med["base_sub"]
            leak = sum(abs(med["work"][i] - med["base"][i]) for i in med["work"] if i not in sub)
            if d_tot <= 0:
                return med["base_tot"], d_tot, float("nan"), float("nan")
            return med["base_tot"], d_tot, 100.0 * (d_sub / d_tot - 1), 100.0 * leak / d_tot

        # node by node: own ms in base and work, medians over all rounds
        cfgs = [c for c in ["perf"] + modes if own[(c, "base", "A")] or own[(c, "base", "B")]]
        med_nodes = {}
        for c in cfgs:
            for h in ("base", "work"):
                per_round = [v for s_ in ("A", "B") for v in own[(c, h, s_)].values()]
                med_nodes[(c, h)] = {n["id"]: statistics.median([d.get(n["id"], 0.0) for d in per_round])
                                     for n in nodes} if per_round else {}
        node_lines.append("**%s** (target %d %s): own ms, base → work (difference), medians over the rounds" %
                          (pr["id"], tid, tgt[0]["label"]))
        node_lines.append("")
        node_lines.append("| node | " + " | ".join("perf (plain)" if c == "perf" else MODES[c][0] for c in cfgs) + " |")
        node_lines.append("|---|" + "---:|" * len(cfgs))
        for n in nodes:
            cells = []
            for c in cfgs:
                b, w = med_nodes[(c, "base")].get(n["id"], 0.0), med_nodes[(c, "work")].get(n["id"], 0.0)
                cells.append("%s → %s (%+.0f)" % (fmt(b, 0), fmt(w, 0), w - b))
            node_lines.append("| %s%d %s | %s |" % ("+ " if n["id"] in sub else "", n["id"], n["label"], " | ".join(cells)))
        node_lines.append("")
        for cfg in ["perf"] + modes:
            j = judge(cfg, ("A", "B"))
            if j is None:
                continue
            ja, jb = judge(cfg, ("A",)), judge(cfg, ("B",))
            name = "perf (plain)" if cfg == "perf" else MODES[cfg][0]
            out.append("| %s | %d %s | %s | %s | %s | %+.1f %% | %.1f %% | %s |" % (
                pr["id"], tid, tgt[0]["label"], name, fmt(j[0], 0), fmt(j[1], 0), j[2], j[3],
                " / ".join("%+.1f" % x[2] if x else "-" for x in (ja, jb))))
    return out + node_lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("out")
    r.add_argument("--psql", required=True)
    r.add_argument("--pm", type=int, required=True)
    r.add_argument("--rounds", type=int, default=6)
    r.add_argument("--shapes", default="")
    r.add_argument("--modes", default="stock on off profile")
    r.add_argument("--reps", type=int, default=2)
    r.add_argument("--load", default="", help="bench/shares_explain.so, built (18+)")
    r.add_argument("--freq", type=int, default=4000)
    r.add_argument("--stack", type=int, default=16384)
    c = sub.add_parser("collapse")
    c.add_argument("out")
    c.add_argument("--keep", action="store_true")
    p = sub.add_parser("report")
    p.add_argument("out")
    a = ap.parse_args()
    {"run": cmd_run, "collapse": cmd_collapse, "report": cmd_report}[a.cmd](a)


if __name__ == "__main__":
    main()
