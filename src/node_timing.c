/*-------------------------------------------------------------------------
 *
 * node_timing.c
 *	  Executor hooks: put instrumented queries on fasttime's node wrappers,
 *	  and keep a note of what timed each of them.
 *
 * When fasttime.clock_source is anything but clock_gettime, the
 * ExecutorStart hook (chained like auto_explain's, after whatever hook
 * before us asked for instrumentation) decides once per query how its
 * nodes are timed -- not at all (TIMING OFF), with the TSC, or with the
 * stock clock where the TSC is not in effect, every call or profiled -- and
 * puts every instrumented node on the wrapper specialized for that and for
 * its buffer and WAL needs (node_wrappers.c).  With clock_gettime, and for
 * a plan too small for any of that to pay (small_plan: the statements of
 * an OLTP server), the plan tree is left exactly as stock built it and
 * nothing of fasttime's runs for the query.
 *
 * Parallel hash join re-arms stock instrumentation behind our back: it
 * calls ExecSetExecProcNode() when it learns it is parallel, in the leader
 * during the first call of the Gather above it (the Gather wrappers handle
 * that) and in workers after ExecutorStart (so workers walk their tree
 * again in ExecutorRun).
 *
 * Each query on fasttime's wrappers, and the query of an EXPLAIN ANALYZE
 * whatever timed it, gets a note, from ExecutorStart until its
 * executor state goes away, whichever way that happens (ExecutorEnd, or
 * the memory of a failed portal or subtransaction being freed): what timed
 * it, for EXPLAIN (CLOCK_SOURCE); its time unit and profiled frames, made
 * current around its run and finish; and, when the TSC timed it, both
 * clocks at its start.  At ExecutorFinish the two clocks are compared over
 * the whole query.  If they disagree, EXPLAIN (CLOCK_SOURCE) says so and
 * the backend's first such query draws a WARNING (later ones a LOG line
 * at most every FT_DISAGREEMENT_LOG_NS, and after FT_FALLBACK_AFTER of
 * them the backend gives the TSC up), but no measured number is changed:
 * a tool that rewrites what it measured cannot be trusted even when the
 * clocks agree.
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

/*
 * The unit the node wrappers write times in, for the query running now
 * (compat.h).  Each query's is chosen at its ExecutorStart and made
 * current around its run and finish.
 */
FtInstrUnits ft_instr_units;

/*
 * ft_instr_units holds some query's units: set at the first instrumented
 * query's start, and from then on only swapped around runs and restored,
 * so that a run whose query has the units already in effect (nearly every
 * run) need not swap them.
 */
static bool ft_instr_units_set = false;

static ExecutorStart_hook_type prev_ExecutorStart = NULL;
static ExecutorRun_hook_type prev_ExecutorRun = NULL;
static ExecutorFinish_hook_type prev_ExecutorFinish = NULL;
static ExecutorEnd_hook_type prev_ExecutorEnd = NULL;
static ProcessUtility_hook_type prev_ProcessUtility = NULL;

/* EXPLAIN statements under way in this process (ft_ProcessUtility) */
static int	explain_depth = 0;

/*
 * The notes of the instrumented queries under way in this process, in
 * start order, in TopMemoryContext.
 */
static FtQueryClock *query_clocks = NULL;
static int	n_query_clocks = 0;
static int	max_query_clocks = 0;

/* tolerated disagreement between the clocks over one query */
#define FT_DRIFT_TOLERANCE_PPM	1000
#define FT_DRIFT_TOLERANCE_NS	50000

/*
 * Reporting disagreements of the clocks (report_disagreement): after a
 * backend's first, at most one LOG line this often, and after this many
 * the backend times plan nodes with clock_gettime for good.
 */
#define FT_DISAGREEMENT_LOG_NS	(10 * FT_NS_PER_SEC)
#define FT_FALLBACK_AFTER		3

