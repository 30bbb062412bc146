/*-------------------------------------------------------------------------
 *
 * node_timing.c
 *	  Executor hooks: put instrumented queries on fasttime's node wrappers,
 *	  and keep a note of what timed each of them.
 *
 * Unless fasttime.clock_source = clock_gettime, ExecutorStart decides once
 * per query how its nodes are timed (choose_timer) and puts them on the
 * matching wrappers (node_wrappers.c); a small plan is left as stock built
 * it.  Each wrapped query, and each EXPLAIN's, gets a note until its
 * executor state goes away: what timed it, its time unit and profiled
 * frames, and for the TSC both clocks at its start, compared with both at
 * its end (check_clocks).  A disagreement is reported, never corrected: a
 * tool that rewrites what it measured cannot be trusted.
 *
 * src/node_timing.c
 *
 *-------------------------------------------------------------------------
 */
#include "compat.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "tcop/utility.h"
#include "lib/stringinfo.h"
#include "utils/float.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#ifdef FASTTIME_FAULT_INJECTION
#include "fault_injection.h"	/* test/fault/, fault builds only */
#endif
#include "node_timing.h"
#include "node_wrappers.h"
#include "usage.h"

/* fasttime.ordered_reads (FtReadOrder) */
int			ft_ordered_reads = FT_READS_BOTH;

/* what this backend has done, for fasttime_status() */
FtNodeTimingStats ft_node_timing_stats;

/* the running query's time unit (compat.h), swapped around runs */
FtInstrUnits ft_instr_units;

/* ft_instr_units holds some query's units (set at the first one's start) */
static bool ft_instr_units_set = false;

static ExecutorStart_hook_type prev_ExecutorStart = NULL;
static ExecutorRun_hook_type prev_ExecutorRun = NULL;
static ExecutorFinish_hook_type prev_ExecutorFinish = NULL;
static ExecutorEnd_hook_type prev_ExecutorEnd = NULL;
static ProcessUtility_hook_type prev_ProcessUtility = NULL;

/* EXPLAIN statements under way in this process (ft_ProcessUtility) */
static int	explain_depth = 0;
/* has the EXPLAIN under way warned its client of a disagreement? */
static bool explain_warned = false;

/* the notes of the queries under way, in start order (TopMemoryContext) */
static FtQueryClock *query_clocks = NULL;
static int	n_query_clocks = 0;
static int	max_query_clocks = 0;

/* tolerated disagreement between the clocks over one query */
#define FT_DRIFT_TOLERANCE_PPM	1000
#define FT_DRIFT_TOLERANCE_NS	50000

/* after a backend's first disagreement: LOG rate, and when to give up */
#define FT_DISAGREEMENT_LOG_NS	(10 * FT_NS_PER_SEC)
#define FT_FALLBACK_AFTER		3

/* clock_gettime of the last disagreement reported, and those not since */
static int64 last_disagreement_report_ns = 0;
static int64 disagreements_unreported = 0;

/* tries and the widest acceptable pair of reads, for paired_stamp */
#define FT_STAMP_TRIES			4
#define FT_STAMP_MAX_WIDTH_NS	20000

/* the last stamp taken, reusable for FT_STAMP_REUSE_NS (query_start_stamp) */
#define FT_STAMP_REUSE_NS		40000
/* a stamp less sure than this is not compared at all (paired_stamp) */
#define FT_STAMP_MAX_SLACK_NS	1000000
static bool last_stamp_valid = false;
static uint64 last_stamp_tsc;
static int64 last_stamp_wall_ns;

/* short nested queries since this stamp are still to be compared */
static bool window_pending = false;
static uint64 last_window_tsc;
static int64 last_window_wall_ns;
static int64 last_window_slack_ns;
static double last_window_core_ns_per_tick;	/* the first one's (clocks_disagree) */
/* ... ended by an abort, with this stamp, and still to be compared */
static bool window_end_taken = false;
static uint64 window_end_tsc;
static int64 window_end_wall_ns;
static int64 window_end_slack_ns;

static void compare_pending_window(uint64 tsc_end, int64 wall_end,
								   int64 end_slack);

/*
 * Both clocks read "at the same time": the TSC on either side of
 * clock_gettime, retried while the two TSC reads are far apart (something
 * interrupted us in between).  The TSC stamp is their midpoint.
 *
 * Returns how far the stamp may be off beyond what the comparison's
 * tolerance allows for: 0 for a pair at most FT_STAMP_MAX_WIDTH_NS wide.
 * When every try was interrupted, the narrowest one is kept and half its
 * width returned, to be added to the tolerance: a busy machine must not
 * make clocks that agree look as if they did not.  -1 when no pair read
 * the TSC forward, or the narrowest leaves the stamp more than
 * FT_STAMP_MAX_SLACK_NS unsure: nothing worth comparing with.
 */
static int64
paired_stamp(uint64 *tsc, int64 *wall_ns)
{
	int64		best = -1;

#ifdef FASTTIME_FAULT_INJECTION
	ft_fault_stamps_taken++;
#endif
	last_stamp_valid = false;
	for (int i = 0; i < FT_STAMP_TRIES; i++)
	{
		uint64		before = ft_node_ticks();
		int64		wall = ft_read_clock_gettime_ns();
		uint64		after = ft_node_ticks();
		int64		width;

		if (after < before)
			continue;
		width = (int64) ft_ticks_to_ns(&ft_conv, (int64) (after - before));
		if (best >= 0 && width >= best)
			continue;
		best = width;
		*tsc = before + (after - before) / 2;
		*wall_ns = wall;
		if (width <= FT_STAMP_MAX_WIDTH_NS)
		{
			last_stamp_valid = true;
			last_stamp_tsc = *tsc;
			last_stamp_wall_ns = wall;
			return 0;
		}
	}
	if (best < 0 || best / 2 > FT_STAMP_MAX_SLACK_NS)
	{
		*tsc = 0;
		*wall_ns = 0;
		return -1;
	}
	return best / 2;
}

