/*-------------------------------------------------------------------------
 *
 * explain_option.c
 *	  EXPLAIN (ANALYZE, CLOCK_SOURCE): say which clock timed the plan's
 *	  nodes (PostgreSQL 18 and later).
 *
 * With CLOCK_SOURCE, EXPLAIN ANALYZE prints what timed THIS plan, for
 * instance "Timing Source: tsc (2596138 kHz, cpuid_15h)", from the note
 * node_timing.c keeps until ExecutorEnd (the statement may have changed
 * the setting); under profiled timing a "Node Timing" line, and each
 * sampled node's error bar.  Before 18, ft_register_explain_option does
 * nothing.
 *
 * src/explain_option.c
 *
 *-------------------------------------------------------------------------
 */
#include "compat.h"

#include "explain_option.h"
#include "node_timing.h"

#if FT_HAVE_EXPLAIN_EXTENSIONS

#include <math.h>

#include "commands/defrem.h"
#include "commands/explain.h"
#include "commands/explain_format.h"
#include "commands/explain_state.h"
#include "executor/instrument.h"
#include "nodes/execnodes.h"

/* the options of one EXPLAIN, attached to its ExplainState */
typedef struct FtExplainOptions
{
	bool		clock_source;
} FtExplainOptions;

static int	ft_explain_extension_id = -1;

static explain_validate_options_hook_type prev_validate_options = NULL;
static explain_per_plan_hook_type prev_per_plan = NULL;
static explain_per_node_hook_type prev_per_node = NULL;

/* The fasttime options of an EXPLAIN, created when one is named. */
static FtExplainOptions *
ft_explain_options(ExplainState *es, bool create)
{
	FtExplainOptions *opts;

	opts = GetExplainExtensionState(es, ft_explain_extension_id);
	if (opts == NULL && create)
	{
		opts = palloc0(sizeof(FtExplainOptions));
		SetExplainExtensionState(es, ft_explain_extension_id, opts);
	}
	return opts;
}

/* EXPLAIN (CLOCK_SOURCE [boolean]): parse the option. */
static void
ft_clock_source_handler(ExplainState *es, DefElem *opt, ParseState *pstate)
{
	ft_explain_options(es, true)->clock_source = defGetBoolean(opt);
}

/* Without ANALYZE no clock times anything: an error, as TIMING is. */
static void
ft_validate_options(ExplainState *es, List *options, ParseState *pstate)
{
	FtExplainOptions *opts;

	if (prev_validate_options)
		prev_validate_options(es, options, pstate);

	opts = ft_explain_options(es, false);
	if (opts != NULL && opts->clock_source && !es->analyze)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("EXPLAIN option %s requires ANALYZE", "CLOCK_SOURCE"),
				 errdetail("Plan nodes are only timed when the statement is run.")));
}

/* Why the nodes of a query were not timed with the TSC, for the DBA. */
static const char *
ft_not_tsc_reason(const FtQueryClock *pc)
{
	const FtDecision *d;

	if (pc->setting == FT_SETTING_CLOCK_GETTIME && pc->prof != NULL)
		return "fasttime.clock_source is clock_gettime";
	if (pc->setting == FT_SETTING_CLOCK_GETTIME)
		return "fasttime.clock_source is clock_gettime: stock PostgreSQL timing";
	d = ft_get_decision(pc->setting);
	if (d->choice != FT_CHOICE_TSC)
		return d->reason;
	if (ft_clock_fallback_reason() != NULL)
		return ft_clock_fallback_reason();
	return "fasttime could not switch this plan's nodes to the TSC; they were timed by stock PostgreSQL";
}

/* Why a query that asked for profiled timing was timed exactly. */
static const char *
ft_prof_declined_reason(const FtQueryClock *pc)
{
	if (pc->prof_declined == FT_PROF_DECLINED_NO_TIMEOUT)
		return "profiled timing is not available in this session: no timeout slot is free for its tick";
	return psprintf("the plan's estimated %.0f node calls are too few for profiled timing to pay",
					pc->est_calls);
}