/* clock_gettime of the last disagreement reported, and those not since */
static int64 last_disagreement_report_ns = 0;
static int64 disagreements_unreported = 0;

/* tries and the widest acceptable pair of reads, for paired_stamp */
#define FT_STAMP_TRIES			4
#define FT_STAMP_MAX_WIDTH_NS	20000

/*
 * The last stamp this process took, for query_start_stamp().  A stamp is
 * worth reusing only within FT_STAMP_REUSE_NS of it by the TSC, which is
 * less than the smallest tolerance of the comparison (FT_DRIFT_TOLERANCE_NS):
 * see query_start_stamp.
 */
#define FT_STAMP_REUSE_NS		40000
static bool last_stamp_valid = false;
static uint64 last_stamp_tsc;
static int64 last_stamp_wall_ns;

/*
 * The queries since the last stamp have not been compared yet: each was a
 * short query nested in another one (see check_clocks), and the next
 * comparison, which starts at the last stamp, covers them.
 */
static bool window_pending = false;
static uint64 last_window_tsc;
static int64 last_window_wall_ns;

static void compare_pending_window(uint64 tsc_end, int64 wall_end);

/*
 * Both clocks read "at the same time": the TSC on either side of
 * clock_gettime, retried while the two TSC reads are far apart (an
 * interrupt, a page fault or preemption landed in between: a fresh
 * parallel worker's first clock_gettime faults in the vDSO page and can
 * lose its CPU for milliseconds).  The TSC stamp is their midpoint.  A
 * stamp within the width is kept for query_start_stamp.
 */
static void
paired_stamp(uint64 *tsc, int64 *wall_ns)
{
#ifdef FASTTIME_FAULT_INJECTION
	ft_fault_stamps_taken++;
#endif
	for (int i = 0; i < FT_STAMP_TRIES; i++)
	{
		uint64		before = ft_node_ticks();
		int64		wall = ft_read_clock_gettime_ns();
		uint64		after = ft_node_ticks();

		*tsc = before + (after - before) / 2;
		*wall_ns = wall;
		if (after >= before &&
			ft_ticks_to_ns(&ft_conv, (int64) (after - before)) <= FT_STAMP_MAX_WIDTH_NS)
		{
			last_stamp_valid = true;
			last_stamp_tsc = *tsc;
			last_stamp_wall_ns = wall;
			return;
		}
	}
	last_stamp_valid = false;
}

/*
 * Both clocks at the start of a TSC-timed query.  A query started within
 * a few microseconds (by the TSC) of the last stamp this process took --
 * a statement of a PL/pgSQL loop, started just after its predecessor
 * ended -- starts from that stamp instead of taking a new one: the pair
 * costs two TSC reads and a clock_gettime (~50 ns on a kvm-clock guest),
 * as much as all the node timing of a one-row lookup.
 *
 * The query's comparison then covers the gap as well, never less than the
 * query: a disagreement of the clocks during the query is seen as before.
 * One inside the gap is seen too, but can only be small: a TSC that
 * jumped forward there still shows a gap under FT_STAMP_REUSE_NS, which
 * is below the tolerance of every comparison; one that jumped back by
 * more than the gap shows a negative gap and a new stamp is taken; one
 * that jumped back by almost exactly the time the process spent idle
 * (the only way a long real gap can look short) is a real disagreement
 * of the clocks, reported with the query that follows it.  A stamp taken
 * here while short queries are still to be compared compares them first.
 */