/* Was the last stamp good, and taken at most max_ns ago by the TSC? */
static inline bool
last_stamp_within(int64 max_ns)
{
	uint64		now;

	if (!last_stamp_valid)
		return false;
	now = ft_node_ticks();
	return now >= last_stamp_tsc &&
		ft_ticks_to_ns(&ft_conv, (int64) (now - last_stamp_tsc)) <= (uint64) max_ns;
}

/*
 * Both clocks at the start of a TSC-timed query.  A query started within
 * FT_STAMP_REUSE_NS (by the TSC) of the last stamp -- a statement of a
 * PL/pgSQL loop -- reuses it: a new pair costs as much as all the node
 * timing of a one-row lookup.  Its comparison then covers the gap too; a
 * jump of the TSC inside the gap is either below every tolerance, or shows
 * as a negative gap (a new stamp is taken), or is a real disagreement
 * reported with the next query.  A new stamp compares pending short
 * queries first.
 */
static int64
query_start_stamp(uint64 *tsc, int64 *wall_ns)
{
	int64		slack;

	StaticAssertStmt(FT_STAMP_REUSE_NS < FT_DRIFT_TOLERANCE_NS,
					 "a reused stamp's gap must stay below the tolerance");

	if (last_stamp_within(FT_STAMP_REUSE_NS))
	{
		*tsc = last_stamp_tsc;
		*wall_ns = last_stamp_wall_ns;
#ifdef FASTTIME_FAULT_INJECTION
		ft_fault_stamps_reused++;
#endif
		return 0;
	}
	slack = paired_stamp(tsc, wall_ns);
	if (window_pending)
		compare_pending_window(*tsc, *wall_ns, slack);
	return slack;
}

/* Index of a query's note, or -1. */
static int
find_query_clock(const QueryDesc *queryDesc)
{
	for (int i = n_query_clocks - 1; i >= 0; i--)
	{
		if (query_clocks[i].queryDesc == queryDesc)
			return i;
	}
	return -1;
}

/* Forget a query's note, if it has one. */
static void
forget_query_clock(const QueryDesc *queryDesc)
{
	int			i = find_query_clock(queryDesc);

	if (i >= 0)
	{
		memmove(&query_clocks[i], &query_clocks[i + 1],
				sizeof(FtQueryClock) * (n_query_clocks - i - 1));
		n_query_clocks--;
	}
}

/* what a noted query's memory callback needs, in that memory */
typedef struct FtQueryMemory
{
	MemoryContextCallback cb;
	const QueryDesc *queryDesc; /* the note's key, not dereferenced: the
								 * QueryDesc may be gone already */
	const EState *estate;		/* whose memory this is */
} FtQueryMemory;

/*
 * A noted query's executor state is going away without ExecutorEnd (a
 * failed portal or subtransaction; on FATAL, one whose run is still under
 * way): drop its note, its frames from the chain, and its run from the
 * profiler's stack, before a tick can reach them.
 */
static void
query_memory_gone(void *arg)
{
	FtQueryMemory *qm = (FtQueryMemory *) arg;
	int			i = find_query_clock(qm->queryDesc);

	if (i >= 0 && query_clocks[i].prof != NULL)
		ft_prof_forget(query_clocks[i].prof);
	ft_usage_forget_query(qm->estate);
	forget_query_clock(qm->queryDesc);
}

/* Add a note for a query, tied to the lifetime of its executor state. */
static FtQueryClock *
note_query(QueryDesc *queryDesc)
{
	FtQueryClock *qc;
	FtQueryMemory *qm;

	if (n_query_clocks == max_query_clocks)
	{
		int			newmax = Max(8, max_query_clocks * 2);

		if (query_clocks == NULL)
			query_clocks = MemoryContextAlloc(TopMemoryContext,
											  sizeof(FtQueryClock) * newmax);
		else
			query_clocks = repalloc(query_clocks, sizeof(FtQueryClock) * newmax);
		max_query_clocks = newmax;
	}
	qm = MemoryContextAlloc(queryDesc->estate->es_query_cxt, sizeof(*qm));
	qm->queryDesc = queryDesc;
	qm->estate = queryDesc->estate;
	qm->cb.func = query_memory_gone;
	qm->cb.arg = qm;
	MemoryContextRegisterResetCallback(queryDesc->estate->es_query_cxt, &qm->cb);

	/* every field set here, which is cheaper than a memset */
	qc = &query_clocks[n_query_clocks++];
	qc->queryDesc = queryDesc;
	qc->plannedstmt = queryDesc->plannedstmt;
	qc->prof = NULL;
	qc->derived = NULL;
	qc->checked = false;
	qc->disagreed = false;
	qc->wall_ns = 0;
	qc->tsc_ns = 0;
	qc->tsc_hz = 0;
	qc->tsc_hz_origin = FT_FREQ_NONE;
	qc->tsc_start = 0;
	qc->wall_start_ns = 0;
	qc->start_slack_ns = -1;
	return qc;
}

/* Number of notes held now, for fasttime_status() and its tests. */
int
ft_open_query_notes(void)
{
	return n_query_clocks;
}

/*
 * The clock in effect, for a query's start.  A nested query reuses its
 * outermost query's decision while the setting is unchanged, so a PL/pgSQL
 * loop's statements ask nothing (asking costs a clock read); a fallback
 * (ft_clock_fall_back) still takes effect at the next query.
 */
static FtClockChoice
query_clock_choice(void)
{
	static bool kept = false;
	static int	kept_setting;
	static FtClockChoice kept_choice;

	if (n_query_clocks == 0 || !kept || kept_setting != ft_clock_setting ||
		(kept_choice == FT_CHOICE_TSC && ft_clock_fell_back))
	{
		kept_choice = ft_effective_choice();
		kept_setting = ft_clock_setting;
		kept = true;
	}
	return kept_choice;
}

