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
 * its buffer and WAL needs (node_wrappers.c).  With clock_gettime the plan
 * tree is left exactly as stock built it.
 *
 * Parallel hash join re-arms stock instrumentation behind our back: it
 * calls ExecSetExecProcNode() when it learns it is parallel, in the leader
 * during the first call of the Gather above it (the Gather wrappers handle
 * that) and in workers after ExecutorStart (so workers walk their tree
 * again in ExecutorRun).
 *
 * Each instrumented query gets a note, from ExecutorStart until its
 * executor state goes away, whichever way that happens (ExecutorEnd, or
 * the memory of a failed portal or subtransaction being freed): what timed
 * it, for EXPLAIN (CLOCK_SOURCE); its time unit and profiled frames, made
 * current around its run and finish; and, when the TSC timed it, both
 * clocks at its start.  At ExecutorFinish the two clocks are compared over
 * the whole query.  If they disagree, the query draws a WARNING and EXPLAIN
 * (CLOCK_SOURCE) says so, but no measured number is changed: a tool that
 * rewrites what it measured cannot be trusted even when the clocks agree.
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
#include "utils/memutils.h"

#include "fault_injection.h"
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

static ExecutorStart_hook_type prev_ExecutorStart = NULL;
static ExecutorRun_hook_type prev_ExecutorRun = NULL;
static ExecutorFinish_hook_type prev_ExecutorFinish = NULL;
static ExecutorEnd_hook_type prev_ExecutorEnd = NULL;

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

/* tries and the widest acceptable pair of reads, for paired_stamp */
#define FT_STAMP_TRIES			4
#define FT_STAMP_MAX_WIDTH_NS	20000

/*
 * The last stamp this process took, for query_start_stamp().  A stamp is
 * worth reusing only within FT_STAMP_REUSE_NS of it by the TSC, which is
 * less than the smallest tolerance of the comparison (FT_DRIFT_TOLERANCE_NS):
 * see query_start_stamp.
 */
#define FT_STAMP_REUSE_NS		20000
static bool last_stamp_valid = false;
static uint64 last_stamp_tsc;
static int64 last_stamp_wall_ns;

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
 * ended and was compared -- starts from that stamp instead of taking a
 * new one: the pair costs two TSC reads and a clock_gettime (~50 ns on a
 * kvm-clock guest), as much as all the node timing of a one-row lookup.
 *
 * The query's comparison then covers the gap as well, never less than the
 * query: a disagreement of the clocks during the query is seen as before.
 * One inside the gap is seen too, but can only be small: a TSC that
 * jumped forward there still shows a gap under FT_STAMP_REUSE_NS, which
 * is below the tolerance of every comparison; one that jumped back by
 * more than the gap shows a negative gap and a new stamp is taken; one
 * that jumped back by almost exactly the time the process spent idle
 * (the only way a long real gap can look short) is a real disagreement
 * of the clocks, reported with the query that follows it.
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
	return qc;
}

/* Number of notes held now, for fasttime_status() and its tests. */
int
ft_open_query_notes(void)
{
	return n_query_clocks;
}

/*
 * How this query's nodes are to be timed, or false to leave the plan as
 * stock built it.
 */