static void
query_start_stamp(uint64 *tsc, int64 *wall_ns)
{
	StaticAssertStmt(FT_STAMP_REUSE_NS < FT_DRIFT_TOLERANCE_NS,
					 "a reused stamp's gap must stay below the tolerance");

	if (last_stamp_valid)
	{
		uint64		now = ft_node_ticks();

		if (now >= last_stamp_tsc &&
			ft_ticks_to_ns(&ft_conv, (int64) (now - last_stamp_tsc)) <= FT_STAMP_REUSE_NS)
		{
			*tsc = last_stamp_tsc;
			*wall_ns = last_stamp_wall_ns;
#ifdef FASTTIME_FAULT_INJECTION
			ft_fault_stamps_reused++;
#endif
			return;
		}
	}
	paired_stamp(tsc, wall_ns);
	if (window_pending)
		compare_pending_window(*tsc, *wall_ns);
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
 * The executor state of a noted query is going away.  Normally
 * ExecutorEnd has already dropped the note; this catches the queries that
 * never get there: a failed portal, a query of a failed subtransaction.
 * No frame of the query may stay on the usage chain (usage.c).
 */
static void
query_memory_gone(void *arg)
{
	FtQueryMemory *qm = (FtQueryMemory *) arg;

	ft_usage_forget_query(qm->estate);
	forget_query_clock(qm->queryDesc);
}

/*
 * Add a note for a query, tied to the lifetime of its executor state.
 */
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

	/* every field set here: a memset of the note cost ~25 ns a query */
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
	qc->start_unread = false;
	return qc;
}

/* Number of notes held now, for fasttime_status() and its tests. */
int
ft_open_query_notes(void)
{
	return n_query_clocks;
}

/*
 * The clock in effect, for a query's start.  A query nested in an open one
 * takes the decision its outermost query took, while fasttime.clock_source
 * is the same: looking again (the kernel's clocksource at most once a
 * second, which costs a clock read whenever it is asked, and on 19 the
 * server's own clock) is for the next top-level query.  A statement of a
 * PL/pgSQL loop thus asks nothing; the kernel switching clocksource is
 * still seen within a second by every new top-level query, and a TSC that
 * stops agreeing with clock_gettime meanwhile by the clock cross-check,
 * whose fallback (ft_clock_fall_back) takes effect at the next query,
 * nested or not.
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
 * Is an EXPLAIN under way in this process (ft_ProcessUtility)?  Its plan
 * is about to be read node by node, and EXPLAIN (CLOCK_SOURCE) must be
 * able to say what timed it, so it is never left to stock as small, and
 * neither are the queries run inside it (a function's, in its plan).
 * Nothing at ExecutorStart tells an EXPLAIN's query from another: a
 * portal's QueryDesc has no receiver yet either.
 */
static inline bool
inside_explain(void)
{
	return explain_depth > 0;
}

/*
 * Is this a small plan, best left as stock built it?  Putting a plan on
 * fasttime's wrappers costs a fixed amount per query -- the walks over the
 * plan, the note, the run hooks' bookkeeping and, for the TSC, the clock
 * cross-check: on 18 about 360 instructions a one-row query (callgrind,
 * bench/results/2026-12-04-nested), ~0.1 us -- which the cheaper clock
 * pays back a call at a time: two reads a call, each 7 ns cheaper than
 * clock_gettime() where the TSC saves least (kind (b): fasttime_overhead()
 * reads 29 and 22 ns).  A plan of fewer than FT_SMALL_PLAN_CALLS
 * estimated node calls -- a one-row lookup, an UPDATE or INSERT of a row:
 * every statement of an OLTP server under auto_explain, nested or not --
 * cannot pay it back, and is timed by stock PostgreSQL at stock's cost,
 * with stock's numbers.  Except under EXPLAIN (inside_explain), in a
 * profiled run (a query inside one is profiled with it) and in a parallel
 * worker (its leader decided; parallel plans are not small anyway).
 * The estimate can be wrong; a plan that runs more calls than estimated
 * is then timed as stock would time it, never worse.
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
 * stock built it: with fasttime.clock_source = clock_gettime (unless
 * profiled timing is asked for), and for a small plan (small_plan).
 * Profiled timing is asked for by fasttime.node_timing,
 * or by a profiled run under way around this query (a query run inside a
 * profiled node is profiled with it); it is given only to a plan whose
 * estimated node calls make it pay (ft_prof_pays: otherwise the plan is
 * timed exactly, as with node_timing = exact, and *declined says so) and
 * in a backend that can arm its tick.
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
		/*
		 * With the clock of the profiled run under way, if any (a query
		 * inside it must credit the same clock), else the one in effect.
		 */
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

	/*
	 * clock_gettime is stock timing, unless profiled timing is asked for
	 * (and not declined)
	 */
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

