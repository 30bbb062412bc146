/*-------------------------------------------------------------------------
 *
 * prof_plan.c
 *	  Profiled node timing, the plan's side: which nodes stay exact, the
 *	  frames of a profiled query, the estimate of a plan's node calls, and
 *	  the error of the credited times, read after the run.
 *
 * Nothing here runs while a query runs (that is profiler.c's); the
 * functions are declared in profiler.h.
 *
 * src/prof_plan.c
 *
 *-------------------------------------------------------------------------
 */
#include "compat.h"

#include <math.h>

#include "nodes/execnodes.h"
#include "nodes/nodeFuncs.h"
#include "lib/stringinfo.h"
#include "utils/float.h"
#include "utils/memutils.h"

#include "clock_state.h"
#include "profiler.h"
#include "usage.h"

typedef struct FtProfWalk
{
	FtProfQuery *q;
	bool		(*on_wrappers) (PlanState *);	/* is a node on fasttime's? */
	MemoryContext cxt;
} FtProfWalk;

/* what ft_child_timed_by_core finds of a node's direct children */
typedef struct FtCoreChildren
{
	bool		multiexec;		/* one runs through MultiExecProcNode */
	bool		async;			/* one is an async node */
	FtProfWalk *w;
} FtCoreChildren;

/* Is this a node the executor runs through MultiExecProcNode? */
static bool
ft_is_multiexec(PlanState *ps)
{
	return IsA(ps, HashState) || IsA(ps, BitmapIndexScanState) ||
		IsA(ps, BitmapAndState) || IsA(ps, BitmapOrState);
}

/* Can the query list a frame for this node (instrumented, id in range)? */
static bool
ft_prof_framed(FtProfWalk *w, PlanState *ps)
{
	return ps != NULL && ps->plan != NULL && ps->instrument != NULL &&
		ps->plan->plan_node_id >= 0 && ps->plan->plan_node_id < w->q->nframes;
}

/* List a node's frame in its query, exact (for good if permanent). */
static void
ft_prof_mark(FtProfWalk *w, PlanState *ps, bool permanent)
{
	FtProfFrame *f;

	if (!ft_prof_framed(w, ps))
		return;
	/* the frame lives in the node's own (usage.h), zeroed when made */
	f = &ft_usage_frame_of(ps)->prof;
	f->instr = ps->instrument;
	f->units = &w->q->units;
	f->mode = FT_FRAME_EXACT;
	w->q->frames[ps->plan->plan_node_id] = f;
	if (permanent || ps->instrument->async_mode)
		f->permanent = true;
}

/*
 * Is this a Hash whose build the ticks time?  One that builds alone
 * (MultiExecPrivateHash): its child's calls bracket the build, from the
 * first to the one returning no row (ft_prof_build_link).  Not a Parallel
 * Hash, whose barrier waits around those calls are the Hash's time in
 * stock and bracketed by no child call: core times it.  Nor one whose
 * child another extension's wrapper runs: no call of ours would open the
 * build, and the Hash would read nothing.
 */
static bool
ft_prof_hash_own_build(FtProfWalk *w, PlanState *ps)
{
	return IsA(ps, HashState) && ft_prof_framed(w, ps) &&
		!ps->plan->parallel_aware && ft_prof_framed(w, outerPlanState(ps)) &&
		w->on_wrappers(outerPlanState(ps));
}

/*
 * The frame a Hash's build is timed in.  Not the Hash's own: core runs
 * stock's start and stop on that one around the build, usage included
 * (usage.h), so it must never be credited usage on the chain; this one
 * counts none and credits the Hash's instrumentation.  Core's clock reads
 * around the build are turned off (need_timer), since the frame times it,
 * so the Hash Join's calls that run the build can be profiled.
 */
static void
ft_prof_build_frame(FtProfWalk *w, PlanState *hash)
{
	FtUsageFrame *bf = MemoryContextAllocZero(w->cxt, sizeof(FtUsageFrame));

	bf->owner = ft_usage_frame_of(hash)->owner;
	bf->prof.instr = hash->instrument;
	bf->prof.units = &w->q->units;
	bf->prof.mode = FT_FRAME_EXACT;
	w->q->frames[hash->plan->plan_node_id] = &bf->prof;
	FT_INSTR_BASE(hash->instrument)->need_timer = false;
	ft_usage_frame_of(outerPlanState(hash))->prof.build = bf;
}

/* planstate_tree_walker callback: a direct child the executor times. */
static bool
ft_child_timed_by_core(PlanState *ps, void *context)
{
	FtCoreChildren *cc = (FtCoreChildren *) context;

	if (ps->instrument != NULL)
	{
		if (ft_is_multiexec(ps) && !ft_prof_hash_own_build(cc->w, ps))
			cc->multiexec = true;
		if (ps->instrument->async_mode)
			cc->async = true;
	}
	return false;
}

/*
 * planstate_tree_walker callback of ft_prof_query_create.  A node with a
 * child the executor times itself must contain that child's time: its
 * calls running it are exact (ft_prof_core_will_run), and a node with
 * async children, which may run in any call, is exact for good.
 */