static bool
choose_timer(QueryDesc *queryDesc, FtTimer *timer)
{
	bool		profiled = ft_node_timing == FT_NODE_TIMING_PROFILE || ft_prof_active();

	/* clock_gettime is stock timing, unless profiled timing is asked for */
	if ((ft_clock_setting == FT_SETTING_CLOCK_GETTIME && !profiled) ||
		!ft_wrappers_stock_known() ||
		queryDesc->planstate == NULL || queryDesc->estate == NULL)
		return false;
	if ((queryDesc->instrument_options & INSTRUMENT_TIMER) == 0)
		*timer = FT_TIMER_NONE;
	else if (profiled)
	{
		/*
		 * Profiled: with the clock of the profiled run under way, if any
		 * (a query inside it must credit the same clock), else the one in
		 * effect.
		 */
		bool		tsc = ft_prof_active() ? ft_prof_clock_is_tsc() :
			ft_effective_choice() == FT_CHOICE_TSC;

		*timer = tsc ? FT_TIMER_PROF_PHASE_TSC : FT_TIMER_PROF_PHASE_CLOCK_GETTIME;
	}
	else if (ft_effective_choice() == FT_CHOICE_TSC)
		*timer = ft_ordered_reads == FT_READS_BOTH ? FT_TIMER_TSC_ORDERED :
			ft_ordered_reads == FT_READS_START ? FT_TIMER_TSC_ORDERED_START :
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

	if (prev_ExecutorStart)
		prev_ExecutorStart(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);

	if ((eflags & EXEC_FLAG_EXPLAIN_ONLY) != 0 ||
		queryDesc->instrument_options == 0 ||
		queryDesc->estate == NULL)
		return;

	wrapped = choose_timer(queryDesc, &timer);
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
									   ft_timer_is_profiled(timer));
		ft_node_timing_stats.last_query_derived = derived ? derived->n : 0;
		max_id = wrap_query(queryDesc, timer, "ExecutorStart");
	}

	qc = note_query(queryDesc);
	ft_instr_units_choose(&qc->units, &ft_conv);
	qc->setting = (FtClockSetting) ft_clock_setting;
	qc->node_timing = (queryDesc->instrument_options & INSTRUMENT_TIMER) != 0;
	qc->wrapped = wrapped;
	qc->timer = timer;
	qc->derived = derived;
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
		query_start_stamp(&qc->tsc_start, &qc->wall_start_ns);
	}
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

	if (i < 0 || !query_clocks[i].wrapped)
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
 * Compare the clocks over a TSC-timed query.  On disagreement, warn and
 * remember it for EXPLAIN (CLOCK_SOURCE); never touch a measured number.
 */
static void
check_clocks(FtQueryClock *qc)
{
	uint64		tsc_end;
	int64		wall_end;
	int64		wall_ns;
	int64		tsc_delta;
	int64		tsc_ns;
	int64		tolerance;

	paired_stamp(&tsc_end, &wall_end);
	wall_ns = wall_end - qc->wall_start_ns;
	tsc_delta = (int64) (tsc_end - qc->tsc_start);
	tsc_ns = tsc_delta < 0 ? -(int64) ft_ticks_to_ns(&ft_conv, -tsc_delta) :
		(int64) ft_ticks_to_ns(&ft_conv, tsc_delta);
	tolerance = FT_DRIFT_TOLERANCE_NS +
		wall_ns / (1000000 / FT_DRIFT_TOLERANCE_PPM);

	qc->checked = true;
	qc->wall_ns = wall_ns;
	qc->tsc_ns = tsc_ns;
	if (tsc_ns > wall_ns + tolerance || tsc_ns < wall_ns - tolerance)
	{
		qc->disagreed = true;
		ft_node_timing_stats.disagreements++;
		ereport(WARNING,
				(errmsg("fasttime: the TSC disagreed with clock_gettime during this query"),
				 errdetail("Over %.3f ms of clock_gettime time, the TSC advanced %.3f ms. The plan node times of this query were taken with the TSC and are shown as measured.",
						   (double) wall_ns / 1e6, (double) tsc_ns / 1e6),
				 errhint("Node times from this query may be wrong. If this repeats, SET fasttime.clock_source = clock_gettime.")));
	}
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
 * ExecutorEnd hook: the query is over; forget its note.  Only its own: a
 * cursor may end while queries started after it are still open.
 */
static void
ft_ExecutorEnd(QueryDesc *queryDesc)
{
	int			i = find_query_clock(queryDesc);

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
		n_query_clocks = 0;
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
	{
		ft_prof_reset();
		ft_usage_reset();
	}
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
	RegisterXactCallback(ft_xact_callback, NULL);
}
