/*
 * bench/shares_explain.c: a benchmark-only module for bench/shares.sh
 * (PostgreSQL 18 and later; never installed, LOADed by absolute path into
 * the benchmark's one session).
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
 */
#include "postgres.h"

#include "commands/explain.h"
#include "commands/explain_format.h"
#include "commands/explain_state.h"
#include "executor/instrument.h"
#include "fmgr.h"
#include "nodes/execnodes.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

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

void
_PG_init(void)
{
	prev_per_node = explain_per_node_hook;
	explain_per_node_hook = shares_per_node;
}