static bool
ft_prof_walker(PlanState *ps, void *context)
{
	FtProfWalk *w = (FtProfWalk *) context;
	FtCoreChildren cc = {false, false, w};

	ft_prof_mark(w, ps, false);
	(void) planstate_tree_walker(ps, ft_child_timed_by_core, &cc);
	if ((cc.multiexec || cc.async) && ft_prof_framed(w, ps))
	{
		FtProfFrame *f = w->q->frames[ps->plan->plan_node_id];

		f->core_child = true;
		if (cc.async)
			f->permanent = true;
	}
	if (ft_prof_hash_own_build(w, ps))
		ft_prof_build_frame(w, ps);
	else if (ft_is_multiexec(ps))
	{
		/* the children of any other stay exact for good */
		ft_prof_mark(w, outerPlanState(ps), true);
		ft_prof_mark(w, innerPlanState(ps), true);
	}
	return planstate_tree_walker(ps, ft_prof_walker, context);
}

/*
 * A profiled query's frames, by plan_node_id, exact to begin with.  Its
 * nodes are on their wrappers already; on_wrappers tells those on
 * fasttime's from those another extension wraps.
 */
FtProfQuery *
ft_prof_query_create(PlanState *planstate, List *subplanstates, int nframes,
					 bool tsc, bool (*on_wrappers) (PlanState *),
					 MemoryContext cxt)
{
	FtProfQuery *q = MemoryContextAllocZero(cxt, sizeof(FtProfQuery));
	FtProfWalk	w;
	ListCell   *lc;

	q->nframes = Max(nframes, 0);
	q->frames = MemoryContextAllocZero(cxt, sizeof(FtProfFrame *) * Max(nframes, 1));
	q->tsc = tsc;
	q->units = ft_instr_units;	/* ft_prof_enter sets it for each run */
	q->interval_ms = ft_profile_interval_ms;
	q->after_ms = ft_profile_after_ms;
	w.q = q;
	w.on_wrappers = on_wrappers;
	w.cxt = cxt;
	if (planstate != NULL)
		(void) ft_prof_walker(planstate, &w);
	foreach(lc, subplanstates)
	{
		if (lfirst(lc) != NULL)
			(void) ft_prof_walker((PlanState *) lfirst(lc), &w);
	}
	return q;
}

/* walker state of ft_prof_estimated_calls */
typedef struct FtProfEstimate
{
	double		loops;			/* times the node being visited is run */
	PlanState  *parent;
	double		calls;			/* the sum so far */
	double		limit;			/* stop once the sum reaches this */
} FtProfEstimate;

/* Is ps one of the plans of a SubPlanState list? */
static bool
ft_prof_in_subplans(List *subplans, PlanState *ps)
{
	ListCell   *lc;

	foreach(lc, subplans)
	{
		if (((SubPlanState *) lfirst(lc))->planstate == ps)
			return true;
	}
	return false;
}

/*
 * planstate_tree_walker callback of ft_prof_estimated_calls: a node's
 * calls are its estimated rows plus the call that ends each run, times
 * the runs: the inner side of a nested loop runs once per outer row, a
 * SubPlan once per row of the node that holds it, an InitPlan once.  A
 * recursive CTE's steps are unknown to the planner, which puts its rows
 * at ten times its non-recursive term's: its plan is taken to make any
 * number of calls, so that it is never declined as small (a CTE of 200k
 * steps, estimated at 31 rows, was timed exactly, 8.6 points from perf's
 * picture of the plain query on kind (b)).
 */
static bool
ft_prof_estimate_walker(PlanState *ps, void *context)
{
	FtProfEstimate *e = (FtProfEstimate *) context;
	FtProfEstimate saved = *e;
	double		loops = e->loops;
	PlanState  *parent = e->parent;

	if (ps == NULL || ps->plan == NULL)
		return false;
	if (IsA(ps, RecursiveUnionState))
	{
		/* its steps are the planner's guess (ten times the first): any */
		e->calls = get_float8_infinity();
		return true;
	}
	if (parent != NULL)
	{
		if (ft_prof_in_subplans(parent->initPlan, ps))
			loops = 1.0;
		else if (ft_prof_in_subplans(parent->subPlan, ps))
			loops *= Max(parent->plan->plan_rows, 1.0);
		else if (IsA(parent, NestLoopState) && ps == innerPlanState(parent) &&
				 outerPlanState(parent) != NULL)
			loops *= Max(outerPlanState(parent)->plan->plan_rows, 1.0);
	}
	e->calls += loops * (Max(ps->plan->plan_rows, 0.0) + 1.0);
	if (e->calls >= e->limit)
		return true;			/* enough: stop the walk */
	/* a leaf (the one node of most OLTP statements): nothing to walk */
	if (ps->lefttree == NULL && ps->righttree == NULL &&
		ps->initPlan == NIL && ps->subPlan == NIL &&
		!IsA(ps, AppendState) && !IsA(ps, MergeAppendState) &&
		!IsA(ps, BitmapAndState) && !IsA(ps, BitmapOrState) &&
		!IsA(ps, SubqueryScanState) && !IsA(ps, CustomScanState))
		return false;
	e->loops = loops;
	e->parent = ps;
	if (planstate_tree_walker(ps, ft_prof_estimate_walker, e))
		return true;
	e->loops = saved.loops;
	e->parent = saved.parent;
	return false;
}

