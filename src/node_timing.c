/*-------------------------------------------------------------------------
 *
 * node_timing.c
 *	  Executor hooks that time plan nodes with the TSC.
 *
 * Stock PostgreSQL times a node by pointing its ExecProcNode at
 * ExecProcNodeInstr, which brackets each call with InstrStartNode and
 * InstrStopNode, each reading clock_gettime().  When the TSC is in effect
 * and a query asks for per-node timing, we point every timed node at
 * ft_exec_proc_node_instr instead: the same bookkeeping, with two RDTSC
 * reads held in local variables and the elapsed nanoseconds added to the
 * node's counter.  Everything downstream (InstrEndLoop, InstrAggNode,
 * parallel workers' shared instrumentation, EXPLAIN, auto_explain) reads
 * that counter exactly as it would a stock one.
 *
 * Places that call InstrStartNode/InstrStopNode themselves (Hash and bitmap
 * nodes under MultiExecProcNode, async requests) keep doing so with the
 * stock clock; we never touch instr->starttime, and both clocks add
 * nanoseconds to the same counter, so their sums stay consistent.
 *
 * Parallel hash join re-arms stock timing behind our back: it calls
 * ExecSetExecProcNode() when it learns it is parallel, in the leader during
 * the first call of the Gather above it and in workers after ExecutorStart.
 * Gather and Gather Merge nodes therefore get a wrapper that re-walks their
 * subtree after each (re)initialization, and workers re-walk the whole tree
 * in ExecutorRun.
 *
 * Finally, a TSC can misbehave in ways no start-up check sees (a reset, a
 * hypervisor changing its rate after live migration).  Each TSC-timed
 * query notes both clocks when it starts; when it finishes, a TSC that
 * disagrees with clock_gettime by more than 0.1 % draws a WARNING, and in
 * any case no node is left claiming more time than the query has taken.
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
#include "nodes/nodeFuncs.h"

#include "node_timing.h"

static ExecutorStart_hook_type prev_ExecutorStart = NULL;
static ExecutorRun_hook_type prev_ExecutorRun = NULL;
static ExecutorFinish_hook_type prev_ExecutorFinish = NULL;
static ExecutorEnd_hook_type prev_ExecutorEnd = NULL;

/*
 * A note for each instrumented query under way in this process (see
 * FtQueryClock in node_timing.h), from ExecutorStart to ExecutorEnd, innermost
 * last.  Beyond this many at once, queries go unnoted: their clocks are not
 * cross-checked and EXPLAIN (CLOCK_SOURCE) cannot say what timed them.
 */
#define FT_MAX_NESTED_QUERIES 32
static FtQueryClock query_clocks[FT_MAX_NESTED_QUERIES];
static int	n_query_clocks = 0;

/*
 * Both clocks read "at the same time": the TSC on either side of
 * clock_gettime, retried while the two TSC reads are far apart (an
 * interrupt, a page fault or preemption landed in between: a fresh
 * parallel worker's first clock_gettime faults in the vDSO page and can
 * lose its CPU for milliseconds).  The TSC stamp is their midpoint.
 */
#define FT_STAMP_TRIES			4
#define FT_STAMP_MAX_WIDTH_NS	20000

static void
paired_stamp(uint64 *tsc, int64 *wall_ns)
{
	for (int i = 0; i < FT_STAMP_TRIES; i++)
	{
		uint64		before = ft_node_ticks();
		int64		wall = ft_read_clock_gettime_ns();
		uint64		after = ft_node_ticks();

		*tsc = before + (after - before) / 2;
		*wall_ns = wall;
		if (after >= before &&
			ft_ticks_to_ns(&ft_conv, (int64) (after - before)) <= FT_STAMP_MAX_WIDTH_NS)
			break;
	}
}

/* tolerated disagreement between the clocks over one query */
#define FT_DRIFT_TOLERANCE_PPM	1000
#define FT_DRIFT_TOLERANCE_NS	50000

/* what this backend has done, for fasttime_status() */
FtNodeTimingStats ft_node_timing_stats;

/* the stock ExecProcNodeFirst and ExecProcNodeInstr, learned at run time */
static ExecProcNodeMtd stock_first = NULL;
static ExecProcNodeMtd stock_instr = NULL;
static bool stock_known = false;