/* Per-plan hook: under CLOCK_SOURCE, print the clock that timed the plan. */
static void
ft_explain_per_plan(PlannedStmt *plannedstmt, IntoClause *into,
					ExplainState *es, const char *queryString,
					ParamListInfo params, QueryEnvironment *queryEnv)
{
	FtExplainOptions *opts;
	const FtQueryClock *pc;
	const char *source;
	const char *reason = NULL;

	if (prev_per_plan)
		prev_per_plan(plannedstmt, into, es, queryString, params, queryEnv);

	opts = ft_explain_options(es, false);
	if (opts == NULL || !opts->clock_source || !es->analyze)
		return;

	pc = ft_find_query_clock(plannedstmt);

	if (pc == NULL)
	{
		source = "unknown";
		reason = "fasttime did not see this statement start";
	}
	else if (pc->tsc)
		source = "tsc";
	else if (!pc->node_timing)
	{
		source = "none";
		reason = "TIMING is off, so no plan node was timed";
	}
	else
	{
		source = "clock_gettime";
		reason = ft_not_tsc_reason(pc);
	}

	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		StringInfoData buf;

		initStringInfo(&buf);
		if (pc != NULL && pc->tsc)
			appendStringInfo(&buf, "tsc (%.0f kHz, %s",
							 pc->tsc_hz / 1000.0,
							 ft_freq_origin_name(pc->tsc_hz_origin));
		else
			appendStringInfo(&buf, "%s (%s", source, reason);
		if (pc != NULL && pc->tsc && ft_timer_reads(pc->timer) == FT_READS_BOTH)
			appendStringInfoString(&buf, "; ordered reads");
		if (pc != NULL && pc->disagreed)
			appendStringInfo(&buf, "; the TSC disagreed with clock_gettime: %.3f ms against %.3f ms",
							 (double) pc->tsc_ns / 1e6, (double) pc->wall_ns / 1e6);
		appendStringInfoChar(&buf, ')');
		ExplainPropertyText("Timing Source", buf.data, es);
		if (pc != NULL && pc->prof != NULL && pc->node_timing)
		{
			const FtProfQuery *q = pc->prof;

			resetStringInfo(&buf);
			if (q->switched)
			{
				appendStringInfoString(&buf, "profiled (");
				ft_prof_describe(q, &buf);
				appendStringInfoChar(&buf, ')');
			}
			else
				appendStringInfo(&buf, "exact (profiled timing takes over after %d ms)",
								 q->after_ms);
			ExplainPropertyText("Node Timing", buf.data, es);
		}
		else if (pc != NULL && pc->node_timing &&
				 pc->prof_declined != FT_PROF_NOT_DECLINED)
		{
			resetStringInfo(&buf);
			appendStringInfo(&buf, "exact (%s)", ft_prof_declined_reason(pc));
			ExplainPropertyText("Node Timing", buf.data, es);
		}
	}
	else
	{
		ExplainPropertyText("Timing Source", source, es);
		if (pc != NULL && pc->tsc)
		{
			ExplainPropertyInteger("TSC Frequency", "kHz",
								   (int64) rint(pc->tsc_hz / 1000.0), es);
			ExplainPropertyText("TSC Frequency Origin",
								ft_freq_origin_name(pc->tsc_hz_origin), es);
		}
		else
			ExplainPropertyText("Timing Source Reason", reason, es);
		if (pc != NULL && pc->tsc)
			ExplainPropertyText("TSC Reads Ordered",
								ft_read_order_name(ft_timer_reads(pc->timer)), es);
		if (pc != NULL && pc->prof != NULL && pc->node_timing)
		{
			const FtProfQuery *q = pc->prof;

			ExplainPropertyText("Node Timing", q->switched ? "profile" : "exact", es);
			ExplainPropertyFloat("Exact Prefix", "ms",
								 q->switched ? q->exact_ms : (double) q->after_ms, 1, es);
			ExplainPropertyInteger("Profile Interval", "ms", q->interval_ms, es);
			ExplainPropertyInteger("Profile Longest Interval", "ms",
								   Max(q->longest_ms, q->interval_ms), es);
			ExplainPropertyInteger("Profile Ticks", NULL, (int64) q->ticks, es);
			if (q->switched)
				ExplainPropertyText("Profile Tick Source",
									!q->worker_ticks ? "signal" :
									q->worker_fallback ? "worker, then signal" : "worker", es);
			if (q->switched)
				ExplainPropertyFloat("Expected Error At 10 Percent", "%",
									 100.0 * ft_prof_expected_error(ft_prof_effective_ticks(q), 0.1), 1, es);
		}
		else if (pc != NULL && pc->node_timing &&
				 pc->prof_declined != FT_PROF_NOT_DECLINED)
		{
			ExplainPropertyText("Node Timing", "exact", es);
			ExplainPropertyText("Node Timing Reason", ft_prof_declined_reason(pc), es);
		}
		if (pc != NULL && pc->disagreed)
		{
			ExplainPropertyFloat("TSC Elapsed", "ms",
								 (double) pc->tsc_ns / 1e6, 3, es);
			ExplainPropertyFloat("Clock Gettime Elapsed", "ms",
								 (double) pc->wall_ns / 1e6, 3, es);
		}
	}
}