/*
 * The node calls the planner's estimates predict for a plan and its
 * SubPlans and InitPlans; the walk stops once the sum reaches limit, so
 * asking whether a large plan is small costs a node or two.
 */
double
ft_prof_estimated_calls(PlanState *planstate, double limit)
{
	FtProfEstimate e = {1.0, NULL, 0.0, limit};

	if (planstate != NULL)
		(void) ft_prof_estimate_walker(planstate, &e);
	return e.calls;
}

/*
 * The statistical error of profiled node times.  After the switch each
 * tick credits a time D_i (its interval, plus time pending from ticks in
 * exact calls) to every node on the chain (ft_prof_credit_sample).  Let
 * X_ij be 1 when tick i finds node j there.  When j's calls are short
 * against the interval and the ticks unrelated to the plan's rhythm, the
 * X_ij are about independent, 1 with probability p_j, j's share of the
 * run, and the sampled part of j's time, T_j = sum_i D_i X_ij, has
 *
 *		Var T_j = p_j (1 - p_j) sum_i D_i^2
 *
 * Q_j = sum_i D_i^2 X_ij has expectation p_j Q, Q = sum_i D_i^2 over the
 * query's samples, so p_j ~ Q_j / Q and Var T_j ~ Q_j (1 - Q_j / Q).  The
 * rest of a node's time (exact prefix, exact calls) was measured and adds
 * no error; where calls are long against the interval, consecutive ticks
 * find the same call and this overstates the error.  For a share p of a
 * run of sampled time S = sum D_i, the relative error sqrt(Var) / (p S)
 * is sqrt((1 - p) / (p N)) with N = S^2 / Q: the binomial one after N
 * ticks of one interval.
 */

/*
 * The expected relative error (one standard deviation) of a node holding
 * a given share of a run, after so many ticks of one interval (above).  A
 * run that switched and ended before a tick sampled it (or that waited
 * from its switch on) is worth no more than one tick: never an error of
 * zero for times no tick checked.
 */
double
ft_prof_expected_error(double ticks, double share)
{
	if (share <= 0.0 || share >= 1.0)
		return 0.0;
	return sqrt((1.0 - share) / (share * Max(ticks, 1.0)));
}

/*
 * The equal ticks a query's samples are worth, (sum D_i)^2 / sum D_i^2;
 * without samples, from the ticks' nominal intervals.
 */
double
ft_prof_effective_ticks(const FtProfQuery *q)
{
	if (q->samples > 0 && q->sample_sq_ms > 0.0)
		return q->sample_ms * q->sample_ms / q->sample_sq_ms;
	if (q->ticks == 0 || q->tick_ms_sq == 0)
		return 0.0;
	return (double) q->tick_ms * (double) q->tick_ms / (double) q->tick_ms_sq;
}

/*
 * The ticks that sampled a node, and the standard error of its time in ms
 * (above); false if none did, which EXPLAIN shows as no line rather than
 * an error of zero.  Read after the run, when the counters are still.
 */
bool
ft_prof_node_error(const FtProfQuery *q, int plan_node_id, uint64 *ticks,
				   double *error_ms)
{
	const FtProfFrame *f;
	double		var;

	if (q == NULL || plan_node_id < 0 || plan_node_id >= q->nframes)
		return false;
	f = q->frames[plan_node_id];
	if (f == NULL || f->sample_ticks == 0 || q->sample_sq_ms <= 0.0)
		return false;
	var = f->sample_sq_ms * (1.0 - Min(f->sample_sq_ms / q->sample_sq_ms, 1.0));
	*ticks = f->sample_ticks;
	*error_ms = sqrt(Max(var, 0.0));
	return true;
}

/*
 * A profiled query's run in words, after "profiled (": one text for
 * EXPLAIN (CLOCK_SOURCE)'s Node Timing line and the line after a plan
 * auto_explain logs (node_timing.c).
 */
void
ft_prof_describe(const FtProfQuery *q, struct StringInfoData *buf)
{
	appendStringInfo(buf, "exact for the first %.1f ms, then %llu ticks of %d",
					 q->exact_ms, (unsigned long long) q->ticks, q->interval_ms);
	if (q->longest_ms > q->interval_ms)
		appendStringInfo(buf, " to %d", q->longest_ms);
	appendStringInfoString(buf, !q->worker_ticks ? " ms" :
						   q->worker_fallback ? " ms from the tick worker, then timer signals" :
						   " ms from the tick worker");
	appendStringInfo(buf, "; a node holding 10 %% of the time: +-%.1f %%",
					 100.0 * ft_prof_expected_error(ft_prof_effective_ticks(q), 0.1));
}
