/*-------------------------------------------------------------------------
 *
 * explain_option.c
 *	  EXPLAIN (ANALYZE, CLOCK_SOURCE): say which clock timed the plan's
 *	  nodes (PostgreSQL 18 and later).
 *
 * PostgreSQL 18 lets an extension register its own EXPLAIN options and add
 * output after the plan (see contrib/pg_overexplain).  With CLOCK_SOURCE,
 * EXPLAIN ANALYZE prints one more property, for instance
 *
 *		Timing Source: tsc (2596138 kHz, cpuid_15h)
 *		Timing Source: clock_gettime (fasttime.clock_source is clock_gettime: ...)
 *
 * in text format, and "Timing Source" with "TSC Frequency" and "TSC
 * Frequency Origin", or "Timing Source Reason", in the other formats.
 *
 * What is printed is what timed THIS plan, not what the setting says now:
 * the statement being explained may itself change fasttime.clock_source,
 * and EXPLAIN only prints once it has run.  So an ExecutorStart hook, run
 * around fasttime's own (which is where the nodes get switched to the
 * TSC), notes for each instrumented query whether its nodes were switched,
 * and at what frequency; the per-plan hook looks the note up by the plan,
 * and ExecutorEnd, which EXPLAIN runs after printing, forgets it.
 *
 * On earlier versions this file only provides a no-op
 * ft_register_explain_option().
 *
 * src/explain_option.c
 *
 *-------------------------------------------------------------------------
 */
#include "compat.h"

#include "fasttime.h"

#if FT_HAVE_EXPLAIN_EXTENSIONS

#include <math.h>

#include "access/parallel.h"
#include "access/xact.h"
#include "commands/defrem.h"
#include "commands/explain.h"
#include "commands/explain_format.h"
#include "commands/explain_state.h"

/* the options of one EXPLAIN, attached to its ExplainState */
typedef struct FtExplainOptions
{
	bool		clock_source;
} FtExplainOptions;

/* what timed one instrumented query, noted at ExecutorStart */
typedef struct FtPlanClock
{
	QueryDesc  *queryDesc;
	PlannedStmt *plannedstmt;
	SubTransactionId subid;		/* subtransaction it started in */
	bool		node_timing;	/* per-node timing was asked for */
	bool		tsc;			/* its nodes were switched to the TSC */
	FtClockSetting setting;		/* fasttime.clock_source at the time */
	double		tsc_hz;			/* frequency used, when tsc */
	FtFreqOrigin tsc_hz_origin; /* where that frequency came from */
} FtPlanClock;

/*
 * Notes for the instrumented queries under way in this backend, innermost
 * last.  Nesting deeper than this leaves the inner queries unnoted, and
 * their EXPLAIN says so.
 */
#define FT_MAX_PLAN_CLOCKS 32
static FtPlanClock plan_clocks[FT_MAX_PLAN_CLOCKS];
static int	n_plan_clocks = 0;

static int	ft_explain_extension_id = -1;

static ExecutorStart_hook_type prev_ExecutorStart = NULL;
static ExecutorEnd_hook_type prev_ExecutorEnd = NULL;
static explain_validate_options_hook_type prev_validate_options = NULL;
static explain_per_plan_hook_type prev_per_plan = NULL;

/*
 * The fasttime options of an EXPLAIN, created on first use so that an
 * EXPLAIN that names none of them carries nothing.
 */
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

/*
 * Without ANALYZE nothing runs and no clock times anything, so asking
 * which clock did is an error, as core makes TIMING, WAL and SERIALIZE
 * without ANALYZE.
 */
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

/*
 * ExecutorStart hook: note which clock times this query's nodes.  We run
 * around fasttime's own ExecutorStart hook, which switches the nodes to
 * the TSC and counts each query it switches; the count moving is how we
 * know it did.  Only queries that ask for instrumentation are noted
 * (EXPLAIN ANALYZE, auto_explain), and fasttime's facts are only consulted
 * when per-node timing is wanted, as fasttime's hook does.
 */
static void
ft_explain_ExecutorStart(QueryDesc *queryDesc, int eflags)
{
	int64		timed_before = ft_node_timing_stats.queries;
	FtClockSetting setting = (FtClockSetting) ft_clock_setting;

	if (prev_ExecutorStart)
		prev_ExecutorStart(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);

	/*
	 * Look at the instrumentation options only now: a hook inside ours
	 * (auto_explain, when loaded first) may have set them.
	 */
	if (queryDesc->instrument_options != 0 &&
		(eflags & EXEC_FLAG_EXPLAIN_ONLY) == 0 &&
		!IsParallelWorker() &&
		n_plan_clocks < FT_MAX_PLAN_CLOCKS)
	{
		FtPlanClock *pc = &plan_clocks[n_plan_clocks++];

		memset(pc, 0, sizeof(*pc));
		pc->queryDesc = queryDesc;
		pc->plannedstmt = queryDesc->plannedstmt;
		pc->subid = GetCurrentSubTransactionId();
		pc->node_timing = (queryDesc->instrument_options & INSTRUMENT_TIMER) != 0;
		pc->setting = setting;
		pc->tsc = pc->node_timing &&
			ft_node_timing_stats.queries != timed_before &&
			ft_effective_choice() == FT_CHOICE_TSC;
		if (pc->tsc)
		{
			pc->tsc_hz = ft_conv.hz;
			pc->tsc_hz_origin = ft_get_facts()->tsc_hz_origin;
		}
	}
}