/*
 * Per-node hook, under CLOCK_SOURCE only (tools parse EXPLAIN's output):
 * the error bar of a node profiled timing's ticks sampled, one standard
 * deviation per loop like its time ("Profile: 412 ticks, +-0.914 ms").
 * None for a node timed exactly, or with parallel workers' time (their
 * ticks stay in the workers).
 */
static void
ft_explain_per_node(PlanState *planstate, List *ancestors,
					const char *relationship, const char *plan_name,
					ExplainState *es)
{
	FtExplainOptions *opts;
	const FtQueryClock *pc;
	FtNodeInstr *instr = planstate->instrument;
	uint64		ticks;
	double		error_ms;

	if (prev_per_node)
		prev_per_node(planstate, ancestors, relationship, plan_name, es);

	opts = ft_explain_options(es, false);
	if (opts == NULL || !opts->clock_source || !es->analyze || !es->timing)
		return;
	if (instr == NULL || instr->nloops <= 0 || planstate->plan == NULL ||
		planstate->state == NULL)
		return;
	if (planstate->worker_instrument != NULL &&
		planstate->worker_instrument->num_workers > 0)
		return;
	pc = ft_find_query_clock(planstate->state->es_plannedstmt);
	if (pc == NULL || pc->prof == NULL || !pc->node_timing || !pc->prof->switched)
		return;
	if (!ft_prof_node_error(pc->prof, planstate->plan->plan_node_id,
							&ticks, &error_ms))
		return;
	error_ms /= instr->nloops;

	if (es->format == EXPLAIN_FORMAT_TEXT)
		ExplainPropertyText("Profile",
							psprintf("%llu %s, +-%.3f ms",
									 (unsigned long long) ticks,
									 ticks == 1 ? "tick" : "ticks", error_ms),
							es);
	else
	{
		ExplainPropertyUInteger("Profile Ticks", NULL, ticks, es);
		ExplainPropertyFloat("Profile Error", "ms", error_ms, 3, es);
	}
}

/* Register EXPLAIN's CLOCK_SOURCE option and the hooks behind it. */
void
ft_register_explain_option(void)
{
	ft_explain_extension_id = GetExplainExtensionId("fasttime");
	FT_REGISTER_EXPLAIN_OPTION("clock_source", ft_clock_source_handler);

	prev_validate_options = explain_validate_options_hook;
	explain_validate_options_hook = ft_validate_options;
	prev_per_plan = explain_per_plan_hook;
	explain_per_plan_hook = ft_explain_per_plan;
	prev_per_node = explain_per_node_hook;
	explain_per_node_hook = ft_explain_per_node;
}

#else							/* !FT_HAVE_EXPLAIN_EXTENSIONS */

/* Before PostgreSQL 18 there is no way to add an EXPLAIN option. */
void
ft_register_explain_option(void)
{
}

#endif							/* FT_HAVE_EXPLAIN_EXTENSIONS */
