#!/usr/bin/env python3
"""Offline tests of bench/shares.py's reference: how a perf sample's call
chain is reduced to plan node types and matched to one node of the plan
(or to a group of nodes the stack cannot tell apart).  perf's picture of
the plain query is what profiled and exact timing are judged against, so
a sample given to the wrong node would move that judgement.  The chains
are the shapes of PostgreSQL 18's -O2 build (ExecutePlan inlined into
standard_ExecutorRun, ExecSeqScan tail-calling SeqNext).  Prints TAP,
ending in "N passed, N failed"."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import shares as S  # noqa: E402

passed = failed = 0


def ok(cond, name):
    global passed, failed
    if cond:
        passed += 1
        print("ok %d - %s" % (passed + failed, name))
    else:
        failed += 1
        print("not ok %d - %s" % (passed + failed, name))


ROOT = ["PostgresMain", "exec_simple_query", "PortalRun", "PortalRunSelect",
        "ft_ExecutorRun", "standard_ExecutorRun"]


def land(plan, outer, marked=True):
    """The node ids a sample with these frames (outermost first, below
    standard_ExecutorRun) matches, or the reason it matches none."""
    nodes = S.plan_nodes(plan)
    chains = S.chains(nodes)
    worker, rooted, path = S.reduce_chain(list(reversed(ROOT + outer)))
    ids, why = S.match_ids(path, worker, rooted, nodes, chains, marked)
    return (sorted(ids) if ids else why), path


def node(t, rel=None, plans=(), **kw):
    d = {"Node Type": t}
    if rel:
        d["Parent Relationship"] = rel
    if plans:
        d["Plans"] = list(plans)
    d.update(kw)
    return d


# count(*): Aggregate over a Seq Scan whose entry function tail-called SeqNext
count = node("Aggregate", plans=[node("Seq Scan", "Outer", **{"Relation Name": "t"})])
got, _ = land(count, ["ExecAgg", "fetch_input_tuple", "SeqNext", "heap_getnextslot"])
ok(got == [1], "a sample in SeqNext below ExecAgg lands on the Seq Scan")
got, _ = land(count, ["ExecAgg", "advance_aggregates", "ExecInterpExpr"])
ok(got == [0], "a sample in the Aggregate's own expressions lands on the Aggregate")
got, _ = land(count, [])
ok(got == "outside", "a sample outside every node is outside")

# a TPC-H Q15 plan: the CTE's Aggregate is read through the CTE Scan below
# the Nested Loop, whose filter also runs InitPlan 2's Aggregate
q15 = node("Sort", plans=[
    node("Aggregate", "InitPlan", [node("Seq Scan", "Outer", **{"Relation Name": "lineitem"})],
         Strategy="Hashed", **{"Subplan Name": "CTE revenue0"}),
    node("Aggregate", "InitPlan", [node("CTE Scan", "Outer", **{"CTE Name": "revenue0", "Alias": "r1"})],
         Strategy="Plain", **{"Subplan Name": "InitPlan 2"}),
    node("Nested Loop", "Outer", [
        node("CTE Scan", "Outer", **{"CTE Name": "revenue0", "Alias": "r0",
                                     "Filter": "(r0.total_revenue = (InitPlan 2).col1)"}),
        node("Index Scan", "Inner", **{"Relation Name": "supplier", "Index Name": "supplier_pkey"})])])
got, path = land(q15, ["ExecSort", "ExecNestLoop", "ExecScan", "CteScanNext", "ExecAgg",
                       "lookup_hash_entries"])
ok(got == [1], "Q15: the CTE's Aggregate, read through the CTE Scan, lands on it (%s)" % ">".join(path))
got, path = land(q15, ["ExecSort", "ExecNestLoop", "ExecScan", "ExecInterpExpr", "ExecSetParamPlan",
                       "ExecAgg", "ExecInterpExpr"])
ok(got == [3], "Q15: InitPlan 2's Aggregate, run from the scan's filter, lands on it (%s)" % ">".join(path))
ok(path[-1] == S.SUB_MARK + "Aggregate", "a node entered through ExecSetParamPlan is marked")
got, _ = land(q15, ["ExecSort", "ExecNestLoop", "ExecScan", "CteScanNext", "ExecAgg",
                    "lookup_hash_entries"], marked=False)
ok(got == [1, 3], "Q15 without subplan marks (stacks collapsed before them): both Aggregates, as before")
got, _ = land(q15, ["ExecSort", "ExecNestLoop", "ExecScan", "CteScanNext", "ExecAgg", "SeqNext"])
ok(got == [2], "Q15: the CTE's Seq Scan lands on it")

# a correlated SubPlan in a scan's filter: the SubPlan's scan is another node
sub = node("Seq Scan", plans=[node("Aggregate", "SubPlan", [node("Seq Scan", "Outer", **{"Relation Name": "i"})],
                                   **{"Subplan Name": "SubPlan 1"})],
           **{"Relation Name": "o", "Filter": "(x > (SubPlan 1))"})
got, path = land(sub, ["ExecSeqScanWithQual", "ExecInterpExpr", "ExecSubPlan", "ExecScanSubPlan", "ExecAgg",
                       "fetch_input_tuple", "SeqNext"])
ok(got == [2], "a SubPlan's Seq Scan below a Seq Scan's filter is the SubPlan's (%s)" % ">".join(path))
got, _ = land(sub, ["ExecSeqScanWithQual", "heap_getnextslot"])
ok(got == [0], "the outer scan's own work is the outer scan's")

# two Bitmap Index Scans below one BitmapAnd: the stack cannot tell them apart
bmp = node("Bitmap Heap Scan", plans=[node("BitmapAnd", "Outer", [
    node("Bitmap Index Scan", "Member", **{"Index Name": "a"}),
    node("Bitmap Index Scan", "Member", **{"Index Name": "b"})])], **{"Relation Name": "l"})
got, _ = land(bmp, ["ExecScan", "BitmapHeapNext", "MultiExecBitmapAnd", "MultiExecBitmapIndexScan",
                    "btgetbitmap"])
ok(got == [2, 3], "siblings under a BitmapAnd: a sample matches both")
nodes = S.plan_nodes(bmp)
grp = S.merge_groups(nodes, [{2, 3}])
ok(grp == {0: 0, 1: 1, 2: 2, 3: 2}, "merge_groups makes the two one group, named by the smaller id")
ok(S.group_sum({0: 1.0, 2: 2.0, 3: 3.0}, grp) == {0: 1.0, 2: 5.0}, "group_sum adds a group's members")
grp = S.merge_groups([{"id": i} for i in range(5)], [{1, 2}, {2, 4}])
ok(grp == {0: 0, 1: 1, 2: 1, 3: 3, 4: 1}, "sets sharing a node are one group")

# the distance
ok(abs(S.tv({0: 60.0, 1: 40.0}, {0: 50.0, 1: 50.0}) - 10.0) < 1e-9, "total variation of two pictures, in points")

print("%d passed, %d failed" % (passed, failed))