/*
 * Is an EXPLAIN under way (ft_ProcessUtility)?  Then EXPLAIN (CLOCK_SOURCE)
 * may ask what timed the plan, so neither it nor the queries inside it are
 * left to stock as small.  Nothing in the QueryDesc tells.
 */
static inline bool
inside_explain(void)
{
	return explain_depth > 0;
}

/*
 * Is this a small plan, best left as stock built it?  Wrapping a plan costs
 * a fixed amount per query, which the cheaper clock pays back a call at a
 * time; a plan of fewer than FT_SMALL_PLAN_CALLS estimated node calls (a
 * one-row lookup or UPDATE) cannot pay it back.  Not under EXPLAIN, in a
 * profiled run (a query inside one is profiled with it) or in a parallel
 * worker (its leader decided).
 */
#define FT_SMALL_PLAN_CALLS		8.0

static bool
small_plan(QueryDesc *queryDesc)
{
	if (inside_explain() || ft_prof_active() || IsParallelWorker())
		return false;
	return ft_prof_estimated_calls(queryDesc->planstate,
								   FT_SMALL_PLAN_CALLS) < FT_SMALL_PLAN_CALLS;
}

/*
 * How this query's nodes are to be timed, or false to leave the plan as
 * stock built it (clock_gettime without profiled timing, or a small plan).
 * Profiled timing, asked for by fasttime.node_timing or by a profiled run
 * around this query, is given only where it pays and the tick can be
 * armed; otherwise the plan is timed exactly and *declined says why.
 */
static bool
choose_timer(QueryDesc *queryDesc, FtTimer *timer, FtProfDecline *declined,
			 double *est_calls)
{
	bool		asked = ft_node_timing == FT_NODE_TIMING_PROFILE || ft_prof_active();
	bool		profiled = asked;
	bool		tsc = false;
	FtClockChoice choice = FT_CHOICE_CLOCK_GETTIME;

	*declined = FT_PROF_NOT_DECLINED;
	*est_calls = 0;
	if (queryDesc->planstate == NULL || queryDesc->estate == NULL ||
		!ft_wrappers_stock_known())
		return false;
	if (ft_clock_setting == FT_SETTING_CLOCK_GETTIME && !asked)
		return false;
	if (small_plan(queryDesc))
	{
		ft_node_timing_stats.small_plans++;
		return false;
	}
	if ((queryDesc->instrument_options & INSTRUMENT_TIMER) == 0)
		profiled = false;
	if (profiled)
	{
		/* the clock of the profiled run around us, if any, must be ours */
		choice = query_clock_choice();
		tsc = ft_prof_active() ? ft_prof_clock_is_tsc() : choice == FT_CHOICE_TSC;
		*est_calls = ft_prof_estimated_calls(queryDesc->planstate,
											 get_float8_infinity());
		if (!ft_prof_pays(*est_calls, tsc))
		{
			profiled = false;
			*declined = FT_PROF_DECLINED_FEW_CALLS;
		}
		else if (!ft_prof_available())
		{
			profiled = false;
			*declined = FT_PROF_DECLINED_NO_TIMEOUT;
		}
	}

	/* clock_gettime is stock timing, unless profiled (and not declined) */
	if (ft_clock_setting == FT_SETTING_CLOCK_GETTIME &&
		*declined != FT_PROF_NOT_DECLINED)
		return false;
	if ((queryDesc->instrument_options & INSTRUMENT_TIMER) == 0)
		*timer = FT_TIMER_NONE;
	else if (profiled)
		*timer = tsc ? FT_TIMER_PROF_PHASE_TSC : FT_TIMER_PROF_PHASE_CLOCK_GETTIME;
	else if ((asked ? choice : query_clock_choice()) == FT_CHOICE_TSC)
		*timer = ft_ordered_reads == FT_READS_BOTH ? FT_TIMER_TSC_ORDERED :
			FT_TIMER_TSC;
	else
		*timer = FT_TIMER_CLOCK_GETTIME;
	return true;
}

/* Put a query's nodes on the wrappers, and say so at DEBUG1 for tests. */
static int
wrap_query(QueryDesc *queryDesc, FtTimer timer, const char *when)
{
	int			switched;
	int			n;
	int			max_id;

	n = ft_wrap_query_nodes(queryDesc->planstate,
							queryDesc->estate->es_subplanstates,
							timer, &switched, &max_id);
	if (ft_timer_is_tsc(timer))
		ft_node_timing_stats.last_query_nodes = n;
	if (!message_level_is_interesting(DEBUG1))
		return max_id;
	if (ft_timer_is_tsc(timer))
		ereport(DEBUG1,
				(errmsg_internal("fasttime: %d plan nodes timed with the TSC in %s at %s (%d switched)",
								 n, IsParallelWorker() ? "parallel worker" : "backend",
								 when, switched)));
	else
		ereport(DEBUG1,
				(errmsg_internal("fasttime: %d plan nodes on fasttime's wrappers, timer %s, in %s at %s (%d switched)",
								 n, ft_timer_name(timer),
								 IsParallelWorker() ? "parallel worker" : "backend",
								 when, switched)));
	return max_id;
}

/*
 * ExecutorStart hook: once the plan tree exists (and earlier hooks, like
 * auto_explain's, asked for instrumentation), wrap its nodes and note how
 * the query is timed.
 */