/*
 * ExecutorEnd hook: forget the query's note, and those of any query
 * above it that failed without reaching its own ExecutorEnd.
 */
static void
ft_explain_ExecutorEnd(QueryDesc *queryDesc)
{
	int			i;

	for (i = n_plan_clocks - 1; i >= 0; i--)
	{
		if (plan_clocks[i].queryDesc == queryDesc)
		{
			n_plan_clocks = i;
			break;
		}
	}

	if (prev_ExecutorEnd)
		prev_ExecutorEnd(queryDesc);
	else
		standard_ExecutorEnd(queryDesc);
}

/*
 * Why the nodes of a query were not timed with the TSC, in words for the
 * DBA reading the plan.
 */
static const char *
ft_not_tsc_reason(const FtPlanClock *pc)
{
	const FtDecision *d;

	if (pc->setting == FT_SETTING_CLOCK_GETTIME)
		return "fasttime.clock_source is clock_gettime: stock PostgreSQL timing";
	d = ft_get_decision(pc->setting);
	if (d->choice != FT_CHOICE_TSC)
		return d->reason;
	return "fasttime could not switch this plan's nodes to the TSC; they were timed by stock PostgreSQL";
}

/*
 * Per-plan hook: print the clock that timed this plan's nodes, when
 * EXPLAIN (ANALYZE, CLOCK_SOURCE) asked for it.
 */
static void
ft_explain_per_plan(PlannedStmt *plannedstmt, IntoClause *into,
					ExplainState *es, const char *queryString,
					ParamListInfo params, QueryEnvironment *queryEnv)
{
	FtExplainOptions *opts;
	const FtPlanClock *pc = NULL;
	const char *source;
	const char *reason = NULL;
	int			i;

	if (prev_per_plan)
		prev_per_plan(plannedstmt, into, es, queryString, params, queryEnv);

	opts = ft_explain_options(es, false);
	if (opts == NULL || !opts->clock_source || !es->analyze)
		return;

	for (i = n_plan_clocks - 1; i >= 0; i--)
	{
		if (plan_clocks[i].plannedstmt == plannedstmt)
		{
			pc = &plan_clocks[i];
			break;
		}
	}

	if (pc == NULL)
	{
		source = "unknown";
		reason = "fasttime did not see this statement start (too deeply nested)";
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
		if (pc != NULL && pc->tsc)
			ExplainPropertyText("Timing Source",
								psprintf("tsc (%.0f kHz, %s)",
										 pc->tsc_hz / 1000.0,
										 ft_freq_origin_name(pc->tsc_hz_origin)),
								es);
		else
			ExplainPropertyText("Timing Source",
								psprintf("%s (%s)", source, reason), es);
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
	}
}

/* Forget every note when the transaction fails. */
static void
ft_explain_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
		n_plan_clocks = 0;
}

/*
 * Forget the notes of queries that a failed subtransaction left behind.
 * Subtransaction ids only grow within a transaction, so every note from
 * the failed one or its children is above those of its parents.
 */
static void
ft_explain_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
							SubTransactionId parentSubid, void *arg)
{
	if (event != SUBXACT_EVENT_ABORT_SUB)
		return;
	while (n_plan_clocks > 0 && plan_clocks[n_plan_clocks - 1].subid >= mySubid)
		n_plan_clocks--;
}

/*
 * Register EXPLAIN's CLOCK_SOURCE option and the hooks behind it.  Called
 * from _PG_init after fasttime's executor hooks are installed, so that our
 * ExecutorStart hook runs around theirs.
 */
void
ft_register_explain_option(void)
{
	ft_explain_extension_id = GetExplainExtensionId("fasttime");
	RegisterExtensionExplainOption("clock_source", ft_clock_source_handler);

	prev_validate_options = explain_validate_options_hook;
	explain_validate_options_hook = ft_validate_options;
	prev_per_plan = explain_per_plan_hook;
	explain_per_plan_hook = ft_explain_per_plan;

	prev_ExecutorStart = ExecutorStart_hook;
	ExecutorStart_hook = ft_explain_ExecutorStart;
	prev_ExecutorEnd = ExecutorEnd_hook;
	ExecutorEnd_hook = ft_explain_ExecutorEnd;

	RegisterXactCallback(ft_explain_xact_callback, NULL);
	RegisterSubXactCallback(ft_explain_subxact_callback, NULL);
}

#else							/* !FT_HAVE_EXPLAIN_EXTENSIONS */

/* Before PostgreSQL 18 there is no way to add an EXPLAIN option. */
void
ft_register_explain_option(void)
{
}

#endif							/* FT_HAVE_EXPLAIN_EXTENSIONS */