static TupleTableSlot *ft_exec_proc_node_first(PlanState *node);
static TupleTableSlot *ft_exec_proc_node_instr(PlanState *node);
static TupleTableSlot *ft_exec_proc_node_gather(PlanState *node);
static bool ft_retime_walker(PlanState *ps, void *context);

/*
 * The rare case of ft_instr_time_add_ns (compat.h): an interval of a second
 * or more.  Saturates at the largest representable time.
 */
void
ft_instr_time_add_ns_slow(instr_time *t, uint64 ns)
{
#if FT_INSTR_TIME_IS_TIMESPEC
	uint64		sec = ns / NS_PER_SEC_COMPAT;
	long		nsec = (long) (ns % NS_PER_SEC_COMPAT);

	if (sec > (uint64) (PG_INT64_MAX / 2) - (uint64) t->tv_sec)
	{
		t->tv_sec = PG_INT64_MAX / 2;
		t->tv_nsec = 0;
		return;
	}
	t->tv_sec += (time_t) sec;
	t->tv_nsec += nsec;
	if (t->tv_nsec >= NS_PER_SEC_COMPAT)
	{
		t->tv_nsec -= NS_PER_SEC_COMPAT;
		t->tv_sec++;
	}
#else
	if (ns > (uint64) (PG_INT64_MAX - t->ticks))
		t->ticks = PG_INT64_MAX;
	else
		t->ticks += (int64) ns;
#endif
}

/*
 * A node method that returns no tuple; only used to learn the addresses of
 * the stock wrappers.
 */
static TupleTableSlot *
probe_exec_proc_node(PlanState *node)
{
	return NULL;
}

/*
 * Learn the addresses of execProcnode.c's static ExecProcNodeFirst and
 * ExecProcNodeInstr by running a dummy node through them once.  We need
 * them to recognise nodes that stock code has (re)armed, and to leave alone
 * any node some other extension has wrapped.  The dummy has
 * instrumentation without timer, buffer or WAL usage, so the stock
 * wrappers touch nothing outside it.
 */
static void
learn_stock_wrappers(void)
{
	PlanState	ps;
	Instrumentation instr;

	memset(&ps, 0, sizeof(ps));
	memset(&instr, 0, sizeof(instr));
	ps.instrument = &instr;
	ExecSetExecProcNode(&ps, probe_exec_proc_node);
	stock_first = ps.ExecProcNode;
	(void) ExecProcNode(&ps);
	stock_instr = ps.ExecProcNode;

	stock_known = (stock_first != NULL && stock_instr != NULL &&
				   stock_first != stock_instr &&
				   stock_first != probe_exec_proc_node &&
				   stock_instr != probe_exec_proc_node);
	if (!stock_known)
		ereport(WARNING,
				(errmsg("fasttime could not identify the executor's instrumentation wrappers"),
				 errdetail("Plan nodes will be timed by stock PostgreSQL with clock_gettime().")));
}

/*
 * The timed method for a node: Gather nodes need the variant that repairs
 * what parallel initialization undoes.
 */
static inline ExecProcNodeMtd
timed_method(PlanState *ps)
{
	if (IsA(ps, GatherState) || IsA(ps, GatherMergeState))
		return ft_exec_proc_node_gather;
	return ft_exec_proc_node_instr;
}

/*
 * First call of a timed node: the stack depth check stock
 * ExecProcNodeFirst does once per node, then the timed method for good.
 */
static TupleTableSlot *
ft_exec_proc_node_first(PlanState *node)
{
	check_stack_depth();
	node->ExecProcNode = timed_method(node);
	return node->ExecProcNode(node);
}

/*
 * The hot path: stock ExecProcNodeInstr with InstrStartNode and
 * InstrStopNode folded in, reading the TSC instead of clock_gettime().
 * No division, no system call, no branch on the clock in use.
 */