static void
ft_ExecutorStart(QueryDesc *queryDesc, int eflags)
{
	FtQueryClock *qc;
	FtTimer		timer = FT_TIMER_NONE;
	bool		wrapped;
	int			max_id = -1;
	FtUsageDerived *derived = NULL;
	bool		has_frames = false;
	FtProfDecline declined;
	double		est_calls;

	/* a query started inside a Hash Join's call: a build left open ends */
	ft_prof_build_end_due(ft_prof_tsc);
	if (prev_ExecutorStart)
		prev_ExecutorStart(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
#ifdef FASTTIME_FAULT_INJECTION
	ft_fault_wrap_foreign(queryDesc);
#endif

	if ((eflags & EXEC_FLAG_EXPLAIN_ONLY) != 0 ||
		queryDesc->instrument_options == 0 ||
		queryDesc->estate == NULL)
		return;

	wrapped = choose_timer(queryDesc, &timer, &declined, &est_calls);
	if (wrapped)
	{
		if (ft_timer_is_tsc(timer))
		{
			if (!IsParallelWorker())
				ft_publish_facts();
			ft_node_timing_stats.queries++;
		}
		/* the frames first: the profiler's records their instrumentation */
		derived = ft_usage_frame_query(queryDesc->planstate,
									   queryDesc->estate->es_subplanstates,
									   queryDesc->estate,
									   ft_timer_is_profiled(timer),
									   &has_frames);
		ft_node_timing_stats.last_query_derived = derived ? derived->n : 0;
		max_id = wrap_query(queryDesc, timer, "ExecutorStart");
	}

	if (declined != FT_PROF_NOT_DECLINED)
		ft_node_timing_stats.prof_declined++;

	/* a query left to stock needs no note, unless EXPLAIN may ask */
	if (!wrapped && !inside_explain())
		return;

	qc = note_query(queryDesc);
	ft_instr_units_choose(&qc->units, &ft_conv);
	if (!ft_instr_units_set)
	{
		/* no run is under way: nobody's units are in effect yet */
		ft_instr_units = qc->units;
		ft_instr_units_set = true;
	}
	qc->setting = (FtClockSetting) ft_clock_setting;
	qc->node_timing = (queryDesc->instrument_options & INSTRUMENT_TIMER) != 0;
	qc->wrapped = wrapped;
	qc->timer = timer;
	qc->derived = derived;
	qc->has_frames = has_frames;
	qc->prof_declined = declined;
	qc->est_calls = est_calls;
	qc->tsc = wrapped && ft_timer_is_tsc(timer);

	/*
	 * The outermost query: a query nested in it reuses the last stamp (see
	 * below), which must be this one's or later.  A TSC-timed one takes
	 * its own (or one of the last FT_STAMP_REUSE_NS); one timed otherwise
	 * takes none, so the last is forgotten: a nested query starting from
	 * it would be compared over the hours since, with a tolerance that
	 * grows with them.
	 */
	if (n_query_clocks == 1 && !qc->tsc)
		last_stamp_valid = false;
	if (wrapped && ft_timer_is_profiled(timer))
	{
		qc->prof = ft_prof_query_create(queryDesc->planstate,
										queryDesc->estate->es_subplanstates,
										max_id + 1, ft_timer_is_tsc(timer),
										ft_wrappers_node_is_ours,
										queryDesc->estate->es_query_cxt);
		/*
		 * An EXPLAIN's estimate may bring its first tick forward
		 * (ft_prof_first_tick_ms).  auto_explain's statements keep theirs
		 * at a quarter of profile_after: a run that ends before a tick
		 * leaves the timer's signal pending, and a stream of short
		 * statements estimated high would take one every interval.
		 */
		qc->prof->est_calls = inside_explain() ? est_calls : 0.0;
	}
	if (qc->tsc)
	{
		/*
		 * The frequency EXPLAIN (CLOCK_SOURCE) names is the one that turns
		 * this query's node times into milliseconds: on 19 with the
		 * server's TSC clock the nodes hold raw ticks that EXPLAIN
		 * converts with the server's frequency, not fasttime's.
		 */
		if (qc->units.core_ticks)
		{
			int32		khz = ft_core_tsc_frequency_khz();

			qc->tsc_hz = khz > 0 ? 1000.0 * khz : 1e9 / qc->units.core_ns_per_tick;
			qc->tsc_hz_origin = FT_FREQ_SERVER;
		}
		else
		{
			qc->tsc_hz = ft_conv.hz;
			qc->tsc_hz_origin = ft_get_facts()->tsc_hz_origin;
		}
		if (n_query_clocks > 1 && last_stamp_valid && !ft_timer_is_profiled(timer))
		{
			/*
			 * nested: start from the last stamp, which is the outermost
			 * query's or later (see below); check_clocks judges
			 */
			qc->tsc_start = last_stamp_tsc;
			qc->wall_start_ns = last_stamp_wall_ns;
			qc->start_slack_ns = 0;
#ifdef FASTTIME_FAULT_INJECTION
			ft_fault_stamps_reused++;
#endif
		}
		else
			qc->start_slack_ns = query_start_stamp(&qc->tsc_start,
												   &qc->wall_start_ns);
	}
}

/*
 * Does a run of this query need nothing from the run hooks?  True for an
 * exact-timed query with no frames (auto_explain's default) whose units
 * are in effect, outside a parallel worker: nothing to make current or
 * restore, so the run goes without the PG_TRY and the swaps.
 */
static inline bool
ft_run_needs_nothing(const FtQueryClock *qc)
{
	return qc->prof == NULL && !qc->has_frames && !IsParallelWorker() &&
		ft_instr_units_same(&qc->units, &ft_instr_units);
}

/*
 * ExecutorRun hook: make the query's time unit, chain and profiled frames
 * current while it runs.  A parallel worker walks its tree again: a
 * parallel hash join may have re-armed stock instrumentation since
 * ExecutorStart.
 */
static void
ft_ExecutorRun(FT_EXECUTORRUN_ARGS)
{
	int			i;
	FtInstrUnits saved_units;
	FtProfQuery *volatile prof;
	FtProfFrame **saved_frames = NULL;
	uint32		saved_nframes = 0;
	FtUsageFrame *saved_usage_top;

	/*
	 * A run inside a Hash Join's call (a function in its hash keys or join
	 * qual) is the Hash Join's, not a build's left open on the chain: end
	 * that build first, before the chain is saved for the run's end to
	 * restore (which would link the ended build frame again).
	 */
	ft_prof_build_end_due(ft_prof_tsc);
	i = find_query_clock(queryDesc);
	if (i < 0 || !query_clocks[i].wrapped ||
		ft_run_needs_nothing(&query_clocks[i]))
	{
		if (prev_ExecutorRun)
			FT_EXECUTORRUN_CALL(prev_ExecutorRun);
		else
			FT_EXECUTORRUN_CALL(standard_ExecutorRun);
		return;
	}

	if (IsParallelWorker())
		wrap_query(queryDesc, query_clocks[i].timer, "ExecutorRun");

	prof = query_clocks[i].prof;
	saved_units = ft_instr_units;
	ft_instr_units = query_clocks[i].units;
	if (prof)
		ft_prof_enter(prof, &saved_frames, &saved_nframes);
	ft_usage_run_begin(&saved_usage_top);
	PG_TRY();
	{
		if (prev_ExecutorRun)
			FT_EXECUTORRUN_CALL(prev_ExecutorRun);
		else
			FT_EXECUTORRUN_CALL(standard_ExecutorRun);
	}
	PG_FINALLY();
	{
		if (prof)
			ft_prof_take_worker_tick();
		ft_usage_run_end(saved_usage_top);
		if (prof)
			ft_prof_leave(prof, saved_frames, saved_nframes);
		ft_instr_units = saved_units;
	}
	PG_END_TRY();

	/* derived usage is complete up to here (nested queries moved notes) */
	i = find_query_clock(queryDesc);
	if (i >= 0)
		ft_usage_derive(query_clocks[i].derived);
}

/* The note of a plan's query, for EXPLAIN (CLOCK_SOURCE); NULL if none. */
const FtQueryClock *
ft_find_query_clock(const PlannedStmt *plannedstmt)
{
	for (int i = n_query_clocks - 1; i >= 0; i--)
	{
		if (query_clocks[i].plannedstmt == plannedstmt)
			return &query_clocks[i];
	}
	return NULL;
}

/*
 * The two clocks' time over an interval, and whether they disagree beyond
 * the tolerance: 50 us (the reads' spread, a reused stamp's gap) plus
 * 0.1 % (the frequency's error), plus the stamps' slack (paired_stamp).
 *
 * The TSC's time is what the node times of the queries compared were
 * converted with: fasttime's frequency, or, where they were written as the
 * server's own TSC ticks (PostgreSQL 19's TSC clock), the server's
 * conversion as it was when the query started (core_ns_per_tick, from its
 * units), which EXPLAIN then applies; a check of fasttime's frequency
 * would vouch for one that converted nothing.
 */
static bool
clocks_disagree(uint64 tsc_start, int64 wall_start, uint64 tsc_end,
				int64 wall_end, int64 slack, double core_ns_per_tick,
				int64 *wall_ns, int64 *tsc_ns)
{
	int64		tsc_delta = (int64) (tsc_end - tsc_start);
	int64		tolerance;

	*wall_ns = wall_end - wall_start;
	if (core_ns_per_tick > 0)
	{
		double		ns = (double) tsc_delta * core_ns_per_tick;

		/* a jump of centuries saturates, as ft_ticks_to_ns does */
		*tsc_ns = ns >= 9.0e18 ? INT64CONST(9000000000000000000) :
			ns <= -9.0e18 ? -INT64CONST(9000000000000000000) : (int64) ns;
	}
	else
		*tsc_ns = tsc_delta < 0 ? -(int64) ft_ticks_to_ns(&ft_conv, -tsc_delta) :
			(int64) ft_ticks_to_ns(&ft_conv, tsc_delta);
	tolerance = FT_DRIFT_TOLERANCE_NS + slack +
		*wall_ns / (1000000 / FT_DRIFT_TOLERANCE_PPM);
	return *tsc_ns > *wall_ns + tolerance || *tsc_ns < *wall_ns - tolerance;
}

/*
 * Report a disagreement of the clocks over a query, or over short nested
 * queries compared late (window); wall_end is the comparison's end.
 *
 * Clocks that disagree once tend to go on (a live-migrated virtual
 * machine), and auto_explain times queries of applications that never
 * asked for EXPLAIN: a WARNING there would reach them, once per backend,
 * which after a migration is once per new connection.  So the client is
 * warned only by EXPLAIN, the one place it asked for node times, and by
 * every EXPLAIN whose times the check found suspect, once: an EXPLAIN
 * that showed them without a word would be a silently wrong number (a
 * pooled backend may have warned another user hours ago).  The queries
 * nested in one EXPLAIN (auto_explain's nested statements, an EXPLAIN in
 * a function it calls) may each disagree over the same jump; the first
 * warns, the others log.  The FT_FALLBACK_AFTER-th disagreement makes the
 * backend give the TSC up (ft_clock_fall_back), so an EXPLAIN started
 * after it times nothing with the TSC and cannot warn.
 * Everything else goes to the server log, beside the plans auto_explain
 * logs there: a backend's first disagreement always, later ones at most
 * once every FT_DISAGREEMENT_LOG_NS.  A parallel worker, which lives for
 * one query and cannot tell whether its leader runs an EXPLAIN, only
 * logs, and never falls back by itself.
 */
static void
report_disagreement(int64 wall_ns, int64 tsc_ns, int64 wall_end, bool window)
{
	int64		n = ++ft_node_timing_stats.disagreements;
	int			fallback_after = FT_FALLBACK_AFTER;
	bool		first = !ft_clock_backend_disagreed();
	bool		reported = false;

#ifdef FASTTIME_FAULT_INJECTION
	if (ft_fault_fallback_after > 0)
		fallback_after = ft_fault_fallback_after;
#endif
	if (!window && inside_explain() && !explain_warned && !IsParallelWorker())
	{
		ereport(WARNING,
				(errmsg("fasttime: the TSC disagreed with clock_gettime during this query"),
				 errdetail("Over %.3f ms of clock_gettime time, the TSC advanced %.3f ms. The plan node times of this query were taken with the TSC and are shown as measured.",
						   (double) wall_ns / 1e6, (double) tsc_ns / 1e6),
				 errhint("Node times from this query may be wrong. If this repeats, SET fasttime.clock_source = clock_gettime.")));
		explain_warned = true;
		reported = true;
	}
	else if (first)
	{
		ereport(LOG,
				(errmsg("fasttime: the TSC disagreed with clock_gettime during %s",
						window ? "short queries nested in another" :
						IsParallelWorker() ? "a query in a parallel worker" : "a query"),
				 errdetail("Over %.3f ms of clock_gettime time, the TSC advanced %.3f ms. The plan node times of %s were taken with the TSC and are shown as measured.",
						   (double) wall_ns / 1e6, (double) tsc_ns / 1e6,
						   window ? "those queries" : "that query"),
				 errhint("Node times from %s may be wrong. If this repeats, set fasttime.clock_source = clock_gettime.",
						 window ? "those queries" : "that query")));
		reported = true;
	}
	if (first)
		ft_clock_disagreed();
	if (!IsParallelWorker() && n >= fallback_after &&
		ft_clock_fallback_reason() == NULL)
	{
		ft_clock_fall_back(psprintf("the TSC disagreed with clock_gettime %lld times in this backend, by more than %.1f %% plus %.3f ms; over the last, %.3f ms of clock_gettime time, the TSC advanced %.3f ms (disagreements not logged since the last one reported: %lld)",
									(long long) n, FT_DRIFT_TOLERANCE_PPM / 1e4,
									FT_DRIFT_TOLERANCE_NS / 1e6,
									(double) wall_ns / 1e6, (double) tsc_ns / 1e6,
									(long long) disagreements_unreported));
		reported = true;
	}
	else if (!reported &&
			 (last_disagreement_report_ns == 0 ||
			  wall_end - last_disagreement_report_ns >= FT_DISAGREEMENT_LOG_NS))
	{
		if (window)
			ereport(LOG,
					(errmsg("fasttime: the TSC disagreed with clock_gettime during short queries nested in another"),
					 errdetail("Over %.3f ms of clock_gettime time, the TSC advanced %.3f ms. The plan node times of those queries were taken with the TSC and are shown as measured. Disagreements in this %s so far: %lld; not logged since the last one logged: %lld (at most one is logged every %d s).",
							   (double) wall_ns / 1e6, (double) tsc_ns / 1e6,
							   IsParallelWorker() ? "parallel worker" : "backend",
							   (long long) n, (long long) disagreements_unreported,
							   (int) (FT_DISAGREEMENT_LOG_NS / FT_NS_PER_SEC)),
					 errhidestmt(true)));
		else if (IsParallelWorker())
			ereport(LOG,
					(errmsg("the TSC disagreed with clock_gettime during a query again"),
					 errdetail("Over %.3f ms of clock_gettime time, the TSC advanced %.3f ms in this parallel worker. The plan node times of that query were taken with the TSC and are shown as measured. Its leader has reported a disagreement already.",
							   (double) wall_ns / 1e6, (double) tsc_ns / 1e6),
					 errhidestmt(true)));
		else
			ereport(LOG,
					(errmsg("the TSC disagreed with clock_gettime during a query again"),
					 errdetail("Over %.3f ms of clock_gettime time, the TSC advanced %.3f ms. The plan node times of that query were taken with the TSC and are shown as measured. Disagreements in this backend so far: %lld; not logged since the last one logged: %lld (at most one is logged every %d s).",
							   (double) wall_ns / 1e6, (double) tsc_ns / 1e6,
							   (long long) n, (long long) disagreements_unreported,
							   (int) (FT_DISAGREEMENT_LOG_NS / FT_NS_PER_SEC)),
					 errhidestmt(true)));
		reported = true;
	}
	if (reported)
	{
		last_disagreement_report_ns = wall_end;
		disagreements_unreported = 0;
	}
	else
		disagreements_unreported++;
}

/*
 * Compare the clocks over the short queries left for later (check_clocks),
 * up to a stamp that may be end_slack off; one that read no TSC forward
 * leaves them for the next.  Short queries whose transaction aborted are
 * compared up to the stamp taken then (ft_xact_callback), whatever this
 * one: the time since may be idle, and 0.1 % of an idle hour would hide a
 * jump.
 */
static void
compare_pending_window(uint64 tsc_end, int64 wall_end, int64 end_slack)
{
	int64		wall_ns;
	int64		tsc_ns;

	if (window_end_taken)
	{
		tsc_end = window_end_tsc;
		wall_end = window_end_wall_ns;
		end_slack = window_end_slack_ns;
		window_end_taken = false;
		if (end_slack < 0)
			window_pending = false;
	}
	if (end_slack < 0)
		return;
	window_pending = false;
	if (clocks_disagree(last_window_tsc, last_window_wall_ns, tsc_end, wall_end,
						last_window_slack_ns + end_slack,
						last_window_core_ns_per_tick,
						&wall_ns, &tsc_ns))
		report_disagreement(wall_ns, tsc_ns, wall_end, true);
}

/*
 * Compare the clocks over a TSC-timed query, and on disagreement remember
 * it for EXPLAIN (CLOCK_SOURCE) and report it.
 *
 * A nested query shorter than FT_STAMP_REUSE_NS by the TSC is left to the
 * next comparison, which starts from the same stamp (at the latest the
 * outermost query's, or the transaction's end): a pair of reads costs as
 * much as the node timing of a one-row lookup.  Only inside a TSC-timed
 * outermost query, whose own comparison bounds the wait: inside one timed
 * otherwise the next comparison may come after any pause.  A TSC jump still shows: it
 * makes the query look long or negative (compared at once), or short by
 * the jump, which the next comparison sees whole.
 */
static void
check_clocks(FtQueryClock *qc)
{
	uint64		tsc_end;
	int64		wall_end;
	int64		end_slack;
	int64		wall_ns;
	int64		tsc_ns;

	/* short queries of an aborted transaction: up to the abort */
	if (window_pending && window_end_taken)
		compare_pending_window(0, 0, -1);

	if (n_query_clocks > 1 && last_stamp_valid &&
		last_stamp_tsc == qc->tsc_start && last_stamp_wall_ns == qc->wall_start_ns &&
		query_clocks[0].tsc && !query_clocks[0].checked)
	{
		/* the TSC as the last exact call read it, if since the start */
		uint64		now = ft_node_last_tsc >= qc->tsc_start &&
			!ft_timer_is_profiled(qc->timer) ? ft_node_last_tsc : ft_node_ticks();

		if (now >= qc->tsc_start &&
			ft_ticks_to_ns(&ft_conv, (int64) (now - qc->tsc_start)) < FT_STAMP_REUSE_NS)
		{
			if (!window_pending)
			{
				window_pending = true;
				last_window_tsc = qc->tsc_start;
				last_window_wall_ns = qc->wall_start_ns;
				last_window_slack_ns = qc->start_slack_ns;
				last_window_core_ns_per_tick = qc->units.core_ns_per_tick;
			}
#ifdef FASTTIME_FAULT_INJECTION
			ft_fault_checks_deferred++;
#endif
			return;
		}
	}

	end_slack = paired_stamp(&tsc_end, &wall_end);
	qc->checked = true;
	/* a stamp that read no TSC forward: nothing to compare (a jump back) */
	if (qc->start_slack_ns < 0 || end_slack < 0)
		return;
	/* this comparison starts no later than a pending window: it covers it */
	window_pending = false;
	if (clocks_disagree(qc->tsc_start, qc->wall_start_ns, tsc_end, wall_end,
						qc->start_slack_ns + end_slack, qc->units.core_ns_per_tick,
						&wall_ns, &tsc_ns))
	{
		qc->disagreed = true;
		report_disagreement(wall_ns, tsc_ns, wall_end, false);
	}
	qc->wall_ns = wall_ns;
	qc->tsc_ns = tsc_ns;
}

/* At transaction end, compare the short queries still to be compared. */
static void
compare_pending_now(void)
{
	uint64		tsc;
	int64		wall;
	int64		slack;

	if (!window_pending)
		return;
	slack = paired_stamp(&tsc, &wall);
	compare_pending_window(tsc, wall, slack);
}

/*
 * ExecutorFinish hook: run the plan's last nodes (deferred ModifyTable
 * work) as ExecutorRun runs the rest, then compare the clocks over the
 * whole query.
 */
static void
ft_ExecutorFinish(QueryDesc *queryDesc)
{
	int			i;
	FtInstrUnits saved_units;
	FtProfQuery *volatile prof;
	FtProfFrame **saved_frames = NULL;
	uint32		saved_nframes = 0;
	FtUsageFrame *saved_usage_top;

	/* before the chain is saved (ft_ExecutorRun) */
	ft_prof_build_end_due(ft_prof_tsc);
	i = find_query_clock(queryDesc);
	if (i < 0 || !query_clocks[i].wrapped)
	{
		if (prev_ExecutorFinish)
			prev_ExecutorFinish(queryDesc);
		else
			standard_ExecutorFinish(queryDesc);
		return;
	}

	/*
	 * No node runs here without secondary ModifyTable nodes (AFTER
	 * triggers' queries are their own): then this needs nothing of ours.
	 */
	if (queryDesc->estate->es_auxmodifytables == NIL ||
		ft_run_needs_nothing(&query_clocks[i]))
	{
		if (prev_ExecutorFinish)
			prev_ExecutorFinish(queryDesc);
		else
			standard_ExecutorFinish(queryDesc);
		i = find_query_clock(queryDesc);
		if (i >= 0 && query_clocks[i].tsc && !query_clocks[i].checked)
			check_clocks(&query_clocks[i]);
		return;
	}

	prof = query_clocks[i].prof;
	saved_units = ft_instr_units;
	ft_instr_units = query_clocks[i].units;
	if (prof)
		ft_prof_enter(prof, &saved_frames, &saved_nframes);
	ft_usage_run_begin(&saved_usage_top);
	PG_TRY();
	{
		if (prev_ExecutorFinish)
			prev_ExecutorFinish(queryDesc);
		else
			standard_ExecutorFinish(queryDesc);
	}
	PG_FINALLY();
	{
		if (prof)
			ft_prof_take_worker_tick();
		ft_usage_run_end(saved_usage_top);
		if (prof)
			ft_prof_leave(prof, saved_frames, saved_nframes);
		ft_instr_units = saved_units;
	}
	PG_END_TRY();

	/* nested queries may have added or dropped notes meanwhile */
	i = find_query_clock(queryDesc);
	if (i >= 0)
		ft_usage_derive(query_clocks[i].derived);
	if (i >= 0 && query_clocks[i].tsc && !query_clocks[i].checked)
		check_clocks(&query_clocks[i]);
}

/*
 * auto_explain cannot print EXPLAIN (CLOCK_SOURCE)'s Node Timing line, so
 * a profiled query that switched to ticks and ran at least
 * auto_explain.log_min_duration (by auto_explain's own clock) gets that
 * line in the server log on its own.  A query auto_explain did not sample
 * is never profiled.
 */
static void
log_profile_for_auto_explain(QueryDesc *queryDesc, const FtQueryClock *qc)
{
	const char *min_duration;
	int			min_ms;
	double		ms;
	StringInfoData buf;

	if (qc->prof == NULL || !qc->prof->switched || explain_depth > 0 ||
		!ft_query_elapsed_ms(queryDesc, &ms))
		return;
	min_duration = GetConfigOption("auto_explain.log_min_duration", true, false);
	if (min_duration == NULL ||
		!parse_int(min_duration, &min_ms, GUC_UNIT_MS, NULL) || min_ms < 0)
		return;
	if (ms < (double) min_ms)
		return;
	initStringInfo(&buf);
	ft_prof_describe(qc->prof, &buf);
	ereport(LOG,
			(errmsg("profiled node timing in the plan of this query: %s", buf.data),
			 errhidestmt(true)));
	pfree(buf.data);
}

/*
 * ExecutorEnd hook.  The query's note stays through the hooks below it: on
 * 19, auto_explain prints its plan from its own ExecutorEnd, with the
 * extension options auto_explain.log_extension_options names
 * (CLOCK_SOURCE), which read the note.  Freeing the executor state, in
 * standard_ExecutorEnd, forgets the note and the query's frames
 * (query_memory_gone); forgetting them again here covers a hook that
 * ended the query without freeing its state (the note's key is only
 * compared, never dereferenced).
 */
static void
ft_ExecutorEnd(QueryDesc *queryDesc)
{
	int			i;
	const EState *estate = queryDesc->estate;

	/* a query ended inside a Hash Join's call: a build left open ends */
	ft_prof_build_end_due(ft_prof_tsc);
	i = find_query_clock(queryDesc);
	if (i >= 0)
		log_profile_for_auto_explain(queryDesc, &query_clocks[i]);

	if (prev_ExecutorEnd)
		prev_ExecutorEnd(queryDesc);
	else
		standard_ExecutorEnd(queryDesc);

	ft_usage_forget_query(estate);
	forget_query_clock(queryDesc);
}

/*
 * Just before a top-level transaction commits (deferred triggers and
 * portals are done by then), compare the clocks over the short queries
 * still to be compared, where reporting and falling back may allocate;
 * after a commit nothing should.  An abort is no place to allocate
 * either: it only takes the stamp that ends them, and the next comparison
 * compares them up to it (compare_pending_window).  At the end no
 * executor is left running, so no note or frame can be in use: a
 * backstop to the memory callbacks.
 */
static void
ft_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_PRE_COMMIT ||
		event == XACT_EVENT_PARALLEL_PRE_COMMIT ||
		event == XACT_EVENT_PRE_PREPARE)
		compare_pending_now();
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT ||
		event == XACT_EVENT_COMMIT || event == XACT_EVENT_PARALLEL_COMMIT ||
		event == XACT_EVENT_PREPARE)
	{
		n_query_clocks = 0;
		if (event != XACT_EVENT_ABORT && event != XACT_EVENT_PARALLEL_ABORT)
		{
			window_pending = false;
			window_end_taken = false;
		}
		else if (window_pending && !window_end_taken)
		{
			window_end_slack_ns = paired_stamp(&window_end_tsc,
											   &window_end_wall_ns);
			window_end_taken = true;
		}
	}
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
	{
#ifdef FASTTIME_FAULT_INJECTION
		ft_prof_fault_abort_tick();
#endif
		ft_prof_reset();
		ft_usage_reset();
	}
}