static inline bool
timer_is_tsc(FtTimer timer)
{
	return ft_timer_is_tsc(timer);
}

/*
 * Put a query's nodes on the wrappers, and say so at DEBUG1 for tests and
 * the curious: how many nodes this walk moved, and how many are on
 * fasttime's wrappers in all (each node counted once, subplans included).
 */
static int
wrap_query(QueryDesc *queryDesc, FtTimer timer, const char *when)
{
	int			switched;
	int			n;
	int			max_id;

	n = ft_wrap_query_nodes(queryDesc->planstate,
							queryDesc->estate->es_subplanstates,
							timer, &switched, &max_id);
	if (timer_is_tsc(timer))
		ft_node_timing_stats.last_query_nodes = n;
	if (!message_level_is_interesting(DEBUG1))
		return max_id;
	if (timer_is_tsc(timer))
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
 * ExecutorStart hook: after the plan tree exists (and whatever hook
 * before us has asked for instrumentation, as auto_explain does), put its
 * instrumented nodes on fasttime's wrappers and note how the query is
 * timed.
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

	if (prev_ExecutorStart)
		prev_ExecutorStart(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);

	if ((eflags & EXEC_FLAG_EXPLAIN_ONLY) != 0 ||
		queryDesc->instrument_options == 0 ||
		queryDesc->estate == NULL)
		return;

	wrapped = choose_timer(queryDesc, &timer, &declined, &est_calls);
	if (wrapped)
	{
		if (timer_is_tsc(timer))
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

	/*
	 * A query left as stock built it needs no note, unless EXPLAIN
	 * (CLOCK_SOURCE) may ask what timed it: then nothing of fasttime's runs
	 * for it at all.
	 */
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
	qc->tsc = wrapped && timer_is_tsc(timer);
	if (wrapped && ft_timer_is_profiled(timer))
		qc->prof = ft_prof_query_create(queryDesc->planstate,
										queryDesc->estate->es_subplanstates,
										max_id + 1, timer_is_tsc(timer),
										queryDesc->estate->es_query_cxt);
	if (qc->tsc)
	{
		qc->tsc_hz = ft_conv.hz;
		qc->tsc_hz_origin = ft_get_facts()->tsc_hz_origin;
		if (n_query_clocks > 1 && last_stamp_valid && !ft_timer_is_profiled(timer))
		{
			/*
			 * Nested in an open query: start from the last stamp without
			 * reading the TSC; check_clocks judges the gap with the rest
			 * (nested_start_stamp).
			 */
			qc->tsc_start = last_stamp_tsc;
			qc->wall_start_ns = last_stamp_wall_ns;
			qc->start_unread = true;
#ifdef FASTTIME_FAULT_INJECTION
			ft_fault_stamps_reused++;
#endif
		}
		else
			query_start_stamp(&qc->tsc_start, &qc->wall_start_ns);
	}
}

/*
 * Does a run of this query on fasttime's wrappers need nothing from the
 * run hooks?  True for an exact-timed query none of whose nodes has a
 * frame (no buffer or WAL counts: auto_explain's default), whose time
 * unit is the one in effect, outside a parallel worker (which walks its
 * tree again at each run): its wrappers link nothing, so there is no
 * chain to restore and no frame to make current, and the run is left to
 * the executor with no PG_TRY around it -- which, with the swaps and the
 * snapshot of the usage counters, cost about as much as the node timing
 * of a one-row lookup.
 */
static inline bool
ft_run_needs_nothing(const FtQueryClock *qc)
{
	return qc->prof == NULL && !qc->has_frames && !IsParallelWorker() &&
		ft_instr_units_same(&qc->units, &ft_instr_units);
}

/*
 * ExecutorRun hook: make the query's time unit (and, when profiled, its
 * frames) current while it runs.  In
 * a parallel worker, ExecParallelInitializeWorker ran between ExecutorStart
 * and now and may have re-armed stock instrumentation: walk again.
 */
static void
ft_ExecutorRun(FT_EXECUTORRUN_ARGS)
{
	int			i = find_query_clock(queryDesc);
	FtInstrUnits saved_units;
	FtProfQuery *volatile prof;
	FtProfFrame **saved_frames = NULL;
	uint32		saved_nframes = 0;
	FtUsageFrame *saved_usage_top;

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

/*
 * The note of the query running a plan, for EXPLAIN (CLOCK_SOURCE), which
 * prints after the query has finished but before ExecutorEnd; NULL when
 * the query was not noted.
 */
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
 * the tolerance: 50 us, for the reads' own spread and a stamp reused
 * across a short gap, plus 0.1 %, for the TSC frequency's error.
 */
static bool
clocks_disagree(uint64 tsc_start, int64 wall_start, uint64 tsc_end,
				int64 wall_end, int64 *wall_ns, int64 *tsc_ns)
{
	int64		tsc_delta = (int64) (tsc_end - tsc_start);
	int64		tolerance;

	*wall_ns = wall_end - wall_start;
	*tsc_ns = tsc_delta < 0 ? -(int64) ft_ticks_to_ns(&ft_conv, -tsc_delta) :
		(int64) ft_ticks_to_ns(&ft_conv, tsc_delta);
	tolerance = FT_DRIFT_TOLERANCE_NS +
		*wall_ns / (1000000 / FT_DRIFT_TOLERANCE_PPM);
	return *tsc_ns > *wall_ns + tolerance || *tsc_ns < *wall_ns - tolerance;
}

/*
 * Report a disagreement of the clocks, found by a query's comparison
 * (check_clocks) or by that of short nested queries left for later
 * (window: compare_pending_window); wall_end is the comparison's end by
 * clock_gettime.  Never touches a measured number.
 *
 * Where the clocks disagree once they tend to go on disagreeing (a
 * virtual machine live-migrated to a host whose TSC runs at another rate:
 * then every query of every session does), and under auto_explain a
 * WARNING goes to applications that never asked for EXPLAIN.  So the
 * client hears of it once per backend: the first query that disagrees
 * draws the WARNING (in a parallel worker: if its leader had reported
 * none when the worker started, so several processes of that first query
 * may each warn; short nested queries, which are over when compared, are
 * reported to the server log only, as before).  Later disagreements go to
 * the server log only, at most one LOG line every FT_DISAGREEMENT_LOG_NS,
 * each saying how many were left out since the last report.  At the
 * FT_FALLBACK_AFTER-th, the backend gives the TSC up for good
 * (ft_clock_fall_back, whose LOG line reports this one), and its later
 * queries, parallel workers included, are timed with clock_gettime.  A
 * worker never falls back by itself: it lives for one query.
 */
static void
report_disagreement(int64 wall_ns, int64 tsc_ns, int64 wall_end, bool window)
{
	int64		n = ++ft_node_timing_stats.disagreements;
	int			fallback_after = FT_FALLBACK_AFTER;
	bool		reported = false;

#ifdef FASTTIME_FAULT_INJECTION
	if (ft_fault_fallback_after > 0)
		fallback_after = ft_fault_fallback_after;
#endif
	if (!window && !ft_clock_backend_disagreed())
	{
		ereport(WARNING,
				(errmsg("fasttime: the TSC disagreed with clock_gettime during this query"),
				 errdetail("Over %.3f ms of clock_gettime time, the TSC advanced %.3f ms. The plan node times of this query were taken with the TSC and are shown as measured.",
						   (double) wall_ns / 1e6, (double) tsc_ns / 1e6),
				 errhint("Node times from this query may be wrong. If this repeats, SET fasttime.clock_source = clock_gettime.")));
		ft_clock_disagreed();
		reported = true;
	}
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
					 errdetail("Over %.3f ms of clock_gettime time, the TSC advanced %.3f ms in this parallel worker. The plan node times of that query were taken with the TSC and are shown as measured. Its leader has reported a disagreement to its client already.",
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
 * Compare the clocks over the short queries whose comparison was left for
 * later (check_clocks), from the last stamp to a new one taken before any
 * other query started from it.  A disagreement there is reported to the
 * server log (report_disagreement): those queries are over.
 */
static void
compare_pending_window(uint64 tsc_end, int64 wall_end)
{
	int64		wall_ns;
	int64		tsc_ns;

	window_pending = false;
	if (clocks_disagree(last_window_tsc, last_window_wall_ns, tsc_end, wall_end,
						&wall_ns, &tsc_ns))
		report_disagreement(wall_ns, tsc_ns, wall_end, true);
}

/*
 * Compare the clocks over a TSC-timed query.  On disagreement, remember it
 * for EXPLAIN (CLOCK_SOURCE) and report it (report_disagreement: once to
 * the client, then sparingly to the server log); never touch a measured
 * number.
 *
 * A short query nested in another one that is still open (a statement of
 * a PL/pgSQL function, under auto_explain with log_nested_statements) is
 * not compared on its own: while the TSC says less than FT_STAMP_REUSE_NS
 * have passed since the stamp it started from, its comparison is left to
 * the next one, which starts from that same stamp -- at the end of the
 * next query that is not so short, at the start of the next query that
 * takes a stamp of its own, and at the latest at the end of the outermost
 * query, which is always compared, or of the transaction.  The pair of
 * reads a comparison takes costs as much as the node timing of a one-row
 * lookup.  Nothing goes unseen: a TSC that jumped forward by more than
 * the tolerance during the query makes it look longer than
 * FT_STAMP_REUSE_NS and it is compared at once; one that jumped back
 * makes it look negative (compared at once) or shorter than it was, by
 * the jump, which the comparison that follows sees whole.
 */
static void
check_clocks(FtQueryClock *qc)
{
	uint64		tsc_end;
	int64		wall_end;
	int64		wall_ns;
	int64		tsc_ns;

	if (n_query_clocks > 1 && last_stamp_valid &&
		last_stamp_tsc == qc->tsc_start && last_stamp_wall_ns == qc->wall_start_ns)
	{
		/*
		 * The TSC as the query's last exact call left it (a later read is
		 * only needed when no call of this process read it since the
		 * query started from the stamp), which bounds every read its nodes
		 * took, and which is no earlier than its start.
		 */
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
			}
#ifdef FASTTIME_FAULT_INJECTION
			ft_fault_checks_deferred++;
#endif
			return;
		}
	}

	paired_stamp(&tsc_end, &wall_end);
	/* this comparison starts no later than a pending window: it covers it */
	window_pending = false;
	qc->checked = true;
	if (clocks_disagree(qc->tsc_start, qc->wall_start_ns, tsc_end, wall_end,
						&wall_ns, &tsc_ns))
	{
		qc->disagreed = true;
		report_disagreement(wall_ns, tsc_ns, wall_end, false);
	}
	qc->wall_ns = wall_ns;
	qc->tsc_ns = tsc_ns;
}

/*
 * Compare the clocks over the short queries still to be compared, if any:
 * at the end of a transaction, when no query is left open to do it.
 */
static void
compare_pending_now(void)
{
	uint64		tsc;
	int64		wall;

	if (!window_pending)
		return;
	paired_stamp(&tsc, &wall);
	compare_pending_window(tsc, wall);
}

/*
 * ExecutorFinish hook: the plan's last nodes (deferred ModifyTable work)
 * run here, under the query's time unit and frames.  Afterwards the plan
 * has run (in a parallel worker, its instrumentation is about to be
 * reported to the leader): compare the clocks over the whole query.
 */
static void
ft_ExecutorFinish(QueryDesc *queryDesc)
{
	int			i = find_query_clock(queryDesc);
	FtInstrUnits saved_units;
	FtProfQuery *volatile prof;
	FtProfFrame **saved_frames = NULL;
	uint32		saved_nframes = 0;
	FtUsageFrame *saved_usage_top;

	if (i < 0 || !query_clocks[i].wrapped)
	{
		if (prev_ExecutorFinish)
			prev_ExecutorFinish(queryDesc);
		else
			standard_ExecutorFinish(queryDesc);
		return;
	}

	/*
	 * No node of the plan runs here unless it has secondary ModifyTable
	 * nodes to run to completion (a WITH ... UPDATE whose RETURNING rows
	 * were not all read); AFTER triggers' queries are queries of their
	 * own.  Then this run needs nothing of ours: in particular a profiled
	 * query neither makes its frames current nor arms the tick again.
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
 * auto_explain logs a plan whose run took at least its log_min_duration,
 * with node times that, in a profiled query, are estimates; it passes no
 * extension option, so EXPLAIN (CLOCK_SOURCE)'s Node Timing line cannot
 * be in what it logs, and before 18 there is no such option at all.  So
 * when a profiled query (one that switched to ticks) ends outside EXPLAIN
 * after running at least that long, by the clock auto_explain reads
 * (the query-level instrumentation it allocates), the server log gets the
 * same line on its own: how long the run was timed exactly, the ticks,
 * and the error of a node holding 10 % of the time.  Whether auto_explain
 * sampled the query needs no test: it asks for no instrumentation of a
 * query it does not sample, and such a query is never profiled.
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
 * ExecutorEnd hook: the query is over; forget its note.  Only its own: a
 * cursor may end while queries started after it are still open.
 */
static void
ft_ExecutorEnd(QueryDesc *queryDesc)
{
	int			i = find_query_clock(queryDesc);

	if (i >= 0)
		log_profile_for_auto_explain(queryDesc, &query_clocks[i]);
	if (i >= 0 && query_clocks[i].wrapped)
		ft_usage_forget_query(queryDesc->estate);
	forget_query_clock(queryDesc);

	if (prev_ExecutorEnd)
		prev_ExecutorEnd(queryDesc);
	else
		standard_ExecutorEnd(queryDesc);
}

/*
 * At the end of a top-level transaction no executor is left running
 * (holdable cursors have been run to completion before commit), so any
 * note still here belongs to a query whose memory is going too.  The
 * memory callbacks catch those already; this is a backstop.
 */
static void
ft_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT ||
		event == XACT_EVENT_COMMIT || event == XACT_EVENT_PARALLEL_COMMIT ||
		event == XACT_EVENT_PREPARE)
	{
		n_query_clocks = 0;
		compare_pending_now();
	}
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
	{
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

/*
 * ProcessUtility hook: count the EXPLAIN statements under way (see
 * inside_explain).  Any other utility statement passes straight through.
 */
static void
ft_ProcessUtility(PlannedStmt *pstmt, const char *queryString,
				  bool readOnlyTree, ProcessUtilityContext context,
				  ParamListInfo params, QueryEnvironment *queryEnv,
				  DestReceiver *dest, QueryCompletion *qc)
{
	if (!IsA(pstmt->utilityStmt, ExplainStmt))
	{
		next_ProcessUtility(pstmt, queryString, readOnlyTree, context,
							params, queryEnv, dest, qc);
		return;
	}
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
