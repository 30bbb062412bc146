/*
 * bench/shares_explain.c: a benchmark-only module for bench/shares.sh
 * (never installed, LOADed by absolute path into the benchmark's one
 * session).
 *
 * EXPLAIN prints a node's "Actual Total Time" as the average per loop,
 * rounded to 0.001 ms.  Times loops, that is the node's inclusive time
 * to within 0.0005 ms x loops: a Memoize probed 250,000 times, whose
 * calls take well under a microsecond, shows 0.000 per loop, and an
 * index scan rescanned 20,000 times at ~3 us a call is off by up to
 * 15 %.  Exclusive times, differences of such products, are then noise.
 * This module adds, through explain_per_node_hook, the unrounded figures
 * the instrumentation holds, in the structured formats only:
 *
 *   "Shares Total Time"         instrument->total x 1000 (ms, all loops;
 *                               below a Gather the leader's and its
 *                               workers' together, as EXPLAIN's loops)
 *   "Shares Workers Total Time" the workers' part of it (sum of
 *                               worker_instrument[n].total x 1000)
 *
 * Nothing else changes: the hook runs after the node's own properties and
 * calls any previous hook (fasttime's, if it ever has one).
 *
 * Before 18 there is no per-node EXPLAIN hook.  There an ExecutorEnd hook
 * (which EXPLAIN ANALYZE reaches after printing the plan, with every
 * node's InstrEndLoop done) sends the same figures as one NOTICE,
 *   shares_totals: [[total_ms, workers_ms], ...]
 * one pair per plan node in the order EXPLAIN prints them (initPlans,
 * outer, inner, special children, subPlans: planstate_tree_walker's
 * order), -1 for a node with no loops; bench/shares.py attaches them to
 * the JSON plan.  Only for statements with timed instrumentation.
 */
#include "postgres.h"

#include "commands/explain.h"
#if PG_VERSION_NUM >= 180000
#include "commands/explain_format.h"
#include "commands/explain_state.h"
#endif
#include "executor/executor.h"
#include "executor/instrument.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "nodes/execnodes.h"
#include "nodes/nodeFuncs.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

#if PG_VERSION_NUM >= 180000
static explain_per_node_hook_type prev_per_node = NULL;

static void
shares_per_node(PlanState *planstate, List *ancestors, const char *relationship,
				const char *plan_name, ExplainState *es)
{
	if (prev_per_node)
		prev_per_node(planstate, ancestors, relationship, plan_name, es);

	if (es->analyze && es->timing && es->format != EXPLAIN_FORMAT_TEXT &&
		planstate->instrument && planstate->instrument->nloops > 0)
	{
		ExplainPropertyFloat("Shares Total Time", "ms",
							 1000.0 * planstate->instrument->total, 6, es);
		if (planstate->worker_instrument)
		{
			WorkerInstrumentation *w = planstate->worker_instrument;
			double		sum = 0.0;

			for (int n = 0; n < w->num_workers; n++)
				sum += w->instrument[n].total;
			ExplainPropertyFloat("Shares Workers Total Time", "ms", 1000.0 * sum, 6, es);
		}
	}
}

#else

static ExecutorEnd_hook_type prev_executor_end = NULL;

static bool
shares_walk(PlanState *planstate, void *context)
{
	StringInfo	buf = (StringInfo) context;
	Instrumentation *in = planstate->instrument;
	double		workers = 0.0;

	if (planstate->worker_instrument)
	{
		WorkerInstrumentation *w = planstate->worker_instrument;

		for (int n = 0; n < w->num_workers; n++)
			workers += w->instrument[n].total;
	}
	appendStringInfo(buf, "%s[%.6f,%.6f]", buf->len > 1 ? "," : "",
					 in && in->nloops > 0 ? 1000.0 * in->total : -1.0, 1000.0 * workers);
	return planstate_tree_walker(planstate, shares_walk, context);
}

static void
shares_executor_end(QueryDesc *queryDesc)
{
	if (queryDesc->planstate && queryDesc->planstate->instrument &&
		(queryDesc->instrument_options & INSTRUMENT_TIMER))
	{
		StringInfoData buf;

		initStringInfo(&buf);
		appendStringInfoChar(&buf, '[');
		shares_walk(queryDesc->planstate, &buf);
		appendStringInfoChar(&buf, ']');
		ereport(NOTICE, (errmsg("shares_totals: %s", buf.data)));
		pfree(buf.data);
	}
	if (prev_executor_end)
		prev_executor_end(queryDesc);
	else
		standard_ExecutorEnd(queryDesc);
}
#endif

void
_PG_init(void)
{
#if PG_VERSION_NUM >= 180000
	prev_per_node = explain_per_node_hook;
	explain_per_node_hook = shares_per_node;
#else
	prev_executor_end = ExecutorEnd_hook;
	ExecutorEnd_hook = shares_executor_end;
#endif
}