static TupleTableSlot *
ft_exec_proc_node_instr(PlanState *node)
{
	Instrumentation *instr = node->instrument;
	TupleTableSlot *result;
	uint64		start;
	uint64		stop;
	double		save_tuplecount;

	/* InstrStartNode */
	start = ft_node_ticks();
	if (instr->need_bufusage)
		instr->bufusage_start = pgBufferUsage;
	if (instr->need_walusage)
		instr->walusage_start = pgWalUsage;

	result = node->ExecProcNodeReal(node);

	/* InstrStopNode */
	save_tuplecount = instr->tuplecount;
	instr->tuplecount += TupIsNull(result) ? 0.0 : 1.0;
	stop = ft_node_ticks();
	ft_instr_time_add_ns(&instr->counter,
						 ft_ticks_to_ns(&ft_conv, (int64) (stop - start)));

	if (instr->need_bufusage)
		BufferUsageAccumDiff(&instr->bufusage,
							 &pgBufferUsage, &instr->bufusage_start);
	if (instr->need_walusage)
		WalUsageAccumDiff(&instr->walusage,
						  &pgWalUsage, &instr->walusage_start);

	/* Is this the first tuple of this cycle? */
	if (!instr->running)
	{
		instr->running = true;
		ft_instr_set_firsttuple(instr);
	}
	else if (instr->async_mode && save_tuplecount < 1.0)
		ft_instr_set_firsttuple(instr);

	return result;
}

/*
 * Gather and Gather Merge: timed like any node, but whenever a call
 * (re)initializes the parallel machinery, the subtree is walked again,
 * because a parallel hash join below has just re-armed stock timing.  Its
 * own leader-side first call has already run under stock timing by then;
 * that is one clock_gettime() pair, in the same units.
 */
static TupleTableSlot *
ft_exec_proc_node_gather(PlanState *node)
{
	bool		initialized;
	TupleTableSlot *result;

	if (IsA(node, GatherState))
		initialized = ((GatherState *) node)->initialized;
	else
		initialized = ((GatherMergeState *) node)->initialized;

	result = ft_exec_proc_node_instr(node);

	if (!initialized)
	{
		int			n = 0;

		(void) planstate_tree_walker(node, ft_retime_walker, &n);
		ereport(DEBUG1,
				(errmsg_internal("fasttime: %d plan nodes below %s re-armed for TSC timing after parallel start-up",
								 n, IsA(node, GatherState) ? "Gather" : "Gather Merge")));
	}
	return result;
}

/*
 * Point one node, and recursively its children, at the TSC wrappers.  Only
 * nodes that are timed and currently on a stock wrapper are touched, which
 * makes this idempotent and leaves other extensions' wrappers alone.
 */
static bool
ft_retime_walker(PlanState *ps, void *context)
{
	if (ps->instrument != NULL && ps->instrument->need_timer)
	{
		if (ps->ExecProcNode == stock_first)
		{
			ps->ExecProcNode = ft_exec_proc_node_first;
			(*(int *) context)++;
		}
		else if (ps->ExecProcNode == stock_instr)
		{
			ps->ExecProcNode = timed_method(ps);
			(*(int *) context)++;
		}
	}
	return planstate_tree_walker(ps, ft_retime_walker, context);
}

/*
 * Apply a walker to a whole query: the main tree and every subplan's tree.
 */
static void
walk_query(QueryDesc *queryDesc, bool (*walker) (PlanState *, void *),
		   void *context)
{
	ListCell   *lc;

	(void) walker(queryDesc->planstate, context);
	foreach(lc, queryDesc->estate->es_subplanstates)
	{
		PlanState  *sps = (PlanState *) lfirst(lc);

		if (sps != NULL)
			(void) walker(sps, context);
	}
}

/* Count the nodes of a query that are on the TSC wrappers. */
static bool
count_tsc_walker(PlanState *ps, void *context)
{
	if (ps->ExecProcNode == ft_exec_proc_node_first ||
		ps->ExecProcNode == ft_exec_proc_node_instr ||
		ps->ExecProcNode == ft_exec_proc_node_gather)
		(*(int *) context)++;
	return planstate_tree_walker(ps, count_tsc_walker, context);
}

/*
 * Retime a whole query, and say so at DEBUG1 for tests and the curious:
 * how many nodes this walk switched, and how many are TSC-timed in all.
 */
static void
ft_retime_query(QueryDesc *queryDesc, const char *when)
{
	int			switched = 0;
	int			n = 0;

	walk_query(queryDesc, ft_retime_walker, &switched);
	walk_query(queryDesc, count_tsc_walker, &n);
	ft_node_timing_stats.last_query_nodes = n;
	ereport(DEBUG1,
			(errmsg_internal("fasttime: %d plan nodes timed with the TSC in %s at %s (%d switched)",
							 n, IsParallelWorker() ? "parallel worker" : "backend",
							 when, switched)));
}