/* The ProcessUtility hook before ours, or the standard one. */
static void
next_ProcessUtility(PlannedStmt *pstmt, const char *queryString,
					bool readOnlyTree, ProcessUtilityContext context,
					ParamListInfo params, QueryEnvironment *queryEnv,
					DestReceiver *dest, QueryCompletion *qc)
{
	if (prev_ProcessUtility)
		prev_ProcessUtility(pstmt, queryString, readOnlyTree, context, params,
							queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);
}

/* ProcessUtility hook: count the EXPLAINs under way (inside_explain). */
static void
ft_ProcessUtility(PlannedStmt *pstmt, const char *queryString,
				  bool readOnlyTree, ProcessUtilityContext context,
				  ParamListInfo params, QueryEnvironment *queryEnv,
				  DestReceiver *dest, QueryCompletion *qc)
{
	/* run inside a Hash Join's call: a build left open ends (ExecutorRun) */
	ft_prof_build_end_due(ft_prof_tsc);
	if (!IsA(pstmt->utilityStmt, ExplainStmt))
	{
		next_ProcessUtility(pstmt, queryString, readOnlyTree, context,
							params, queryEnv, dest, qc);
		return;
	}
	if (explain_depth == 0)
		explain_warned = false;
	explain_depth++;
	PG_TRY();
	{
		next_ProcessUtility(pstmt, queryString, readOnlyTree, context,
							params, queryEnv, dest, qc);
	}
	PG_FINALLY();
	{
		explain_depth--;
	}
	PG_END_TRY();
}

/* Chain our hooks in front of whatever was installed before us. */
void
ft_install_executor_hooks(void)
{
	ft_wrappers_learn_stock();
	ft_wrappers_init();

	prev_ExecutorStart = ExecutorStart_hook;
	ExecutorStart_hook = ft_ExecutorStart;
	prev_ExecutorRun = ExecutorRun_hook;
	ExecutorRun_hook = ft_ExecutorRun;
	prev_ExecutorFinish = ExecutorFinish_hook;
	ExecutorFinish_hook = ft_ExecutorFinish;
	prev_ExecutorEnd = ExecutorEnd_hook;
	ExecutorEnd_hook = ft_ExecutorEnd;
	prev_ProcessUtility = ProcessUtility_hook;
	ProcessUtility_hook = ft_ProcessUtility;
	RegisterXactCallback(ft_xact_callback, NULL);
}