/*
 * Cap one node's accumulated time at the limit (seconds), for the
 * ExecutorFinish check.  Nodes below a Gather carry, in the leader, the
 * sum over all processes once workers have reported, so their limit is
 * multiplied by the number of processes.
 */
typedef struct CapContext
{
	double		limit;			/* seconds, for one process */
	double		processes;		/* processes whose times are summed here */
	int			capped;			/* nodes changed */
} CapContext;

static bool
cap_walker(PlanState *ps, void *context)
{
	CapContext *cap = (CapContext *) context;
	Instrumentation *instr = ps->instrument;
	double		saved_processes = cap->processes;
	bool		result;

	if (instr != NULL && instr->need_timer)
	{
		double		limit = cap->limit * cap->processes;
		double		current = INSTR_TIME_GET_DOUBLE(instr->counter);
		bool		changed = false;

		if (instr->total > limit)
		{
			instr->total = limit;
			changed = true;
		}
		if (instr->startup > instr->total)
			instr->startup = instr->total;
		if (current > limit - instr->total)
		{
			current = limit - instr->total;
			ft_instr_time_set_ns(&instr->counter, (uint64) (current * 1e9));
			changed = true;
		}
		if (instr->firsttuple > current)
			instr->firsttuple = current;
		if (changed)
			cap->capped++;
	}

	if (IsA(ps, GatherState))
		cap->processes += ((GatherState *) ps)->nworkers_launched;
	else if (IsA(ps, GatherMergeState))
		cap->processes += ((GatherMergeState *) ps)->nworkers_launched;
	result = planstate_tree_walker(ps, cap_walker, context);
	cap->processes = saved_processes;
	return result;
}

/* Does this query want TSC node timing? */
static bool
wants_tsc_timing(QueryDesc *queryDesc)
{
	return queryDesc->planstate != NULL &&
		queryDesc->estate != NULL &&
		(queryDesc->instrument_options & INSTRUMENT_TIMER) != 0 &&
		ft_effective_choice() == FT_CHOICE_TSC &&
		stock_known;
}

/*
 * ExecutorStart hook: after the plan tree exists (and whatever hook
 * before us has asked for instrumentation, as auto_explain does), switch
 * its timed nodes to the TSC, and note what timed the query and, when it
 * is the TSC, both clocks' start.
 */
static void
ft_ExecutorStart(QueryDesc *queryDesc, int eflags)
{
	bool		tsc = false;

	if (prev_ExecutorStart)
		prev_ExecutorStart(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);

	if ((eflags & EXEC_FLAG_EXPLAIN_ONLY) != 0 ||
		queryDesc->instrument_options == 0)
		return;

	if (wants_tsc_timing(queryDesc))
	{
		if (!IsParallelWorker())
			ft_publish_facts();
		ft_retime_query(queryDesc, "ExecutorStart");
		ft_node_timing_stats.queries++;
		tsc = true;
	}

	if (n_query_clocks < FT_MAX_NESTED_QUERIES)
	{
		FtQueryClock *qc = &query_clocks[n_query_clocks++];

		memset(qc, 0, sizeof(*qc));
		qc->queryDesc = queryDesc;
		qc->plannedstmt = queryDesc->plannedstmt;
		qc->nest_level = GetCurrentTransactionNestLevel();
		qc->setting = (FtClockSetting) ft_clock_setting;
		qc->node_timing = (queryDesc->instrument_options & INSTRUMENT_TIMER) != 0;
		qc->tsc = tsc;
		if (tsc)
		{
			qc->tsc_hz = ft_conv.hz;
			qc->tsc_hz_origin = ft_get_facts()->tsc_hz_origin;
			paired_stamp(&qc->tsc_start, &qc->wall_start_ns);
		}
	}
}

/*
 * ExecutorRun hook: in a parallel worker, ExecParallelInitializeWorker ran
 * between ExecutorStart and now and may have re-armed stock timing.
 */
static void
ft_ExecutorRun(FT_EXECUTORRUN_ARGS)
{
	if (IsParallelWorker() && wants_tsc_timing(queryDesc))
		ft_retime_query(queryDesc, "ExecutorRun");

	if (prev_ExecutorRun)
		FT_EXECUTORRUN_CALL(prev_ExecutorRun);
	else
		FT_EXECUTORRUN_CALL(standard_ExecutorRun);
}

/* Index of a query's note, or -1. */
static int
find_query_clock(QueryDesc *queryDesc)
{
	for (int i = n_query_clocks - 1; i >= 0; i--)
	{
		if (query_clocks[i].queryDesc == queryDesc)
			return i;
	}
	return -1;
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
 * ExecutorFinish hook: the plan has run (in a parallel worker, its
 * instrumentation is about to be reported to the leader).  Compare the
 * clocks over the whole query and cap node times at the elapsed time.
 */
static void
ft_ExecutorFinish(QueryDesc *queryDesc)
{
	int			i;

	if (prev_ExecutorFinish)
		prev_ExecutorFinish(queryDesc);
	else
		standard_ExecutorFinish(queryDesc);

	i = find_query_clock(queryDesc);
	if (i >= 0 && query_clocks[i].tsc && !query_clocks[i].checked)
	{
		FtQueryClock *qc = &query_clocks[i];
		uint64		tsc_end;
		int64		wall_end;
		int64		wall_ns;
		int64		tsc_delta;
		int64		tsc_ns;
		int64		tolerance;
		CapContext	cap;

		paired_stamp(&tsc_end, &wall_end);
		wall_ns = wall_end - qc->wall_start_ns;
		tsc_delta = (int64) (tsc_end - qc->tsc_start);
		tsc_ns = (int64) ft_ticks_to_ns(&ft_conv, tsc_delta);
		tolerance = FT_DRIFT_TOLERANCE_NS +
			wall_ns / (1000000 / FT_DRIFT_TOLERANCE_PPM);

		qc->checked = true;
		if (wall_ns < 0)
			wall_ns = 0;
		cap.limit = (double) wall_ns / 1e9;
		cap.processes = 1;
		cap.capped = 0;
		walk_query(queryDesc, cap_walker, &cap);

		if (tsc_delta < 0 || tsc_ns > wall_ns + tolerance ||
			tsc_ns < wall_ns - tolerance)
		{
			ft_node_timing_stats.disagreements++;
			ereport(WARNING,
					(errmsg("fasttime: the TSC disagreed with clock_gettime during this query"),
					 errdetail("Over %.3f ms of clock_gettime time the TSC advanced %s%.3f ms; %d plan node times were capped at the query's elapsed time.",
							   (double) wall_ns / 1e6,
							   tsc_delta < 0 ? "backwards, " : "",
							   (double) (tsc_delta < 0 ? (int64) ft_ticks_to_ns(&ft_conv, -tsc_delta) : tsc_ns) / 1e6,
							   cap.capped),
					 errhint("Node times from this query may be wrong. If this repeats, SET fasttime.clock_source = clock_gettime.")));
		}
	}
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
	{
		memmove(&query_clocks[i], &query_clocks[i + 1],
				sizeof(FtQueryClock) * (n_query_clocks - i - 1));
		n_query_clocks--;
	}

	if (prev_ExecutorEnd)
		prev_ExecutorEnd(queryDesc);
	else
		standard_ExecutorEnd(queryDesc);
}

/*
 * Forget the notes of queries that never reached ExecutorEnd because
 * their transaction failed.
 */
static void
ft_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
		n_query_clocks = 0;
}

/*
 * Likewise for a failed subtransaction (a PL/pgSQL EXCEPTION block): the
 * queries it started are gone, those of the enclosing levels go on.  Notes
 * are in start order, so the failed level's are on top.
 */
static void
ft_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
	{
		int			level = GetCurrentTransactionNestLevel();

		while (n_query_clocks > 0 &&
			   query_clocks[n_query_clocks - 1].nest_level >= level)
			n_query_clocks--;
	}
}

/* Chain our hooks in front of whatever was installed before us. */
void
ft_install_executor_hooks(void)
{
	learn_stock_wrappers();

	prev_ExecutorStart = ExecutorStart_hook;
	ExecutorStart_hook = ft_ExecutorStart;
	prev_ExecutorRun = ExecutorRun_hook;
	ExecutorRun_hook = ft_ExecutorRun;
	prev_ExecutorFinish = ExecutorFinish_hook;
	ExecutorFinish_hook = ft_ExecutorFinish;
	prev_ExecutorEnd = ExecutorEnd_hook;
	ExecutorEnd_hook = ft_ExecutorEnd;
	RegisterXactCallback(ft_xact_callback, NULL);
	RegisterSubXactCallback(ft_subxact_callback, NULL);
}
