/*-------------------------------------------------------------------------
 *
 * node_wrappers.c
 *	  The per-node instrumentation wrappers: fasttime's hot path.
 *
 * Stock PostgreSQL instruments a plan node by pointing its ExecProcNode at
 * ExecProcNodeInstr, which calls InstrStartNode and InstrStopNode around
 * every call: out-of-line functions that test need_timer, need_bufusage
 * and need_walusage each time, read clock_gettime(), copy the whole
 * BufferUsage at the start and run BufferUsageAccumDiff at the end.  Here
 * each combination of what a node needs (timer kind, buffers, WAL, Gather
 * or not) is its own function, specialized by the compiler from one
 * always-inline body, and the executor hook picks one per node at
 * executor start.  No wrapper tests an option per call, divides, or makes
 * a system call (except the clock_gettime timers, which are the stock
 * clock on purpose).
 *
 * What each wrapper computes is exactly what stock's would:
 *
 * - rows, loops and the first-tuple time: the same code as InstrStopNode,
 *   including the async_mode rule;
 * - buffer and WAL usage: instead of snapshotting pgBufferUsage at the
 *   start and adding (end - start) at the end, the wrapper subtracts the
 *   global counters from the node's totals at the start and adds them at
 *   the end.  In two's complement that is the same sum, lane by lane (see
 *   compat.h), and it needs no snapshot: half the memory traffic, and
 *   plain vector code.  Between the two halves of a call the node's totals
 *   hold an intermediate value, but nothing reads a node's totals while
 *   the node is inside a call: EXPLAIN, auto_explain, InstrEndLoop,
 *   InstrAggNode and parallel workers' reporting all run when it is not;
 *   ExecShutdownNode's own InstrStartNode/InstrStopNode pair, Hash and
 *   bitmap nodes under MultiExecProcNode and async requests run their
 *   stock start/stop around calls of their own and add to the same
 *   totals.  A call that never returns (an error) leaves its query's
 *   instrumentation half-updated, which nothing reads: the query is being
 *   abandoned, and a failed query prints no plan;
 * - time: two RDTSC and one multiply (the TSC timers), or the stock clock
 *   with stock arithmetic (the clock_gettime timers, for machines where
 *   the TSC is not in effect but the cheaper bookkeeping still helps).
 *   Times are written in the unit instr_time has for the query
 *   (FtInstrUnits in compat.h: nanoseconds, or on PostgreSQL 19 with the
 *   server's TSC clock in effect raw TSC ticks, which the server converts),
 *   by a multiply chosen at executor start.
 *
 * The vector code for buffer and WAL usage comes in three builds of the
 * same source (portable, AVX2, AVX-512), chosen once per process from
 * CPUID by ft_wrappers_init().
 *
 * Sampled timing (fasttime.timing_sample_interval = N > 1) times each node
 * at a rate of its own, between every call and 1 in N.  Every node starts
 * by timing every call; from what its timed calls have measured (their
 * mean and spread) it then chooses, every few timed calls, the rate of its
 * next calls (ft_sample_choose_level): low enough that timing costs at
 * most FT_SAMPLE_COST_SHARE of the node's own time, but never so low that
 * the node's estimated total would be off by more than FT_SAMPLE_REL_ERR
 * (one relative standard error), and never below 1 in N.  Nodes whose
 * calls are expensive, few, or erratic (a few long calls among many short
 * ones) so stay exact; cheap, uniform, numerous calls go down to 1 in N.
 * The calls to time are drawn as geometric gaps (a countdown per node,
 * reloaded from a table of quantiles scaled for the rate), so each call is
 * timed with the rate in force independently of its position and periodic
 * plans do not alias; a timed call counts as many times as its gap's
 * exact mean (1/p, Horvitz-Thompson), and since each rate is fixed before
 * the calls it applies to, the node's total stays an unbiased estimate.
 * The first call of every loop is always timed and counts once, so
 * startup and first-tuple times stay exact; rows, loops, buffers and WAL
 * are never sampled.  Nodes in async mode (whose first-tuple rule looks
 * at every call) are timed exactly.
 *
 * Every read of a sampled timer is ordered (LFENCE;RDTSC): a timed call
 * is reached through a branch that is mispredicted by design, and a plain
 * RDTSC after it would let work the caller issued before the call retire
 * inside the node's interval, which the weight then multiplies.  Exact
 * timing uses plain RDTSC unless fasttime.ordered_reads asks for ordered
 * reads too (FT_TIMER_TSC_ORDERED).
 *
 * src/node_wrappers.c
 *
 *-------------------------------------------------------------------------
 */
#include "compat.h"

#include <math.h>

#include "access/parallel.h"
#include "common/pg_prng.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "port/atomics.h"

#include "fault_injection.h"
#include "node_wrappers.h"
#include "profiler.h"

/*
 * The floor build (make FLOOR=1, benchmarks only) reads no clock at all:
 * what is left is the bookkeeping.
 */
#ifdef FASTTIME_FLOOR
#define FT_TICKS_AT(stop) ((uint64) 0)
#define FT_TICKS_ORDERED_AT(stop) ((uint64) 0)
#define FT_STOCK_CLOCK(t) INSTR_TIME_SET_ZERO(t)
#elif defined(FASTTIME_FAULT_INJECTION)
/*
 * Fault builds count which reader each wrapper read used, by position
 * (start plain, start ordered, stop plain, stop ordered), for
 * fasttime_status() and t/009.
 */
#define FT_TICKS_AT(stop) (ft_fault_wrapper_reads[(stop) * 2]++, ft_node_ticks())
#define FT_TICKS_ORDERED_AT(stop) (ft_fault_wrapper_reads[(stop) * 2 + 1]++, ft_node_ticks_ordered())
#define FT_STOCK_CLOCK(t) FT_INSTR_CLOCK_NOW(t)
#else
#define FT_TICKS_AT(stop) ft_node_ticks()
#define FT_TICKS_ORDERED_AT(stop) ft_node_ticks_ordered()
#define FT_STOCK_CLOCK(t) FT_INSTR_CLOCK_NOW(t)
#endif

/* ---------------------------------------------------------------------
 * Sampling state
 * ---------------------------------------------------------------------
 */

/* unit-exponential quantiles; scaled, they become geometric gaps */
#define FT_GAP_TABLE_SIZE 1024
static double ft_unit_exp[FT_GAP_TABLE_SIZE];
static pg_prng_state ft_sample_prng;
static bool ft_sample_prng_seeded = false;

/* calls of sampled wrappers in this backend: the work of a long call */
static uint64 ft_sampled_calls = 0;

/* the sampling of the query running now (see ft_sampling_swap) */
static FtSampling ft_sampling = {1, 1, 0.0, {1.0}, {0.0}, {1.0}, NULL, 0};

/*
 * Sampling parameters for an interval: the rates 1, 1/2, 1/4, ... and
 * 1/interval last.  Gaps of 1 + floor(E * scale) with E unit-exponential
 * are geometric with success probability p when scale = -1 / ln(1 - p).
 * Drawn from a finite table of quantiles their mean is not exactly 1/p,
 * so the weight of a timed call is the table's exact mean gap.
 * timed_call_ns is what timing one call adds (two clock reads and the
 * bookkeeping), the unit of the cost rule.  The per-node states are
 * attached separately (ft_sampling_attach_nodes).
 */
void
ft_sampling_prepare(int interval, double timed_call_ns, FtSampling *out)
{
	static FtSampling last = {0};
	double		m = 1.0;

	if (interval < 1)
		interval = 1;
	/* each backend its own sequence: seeded here, not in the postmaster */
	if (interval > 1 && !ft_sample_prng_seeded)
	{
		pg_prng_seed(&ft_sample_prng, pg_prng_uint64(&pg_global_prng_state));
		ft_sample_prng_seeded = true;
	}
	/* the same interval as the previous query's: nothing to compute */
	if (interval == last.interval && last.nlevels > 0)
	{
		*out = last;
		out->timed_call_ns = timed_call_ns;
		out->nodes = NULL;
		out->nnodes = 0;
		return;
	}
	memset(out, 0, sizeof(*out));
	out->interval = interval;
	out->timed_call_ns = timed_call_ns;
	for (;;)
	{
		int			k = out->nlevels++;
		double		sum = 0;

		out->inv_rate[k] = m;
		if (m <= 1.0)
		{
			out->gap_scale[k] = 0.0;
			out->weight[k] = 1.0;
		}
		else
		{
			out->gap_scale[k] = -1.0 / log1p(-1.0 / m);
			for (int i = 0; i < FT_GAP_TABLE_SIZE; i++)
				sum += 1.0 + floor(ft_unit_exp[i] * out->gap_scale[k]);
			out->weight[k] = sum / FT_GAP_TABLE_SIZE;
		}
		if (m >= (double) interval || out->nlevels == FT_SAMPLE_MAX_LEVELS)
			break;
		m = Min(m * 2.0, (double) interval);
	}
	last = *out;
}

/*
 * Give a query's sampling its per-node states, one per plan_node_id below
 * nnodes, each starting exact, in the query's memory.
 */
void
ft_sampling_attach_nodes(FtSampling *sampling, int nnodes, MemoryContext cxt)
{
	sampling->nodes = MemoryContextAllocZero(cxt, sizeof(FtNodeSample) * Max(nnodes, 1));
	sampling->nnodes = nnodes;
	for (int i = 0; i < nnodes; i++)
	{
		FtNodeSample *s = &sampling->nodes[i];

		s->countdown = s->gap = 1;
		s->weight = 1.0;
		s->level = 0;
		s->recheck = FT_SAMPLE_RECHECK;
		s->work_limit = FT_SAMPLE_LONG_MIN;
		s->parent = -1;
	}
}

typedef struct FtLinkContext
{
	FtSampling *sampling;
	int			parent;
} FtLinkContext;

/* planstate_tree_walker callback of ft_sampling_link_nodes */
static bool
ft_link_walker(PlanState *ps, void *context)
{
	FtLinkContext *cx = (FtLinkContext *) context;
	int			saved = cx->parent;
	int			id = ps->plan ? ps->plan->plan_node_id : -1;

	if (ps->instrument != NULL && id >= 0 && id < cx->sampling->nnodes)
	{
		FtNodeSample *s = &cx->sampling->nodes[id];

		s->parent = saved;
		s->instr = ps->instrument;
		/* async nodes are timed exactly; MultiExec nodes by core itself */
		s->always_timed = ps->instrument->async_mode ||
			IsA(ps, HashState) || IsA(ps, BitmapIndexScanState) ||
			IsA(ps, BitmapAndState) || IsA(ps, BitmapOrState);
		cx->parent = id;
	}
	planstate_tree_walker(ps, ft_link_walker, cx);
	cx->parent = saved;
	return false;
}

/*
 * Tell each node's sampling state which instrumented node is above it in
 * the plan (subplans and initplans under the node that holds them) and
 * where its Instrumentation is, so that time one node counts once reaches
 * its ancestors (ft_sample_propagate).
 */
void
ft_sampling_link_nodes(FtSampling *sampling, PlanState *root)
{
	FtLinkContext cx;

	if (root == NULL || sampling->nodes == NULL)
		return;
	cx.sampling = sampling;
	cx.parent = -1;
	ft_link_walker(root, &cx);
}

/*
 * Make "in" the sampling in force, returning the previous one in saved.  The
 * executor hooks do this around each query's run and finish, so that a
 * nested query's nodes use their own states and rates and the outer
 * query's keep theirs.
 */
void
ft_sampling_swap(const FtSampling *in, FtSampling *saved)
{
	*saved = ft_sampling;
	ft_sampling = *in;
}

/* Draw the gap to a node's next timed call at its current rate. */
static inline void
ft_sample_redraw(FtNodeSample *s)
{
	if (s->level == 0)
		s->gap = 1;
	else
	{
		uint32		i = pg_prng_uint32(&ft_sample_prng) % FT_GAP_TABLE_SIZE;

		s->gap = 1 + (int32) (ft_unit_exp[i] * ft_sampling.gap_scale[s->level]);
	}
	s->countdown = s->gap;
	s->weight = ft_sampling.weight[s->level];
}

/*
 * Time a node counted once (a long call, a spike) happened inside the
 * calls of every node above it, so each counts it once too: added to the
 * counter of one whose call is untimed (and noted in its pending, which
 * its own long call then leaves out), set aside from the weighting of one
 * whose call is timed (inner).  Nodes timed on every call measured it
 * already.  Runs only on calls counted once.
 */
static pg_noinline void
ft_sample_propagate(const FtNodeSample *s, double ns)
{
	int			p = s->parent;
	int			steps = ft_sampling.nnodes;

	while (p >= 0 && p < ft_sampling.nnodes && steps-- > 0)
	{
		FtNodeSample *a = &ft_sampling.nodes[p];

		if (!a->always_timed && a->instr != NULL)
		{
			if (a->timing)
				a->inner += ns;
			else
			{
				ft_instr_time_add_ns(&((FtNodeInstr *) a->instr)->counter,
									 ft_ns_from_double(ns));
				a->pending += ns;
			}
		}
		p = a->parent;
	}
}

/*
 * After a timed sampled call: what it counts for in the node's total, in
 * nanoseconds.  Time its descendants counted once (inner) counts once
 * here too; of the rest, an ordinary call counts its weight times and goes
 * into the node's sums (its time and its work).  A long call of a node
 * whose long calls are caught (its work reached the node's limit), or a
 * spike (it took far longer than the node's calls do without doing more
 * work than they do; see FtNodeSample), counts once, the untimed calls
 * before it at the node's mean, stays out of the sums, and reaches the
 * nodes above.  Every FT_SAMPLE_RECHECK ordinary timed calls, and at a
 * node's second spike, its rate and its long-call limit are revised; then
 * the gap to its next timed call is drawn.  Out of line: it runs on timed
 * calls only, after the call's second clock read.
 */
static pg_noinline uint64
ft_sample_timed(FtNodeSample *s, uint64 ns, double work, bool guarded)
{
	double		inner = Min(s->inner, (double) ns);
	double		t = (double) ns - inner;
	double		term = s->weight * t * t;
	bool		heavy = work >= s->work_limit;
	uint64		counted;

	if ((guarded && heavy) || (!heavy && ft_sample_is_spike(s, t)))
	{
		counted = ft_ns_from_double(t + ft_sample_stand_in(s) + inner);
		ft_sample_propagate(s, t);
		s->timed += 1.0;
		if (!heavy && (++s->spikes, ft_sample_spikes_recur(s)))
			s->recheck = 0;
		else
		{
			ft_sample_redraw(s);
			return counted;
		}
	}
	else
	{
		counted = ft_ns_from_double(s->weight * t + inner);
		s->timed += 1.0;
		s->s1 += s->weight * t;
		s->s2 += term;
		if (term > s->top[1])
		{
			if (term > s->top[0])
			{
				s->top[1] = s->top[0];
				s->top[0] = term;
			}
			else
				s->top[1] = term;
		}
		s->work += s->weight * work;
		s->calls += (double) s->gap;
	}
	if (--s->recheck <= 0)
	{
		s->level = ft_sample_choose_level(&ft_sampling, s);
		s->work_limit = Max((double) FT_SAMPLE_LONG_MIN,
							FT_SAMPLE_LONG_FACTOR * s->work / s->calls);
		s->recheck = FT_SAMPLE_RECHECK;
	}
	ft_sample_redraw(s);
	return counted;
}

/*
 * A long call of a node whose long calls are caught, in an untimed call:
 * timed whatever the countdown said, it counts once, less what the nodes
 * below counted once and added to this call already (pending, since the
 * call began), and reaches the nodes above.  It stays out of the sums the
 * rate is chosen from (it is certain to be timed, so it adds nothing to
 * the estimate's variance).
 */
static pg_noinline void
ft_sample_long(PlanState *node, FtNodeSample *s, uint64 start, double pending0)
{
	uint64		stop = FT_TICKS_AT(1);
	double		ns = (double) ft_ticks_to_ns(&ft_conv, (int64) (stop - start)) -
		(s->pending - pending0);

	ns = Max(ns, 0.0);
	ft_instr_time_add_ns(&node->instrument->counter, ft_ns_from_double(ns));
	ft_sample_propagate(s, ns);
}

/* The same under the stock clock. */
static pg_noinline void
ft_sample_long_clock(PlanState *node, FtNodeSample *s, const instr_time *start,
					 double pending0)
{
	instr_time	stop;
	double		ns;

	FT_STOCK_CLOCK(stop);
	ns = (double) ft_instr_time_diff_ns(stop, *start) - (s->pending - pending0);
	ns = Max(ns, 0.0);
	ft_instr_time_add_ns(&node->instrument->counter, ft_ns_from_double(ns));
	ft_sample_propagate(s, ns);
}

/*
 * The work done so far in this backend, as seen from one node: calls of
 * sampled nodes (its children's, in a call of its own), rows its quals
 * removed, buffer hits, and blocks read or written (shared, local and temp:
 * a Hash Join loading its next batch, a spilled aggregate refilling its
 * table, a scan reading from disk), each FT_SAMPLE_BLOCK_IO_WORK.  The
 * buffer counters are the backend's own, kept whether or not anything is
 * instrumented.
 */
static inline double
ft_work(PlanState *node)
{
	int64		hits = pgBufferUsage.shared_blks_hit + pgBufferUsage.local_blks_hit;
	int64		io = pgBufferUsage.shared_blks_read + pgBufferUsage.shared_blks_written +
		pgBufferUsage.local_blks_read + pgBufferUsage.local_blks_written +
		pgBufferUsage.temp_blks_read + pgBufferUsage.temp_blks_written;

	return (double) ft_sampled_calls + node->instrument->nfiltered1 +
		node->instrument->nfiltered2 + (double) hits +
		FT_SAMPLE_BLOCK_IO_WORK * (double) io;
}

/* ---------------------------------------------------------------------
 * Lane arithmetic for BufferUsage and WalUsage
 * ---------------------------------------------------------------------
 */

typedef int64 ft_v8 __attribute__((vector_size(64), aligned(8), may_alias));
typedef int64 ft_v4 __attribute__((vector_size(32), aligned(8), may_alias));
typedef int64 ft_v2 __attribute__((vector_size(16), aligned(8), may_alias));
typedef int64 ft_v1 __attribute__((aligned(8), may_alias));

/*
 * acc -= cur (sign < 0) or acc += cur (sign > 0), over n lanes.  n is a
 * compile-time constant where this is used, so the loops unroll to a few
 * vector operations of the width the enclosing function was built for.
 */
static pg_attribute_always_inline void
ft_lanes(void *acc_p, const void *cur_p, const int n, const int sign)
{
	char	   *acc = (char *) acc_p;
	const char *cur = (const char *) cur_p;
	int			i = 0;

	for (; i + 8 <= n; i += 8)
	{
		if (sign < 0)
			*(ft_v8 *) (acc + i * 8) -= *(const ft_v8 *) (cur + i * 8);
		else
			*(ft_v8 *) (acc + i * 8) += *(const ft_v8 *) (cur + i * 8);
	}
	for (; i + 4 <= n; i += 4)
	{
		if (sign < 0)
			*(ft_v4 *) (acc + i * 8) -= *(const ft_v4 *) (cur + i * 8);
		else
			*(ft_v4 *) (acc + i * 8) += *(const ft_v4 *) (cur + i * 8);
	}
	for (; i + 2 <= n; i += 2)
	{
		if (sign < 0)
			*(ft_v2 *) (acc + i * 8) -= *(const ft_v2 *) (cur + i * 8);
		else
			*(ft_v2 *) (acc + i * 8) += *(const ft_v2 *) (cur + i * 8);
	}
	for (; i < n; i++)
	{
		if (sign < 0)
			*(ft_v1 *) (acc + i * 8) -= *(const ft_v1 *) (cur + i * 8);
		else
			*(ft_v1 *) (acc + i * 8) += *(const ft_v1 *) (cur + i * 8);
	}
}

/* ---------------------------------------------------------------------
 * The wrappers
 * ---------------------------------------------------------------------
 */

static void ft_rearm_below_gather(PlanState *node, FtTimer timer);
static inline ExecProcNodeMtd ft_method(PlanState *ps, FtTimer timer);

/*
 * The one body every wrapper is built from.  timer (none, TSC plain or
 * ordered, or the stock clock), buf, wal, gather and weighted are
 * compile-time constants in each instance, so every test of them below
 * disappears.  weighted: the call is a sampled one, standing for the calls
 * sampling skipped; it counts sample->weight times and its time goes into
 * the node's sampling sums.  query_timer: the query's timer kind, which a
 * Gather re-arms its children with.
 */
static pg_attribute_always_inline TupleTableSlot *
ft_wrap(PlanState *node, const FtTimer timer, const bool buf, const bool wal,
		const bool gather, const bool weighted, FtNodeSample *sample,
		const bool guarded, const FtTimer query_timer)
{
	FtNodeInstr *instr = node->instrument;
	TupleTableSlot *result;
	double		save_tuplecount;
	uint64		tsc_start = 0;
	instr_time	clock_start;
	bool		gather_starting = false;
	double		work0 = 0;

	if (gather)
	{
		if (IsA(node, GatherState))
			gather_starting = !((GatherState *) node)->initialized;
		else
			gather_starting = !((GatherMergeState *) node)->initialized;
	}

	/* InstrStartNode */
	if (buf)
		ft_lanes(FT_INSTR_BUFUSAGE(instr), &pgBufferUsage, FT_BUFUSAGE_LANES, -1);
	if (wal)
		ft_lanes(FT_INSTR_WALUSAGE(instr), &pgWalUsage, FT_WALUSAGE_LANES, -1);
	if (guarded || weighted)
		work0 = ft_work(node);
	if (timer == FT_TIMER_TSC)
		tsc_start = FT_TICKS_AT(0);
	else if (timer == FT_TIMER_TSC_ORDERED || timer == FT_TIMER_TSC_ORDERED_START)
		tsc_start = FT_TICKS_ORDERED_AT(0);
	else if (timer == FT_TIMER_CLOCK_GETTIME)
		FT_STOCK_CLOCK(clock_start);

	result = node->ExecProcNodeReal(node);

	/* InstrStopNode */
	if (timer == FT_TIMER_TSC || timer == FT_TIMER_TSC_ORDERED ||
		timer == FT_TIMER_TSC_ORDERED_START)
	{
		uint64		tsc_stop = timer == FT_TIMER_TSC_ORDERED ?
			FT_TICKS_ORDERED_AT(1) : FT_TICKS_AT(1);

		if (weighted)
		{
			uint64		ns = ft_ticks_to_ns(&ft_conv, (int64) (tsc_stop - tsc_start));

			ft_instr_time_add_ns(&instr->counter,
								 ft_sample_timed(sample, ns, ft_work(node) - work0, guarded));
		}
		else
			ft_instr_time_add_ticks(&instr->counter, (int64) (tsc_stop - tsc_start));
	}
	else if (timer == FT_TIMER_CLOCK_GETTIME)
	{
		instr_time	clock_stop;

		FT_STOCK_CLOCK(clock_stop);
		if (weighted)
		{
			int64		d = ft_instr_time_diff_ns(clock_stop, clock_start);
			uint64		ns = d > 0 ? (uint64) d : 0;
			ft_instr_time_add_ns(&instr->counter,
								 ft_sample_timed(sample, ns, ft_work(node) - work0, guarded));
		}
		else
			ft_instr_time_accum_clock(&instr->counter, clock_stop, clock_start);
	}

	save_tuplecount = instr->tuplecount;
	instr->tuplecount += TupIsNull(result) ? 0.0 : 1.0;

	if (buf)
	{
		ft_lanes(FT_INSTR_BUFUSAGE(instr), &pgBufferUsage, FT_BUFUSAGE_LANES, +1);
		ft_bufusage_normalize(FT_INSTR_BUFUSAGE(instr));
	}
	if (wal)
		ft_lanes(FT_INSTR_WALUSAGE(instr), &pgWalUsage, FT_WALUSAGE_LANES, +1);

	/* Is this the first tuple of this cycle? */
	if (!instr->running)
	{
		instr->running = true;
		ft_instr_set_firsttuple(instr);
	}
	else if (instr->async_mode && save_tuplecount < 1.0)
		ft_instr_set_firsttuple(instr);

	if (gather && gather_starting)
		ft_rearm_below_gather(node, query_timer);

	return result;
}

/*
 * Sampled timing: decide first, then run one of three straight-line
 * bodies.  Deciding inside a single body would put the branch that is
 * mispredicted on every timed call (timed calls are the rare ones)
 * between the call's two clock reads, and add its pipeline flush to every
 * sampled duration: several nanoseconds, a large bias on cheap nodes.
 * Here it falls before the first read, and that read is ordered, so what
 * the caller had in flight retires before it.  The first call of a loop
 * is timed and counts once.  A node without a sampling state (a plan node
 * id beyond the query's, which should not happen) is timed on every call.
 * clock is the timer the timed calls use, sampled the query's (sampled)
 * timer kind.
 */
static pg_attribute_always_inline TupleTableSlot *
ft_wrap_sampled(PlanState *node, const FtTimer clock, const FtTimer sampled,
				const bool buf, const bool wal, const bool gather,
				const bool guarded)
{
	uint32		id;
	FtNodeSample *s;

	TupleTableSlot *result;

	ft_sampled_calls++;
	id = (uint32) node->plan->plan_node_id;
	if (unlikely(id >= (uint32) ft_sampling.nnodes))
		return ft_wrap(node, clock, buf, wal, gather, false, NULL, false, sampled);
	s = &ft_sampling.nodes[id];
	if (unlikely(!node->instrument->running))
	{
		s->timing = 1;
		result = ft_wrap(node, clock, buf, wal, gather, false, NULL, false, sampled);
		s->timing = 0;
		return result;
	}
	if (likely(--s->countdown > 0))
	{
		uint64		start;
		double		work0;
		double		pending0;

		if (!guarded)
			return ft_wrap(node, FT_TIMER_NONE, buf, wal, gather, false, NULL, false, sampled);

		/*
		 * An untimed call of a node whose long calls are caught: one plain
		 * read, and the second only if the call turns out long.
		 */
		work0 = ft_work(node);
		pending0 = s->pending;
		if (clock == FT_TIMER_CLOCK_GETTIME)
		{
			instr_time	cstart;

			FT_STOCK_CLOCK(cstart);
			result = ft_wrap(node, FT_TIMER_NONE, buf, wal, gather, false, NULL, false, sampled);
			if (unlikely(ft_work(node) - work0 >= s->work_limit))
				ft_sample_long_clock(node, s, &cstart, pending0);
			return result;
		}
		start = FT_TICKS_AT(0);
		result = ft_wrap(node, FT_TIMER_NONE, buf, wal, gather, false, NULL, false, sampled);
		if (unlikely(ft_work(node) - work0 >= s->work_limit))
			ft_sample_long(node, s, start, pending0);
		return result;
	}
	s->inner = 0;
	s->timing = 1;
	result = ft_wrap(node, clock, buf, wal, gather, true, s, guarded, sampled);
	s->timing = 0;
	return result;
}

/*
 * Profiled timing (profiler.h).  profiled: the wrapper of the profiled
 * phase, else of the exact phase (before the switch, and for the frames
 * that stay exact).  A node whose frame is in the other mode moves itself
 * to the other wrapper first.  A call is exact when the wrapper is the
 * exact phase's or when it runs inside an exact call; an exact call is
 * timed with two reads of the profiler's clock and credits the profiled
 * frames below it (ft_prof_flush, ft_prof_settle_up).  A profiled call
 * stores two pointers.  Rows, buffers, WAL and the first-tuple time are
 * kept as in ft_wrap, the first-tuple time after the frame is off the
 * chain, so that no tick changes the counter while it is read.
 */
static pg_attribute_always_inline TupleTableSlot *
ft_wrap_prof(PlanState *node, const bool tsc, const bool profiled,
			 const bool buf, const bool wal, const bool gather,
			 const FtTimer query_timer)
{
	FtNodeInstr *instr = node->instrument;
	FtProfFrame *pf = ft_prof_frame_of(node);
	FtProfFrame *caller;
	TupleTableSlot *result;
	double		save_tuplecount;
	bool		gather_starting = false;

	if (unlikely(pf == NULL))
		return ft_wrap(node, tsc ? FT_TIMER_TSC : FT_TIMER_CLOCK_GETTIME,
					   buf, wal, gather, false, NULL, false, query_timer);
	if (unlikely(pf->mode != (profiled ? FT_FRAME_PROFILED : FT_FRAME_EXACT)))
	{
		node->ExecProcNode = ft_method(node, profiled ?
									   (tsc ? FT_TIMER_PROF_PHASE_TSC : FT_TIMER_PROF_PHASE_CLOCK_GETTIME) :
									   (tsc ? FT_TIMER_PROF_TSC : FT_TIMER_PROF_CLOCK_GETTIME));
		return node->ExecProcNode(node);
	}

	if (gather)
	{
		if (IsA(node, GatherState))
			gather_starting = !((GatherState *) node)->initialized;
		else
			gather_starting = !((GatherMergeState *) node)->initialized;
	}
	if (buf)
		ft_lanes(FT_INSTR_BUFUSAGE(instr), &pgBufferUsage, FT_BUFUSAGE_LANES, -1);
	if (wal)
		ft_lanes(FT_INSTR_WALUSAGE(instr), &pgWalUsage, FT_WALUSAGE_LANES, -1);

	caller = ft_prof_top;
	if (profiled && likely(caller == NULL || caller->mode == FT_FRAME_PROFILED))
	{
		if (unlikely(pf->flush_exit))
			ft_prof_core_note(pf);
		pf->caller = caller;
		pg_compiler_barrier();
		ft_prof_top = pf;
		pg_compiler_barrier();
		result = node->ExecProcNodeReal(node);
		if (unlikely(pf->flush_exit) && ft_prof_core_ran(pf))
			ft_prof_flush(pf, tsc ? FT_TICKS_AT(1) : (uint64) ft_read_clock_gettime_ns(), tsc);
		pg_compiler_barrier();
		ft_prof_top = caller;
		pg_compiler_barrier();
	}
	else
	{
		uint64		start;
		uint64		stop;

		if (profiled)
			pf->mode = FT_FRAME_EXACT;	/* for this call */
		start = tsc ? FT_TICKS_AT(0) : (uint64) ft_read_clock_gettime_ns();
		pf->start = start;
		pf->owed_from = start;
		pf->caller = caller;
		if (unlikely(caller != NULL && caller->mode == FT_FRAME_PROFILED))
			ft_prof_flush(caller, start, tsc);
		pg_compiler_barrier();
		ft_prof_top = pf;
		pg_compiler_barrier();
		result = node->ExecProcNodeReal(node);
		stop = tsc ? FT_TICKS_AT(1) : (uint64) ft_read_clock_gettime_ns();
		pg_compiler_barrier();
		ft_prof_top = caller;
		pg_compiler_barrier();
		if (likely(!pf->settled))
		{
			ft_prof_add(instr, stop > start ? stop - start : 0, tsc);
			if (unlikely(caller != NULL && caller->mode == FT_FRAME_PROFILED))
				ft_prof_settle_up(caller, stop > pf->owed_from ? stop - pf->owed_from : 0,
								  stop, tsc);
		}
		else
			pf->settled = false;
		if (profiled)
			pf->mode = FT_FRAME_PROFILED;
	}

	save_tuplecount = instr->tuplecount;
	instr->tuplecount += TupIsNull(result) ? 0.0 : 1.0;
	if (buf)
	{
		ft_lanes(FT_INSTR_BUFUSAGE(instr), &pgBufferUsage, FT_BUFUSAGE_LANES, +1);
		ft_bufusage_normalize(FT_INSTR_BUFUSAGE(instr));
	}
	if (wal)
		ft_lanes(FT_INSTR_WALUSAGE(instr), &pgWalUsage, FT_WALUSAGE_LANES, +1);
	if (!instr->running)
	{
		instr->running = true;
		ft_instr_set_firsttuple(instr);
	}
	else if (instr->async_mode && save_tuplecount < 1.0)
		ft_instr_set_firsttuple(instr);
	if (gather && gather_starting)
		ft_rearm_below_gather(node, query_timer);
	return result;
}

/*
 * One instance per timer kind, buffers, WAL and Gather, for one
 * instruction set; and the table that finds them.
 */
#define FT_BODY(t, b, w, g) \
	((t) == FT_TIMER_TSC_SAMPLED ? \
	 ft_wrap_sampled(node, FT_TIMER_TSC_ORDERED_START, FT_TIMER_TSC_SAMPLED, b, w, g, false) : \
	 (t) == FT_TIMER_TSC_SAMPLED_ORDERED ? \
	 ft_wrap_sampled(node, FT_TIMER_TSC_ORDERED, FT_TIMER_TSC_SAMPLED_ORDERED, b, w, g, false) : \
	 (t) == FT_TIMER_TSC_SAMPLED_GUARDED ? \
	 ft_wrap_sampled(node, FT_TIMER_TSC_ORDERED_START, FT_TIMER_TSC_SAMPLED, b, w, g, true) : \
	 (t) == FT_TIMER_TSC_SAMPLED_ORDERED_GUARDED ? \
	 ft_wrap_sampled(node, FT_TIMER_TSC_ORDERED, FT_TIMER_TSC_SAMPLED_ORDERED, b, w, g, true) : \
	 (t) == FT_TIMER_CLOCK_GETTIME_SAMPLED ? \
	 ft_wrap_sampled(node, FT_TIMER_CLOCK_GETTIME, FT_TIMER_CLOCK_GETTIME_SAMPLED, b, w, g, false) : \
	 (t) == FT_TIMER_CLOCK_GETTIME_SAMPLED_GUARDED ? \
	 ft_wrap_sampled(node, FT_TIMER_CLOCK_GETTIME, FT_TIMER_CLOCK_GETTIME_SAMPLED, b, w, g, true) : \
	 (t) == FT_TIMER_PROF_PHASE_TSC ? \
	 ft_wrap_prof(node, true, false, b, w, g, FT_TIMER_PROF_PHASE_TSC) : \
	 (t) == FT_TIMER_PROF_PHASE_CLOCK_GETTIME ? \
	 ft_wrap_prof(node, false, false, b, w, g, FT_TIMER_PROF_PHASE_CLOCK_GETTIME) : \
	 (t) == FT_TIMER_PROF_TSC ? \
	 ft_wrap_prof(node, true, true, b, w, g, FT_TIMER_PROF_PHASE_TSC) : \
	 (t) == FT_TIMER_PROF_CLOCK_GETTIME ? \
	 ft_wrap_prof(node, false, true, b, w, g, FT_TIMER_PROF_PHASE_CLOCK_GETTIME) : \
	 ft_wrap(node, (FtTimer) (t), b, w, g, false, NULL, false, (FtTimer) (t)))
#define FT_W1(isa, attr, t, b, w) \
static attr TupleTableSlot * \
ft_##isa##_##t##_##b##_##w##_0(PlanState *node) \
{ \
	return FT_BODY(t, b, w, false); \
} \
static attr TupleTableSlot * \
ft_##isa##_##t##_##b##_##w##_1(PlanState *node) \
{ \
	return FT_BODY(t, b, w, true); \
}
#define FT_WT(isa, attr, t) \
	FT_W1(isa, attr, t, 0, 0) FT_W1(isa, attr, t, 0, 1) \
	FT_W1(isa, attr, t, 1, 0) FT_W1(isa, attr, t, 1, 1)
#define FT_WALL(isa, attr) \
	FT_WT(isa, attr, 0) FT_WT(isa, attr, 1) FT_WT(isa, attr, 2) \
	FT_WT(isa, attr, 3) FT_WT(isa, attr, 4) FT_WT(isa, attr, 5) \
	FT_WT(isa, attr, 6) FT_WT(isa, attr, 7) FT_WT(isa, attr, 8) \
	FT_WT(isa, attr, 9) FT_WT(isa, attr, 10) FT_WT(isa, attr, 11) \
	FT_WT(isa, attr, 12) FT_WT(isa, attr, 13) FT_WT(isa, attr, 14)

#define FT_E1(isa, t, b, w) \
	{ft_##isa##_##t##_##b##_##w##_0, ft_##isa##_##t##_##b##_##w##_1}
#define FT_ET(isa, t) \
	{{FT_E1(isa, t, 0, 0), FT_E1(isa, t, 0, 1)}, \
	 {FT_E1(isa, t, 1, 0), FT_E1(isa, t, 1, 1)}}
#define FT_EALL(isa) \
	{FT_ET(isa, 0), FT_ET(isa, 1), FT_ET(isa, 2), FT_ET(isa, 3), FT_ET(isa, 4), \
	 FT_ET(isa, 5), FT_ET(isa, 6), FT_ET(isa, 7), FT_ET(isa, 8), FT_ET(isa, 9), \
	 FT_ET(isa, 10), FT_ET(isa, 11), FT_ET(isa, 12), FT_ET(isa, 13), FT_ET(isa, 14)}

typedef ExecProcNodeMtd FtWrapperTable[FT_N_TIMERS][2][2][2];

FT_WALL(portable, )
static const FtWrapperTable ft_portable_table = FT_EALL(portable);

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define FT_HAVE_ISA_VARIANTS 1
FT_WALL(avx2, __attribute__((target("avx2"))))
FT_WALL(avx512, __attribute__((target("avx512f"))))
static const FtWrapperTable ft_avx2_table = FT_EALL(avx2);
static const FtWrapperTable ft_avx512_table = FT_EALL(avx512);
#else
#define FT_HAVE_ISA_VARIANTS 0
#endif

static const FtWrapperTable *ft_table = &ft_portable_table;
static const char *ft_isa_name = "portable";

/* planstate_tree_walker callback: any child at all ends the walk */
static bool
ft_any_child(PlanState *ps, void *context)
{
	return true;
}

/*
 * Can a call of this node take much longer than its others, in a way the
 * work counted by ft_work shows?  Nodes that call other nodes (children,
 * subplans, a CTE's plan) and nodes with quals that remove rows.  A leaf
 * scan without quals returns a row a call.
 */
static bool
ft_can_have_long_calls(PlanState *ps)
{
	return ps->qual != NULL || outerPlanState(ps) != NULL ||
		innerPlanState(ps) != NULL || ps->initPlan != NIL || ps->subPlan != NIL ||
		IsA(ps, CteScanState) || IsA(ps, SubqueryScanState) ||
		IsA(ps, AppendState) || IsA(ps, MergeAppendState) ||
		IsA(ps, FunctionScanState) || IsA(ps, ModifyTableState) ||
		planstate_tree_walker(ps, ft_any_child, NULL);
}

/* The wrapper a node gets for good, by what it needs. */
static inline ExecProcNodeMtd
ft_method(PlanState *ps, FtTimer timer)
{
	FtNodeInstr *instr = ps->instrument;
	bool		gather = IsA(ps, GatherState) || IsA(ps, GatherMergeState);

	/* nodes that can have long calls catch them */
	if ((timer == FT_TIMER_TSC_SAMPLED || timer == FT_TIMER_TSC_SAMPLED_ORDERED ||
		 timer == FT_TIMER_CLOCK_GETTIME_SAMPLED) &&
		ft_can_have_long_calls(ps))
		timer = timer == FT_TIMER_TSC_SAMPLED ? FT_TIMER_TSC_SAMPLED_GUARDED :
			timer == FT_TIMER_TSC_SAMPLED_ORDERED ? FT_TIMER_TSC_SAMPLED_ORDERED_GUARDED :
			FT_TIMER_CLOCK_GETTIME_SAMPLED_GUARDED;

	/* async nodes' first-tuple rule looks at every call: never sample */
	if (instr->async_mode)
	{
		if (timer == FT_TIMER_TSC_SAMPLED || timer == FT_TIMER_TSC_SAMPLED_GUARDED)
			timer = FT_TIMER_TSC_ORDERED_START;
		else if (timer == FT_TIMER_TSC_SAMPLED_ORDERED ||
				 timer == FT_TIMER_TSC_SAMPLED_ORDERED_GUARDED)
			timer = FT_TIMER_TSC_ORDERED;
		else if (timer == FT_TIMER_CLOCK_GETTIME_SAMPLED ||
				 timer == FT_TIMER_CLOCK_GETTIME_SAMPLED_GUARDED)
			timer = FT_TIMER_CLOCK_GETTIME;
	}
	return (*ft_table)[timer][FT_INSTR_NEED_BUFUSAGE(instr) ? 1 : 0]
		[FT_INSTR_NEED_WALUSAGE(instr) ? 1 : 0][gather ? 1 : 0];
}

/*
 * First call of a node: the stack depth check stock ExecProcNodeFirst
 * does once per node, then the node's wrapper for good.
 */
#define FT_FIRST(t) \
static TupleTableSlot * \
ft_first_##t(PlanState *node) \
{ \
	check_stack_depth(); \
	node->ExecProcNode = ft_method(node, (FtTimer) t); \
	return node->ExecProcNode(node); \
}
FT_FIRST(0)
FT_FIRST(1)
FT_FIRST(2)
FT_FIRST(3)
FT_FIRST(4)
FT_FIRST(5)
FT_FIRST(6)
FT_FIRST(7)
FT_FIRST(8)
FT_FIRST(9)
FT_FIRST(10)
FT_FIRST(11)
FT_FIRST(12)
FT_FIRST(13)
FT_FIRST(14)

static const ExecProcNodeMtd ft_first[FT_N_TIMERS] = {
	ft_first_0, ft_first_1, ft_first_2, ft_first_3, ft_first_4, ft_first_5,
	ft_first_6, ft_first_7, ft_first_8, ft_first_9, ft_first_10, ft_first_11,
	ft_first_12, ft_first_13, ft_first_14
};

/* Is this one of the methods we put nodes on? */
static bool
ft_is_ours(ExecProcNodeMtd m)
{
	const ExecProcNodeMtd *all = &(*ft_table)[0][0][0][0];

	for (int i = 0; i < FT_N_TIMERS; i++)
		if (m == ft_first[i])
			return true;
	for (int i = 0; i < (int) (sizeof(FtWrapperTable) / sizeof(ExecProcNodeMtd)); i++)
		if (m == all[i])
			return true;
	return false;
}

/* ---------------------------------------------------------------------
 * Putting nodes on the wrappers
 * ---------------------------------------------------------------------
 */

/* the stock ExecProcNodeFirst and ExecProcNodeInstr, learned at run time */
static ExecProcNodeMtd stock_first = NULL;
static ExecProcNodeMtd stock_instr = NULL;
static bool stock_known = false;

/* A node method that returns no tuple; only used by ft_wrappers_learn_stock. */
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
void
ft_wrappers_learn_stock(void)
{
	PlanState	ps;
	FtNodeInstr instr;

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
				 errdetail("Plan nodes will be instrumented by stock PostgreSQL.")));
}

bool
ft_wrappers_stock_known(void)
{
	return stock_known;
}

/*
 * Put one node on fasttime's wrappers if it is instrumented and on a stock
 * wrapper now; leave it alone otherwise (already ours, or some other
 * extension's).  That makes every walk idempotent.
 */
static inline bool
ft_wrap_node(PlanState *ps, FtTimer timer)
{
	if (ps->instrument == NULL)
		return false;
	if (ps->ExecProcNode == stock_first)
		ps->ExecProcNode = ft_first[timer];
	else if (ps->ExecProcNode == stock_instr)
		ps->ExecProcNode = ft_method(ps, timer);
	else
		return false;
	return true;
}

/* A walk over one query's plan, each node once. */
typedef struct FtWalk
{
	FtTimer		timer;
	PlanState **roots;			/* subplan roots, sorted */
	int			nroots;
	PlanState  *current_root;	/* the subplan being walked, or NULL */
	int			nodes;			/* nodes on our wrappers */
	int			switched;		/* nodes this walk put there */
	int			max_id;			/* largest plan_node_id seen */
} FtWalk;

static int
ft_ptr_cmp(const void *a, const void *b)
{
	uintptr_t	x = (uintptr_t) *(PlanState *const *) a;
	uintptr_t	y = (uintptr_t) *(PlanState *const *) b;

	return (x > y) - (x < y);
}

/*
 * planstate_tree_walker descends into a node's initPlan and subPlan lists,
 * whose plans are also in the executor's es_subplanstates (which CTE scans
 * use without a SubPlan).  To visit every node once, a subplan's root is
 * only entered from the walk over es_subplanstates.
 */
static bool
ft_wrap_walker(PlanState *ps, void *context)
{
	FtWalk	   *w = (FtWalk *) context;

	if (ps != w->current_root && w->nroots > 0 &&
		bsearch(&ps, w->roots, w->nroots, sizeof(PlanState *), ft_ptr_cmp) != NULL)
		return false;
	if (ft_wrap_node(ps, w->timer))
		w->switched++;
	if (ft_is_ours(ps->ExecProcNode))
		w->nodes++;
	if (ps->plan != NULL && ps->plan->plan_node_id > w->max_id)
		w->max_id = ps->plan->plan_node_id;
	return planstate_tree_walker(ps, ft_wrap_walker, context);
}

/*
 * Put every instrumented node of a query on the wrappers for its timer:
 * the main tree and each subplan.  Returns the number of distinct nodes
 * on our wrappers afterwards; *switched says how many this call moved.
 */
int
ft_wrap_query_nodes(PlanState *planstate, List *subplanstates, FtTimer timer,
					int *switched, int *max_plan_node_id)
{
	FtWalk		w;
	ListCell   *lc;

	memset(&w, 0, sizeof(w));
	w.timer = timer;
	if (subplanstates != NIL)
	{
		w.roots = palloc(sizeof(PlanState *) * list_length(subplanstates));
		foreach(lc, subplanstates)
		{
			if (lfirst(lc) != NULL)
				w.roots[w.nroots++] = (PlanState *) lfirst(lc);
		}
		qsort(w.roots, w.nroots, sizeof(PlanState *), ft_ptr_cmp);
	}
	if (planstate != NULL)
		(void) ft_wrap_walker(planstate, &w);
	for (int i = 0; i < w.nroots; i++)
	{
		w.current_root = w.roots[i];
		(void) ft_wrap_walker(w.roots[i], &w);
	}
	if (w.roots)
		pfree(w.roots);
	*switched = w.switched;
	*max_plan_node_id = w.max_id;
	return w.nodes;
}

/* Walker for ft_rearm_below_gather: no counting, no dedup needed. */
static bool
ft_rearm_walker(PlanState *ps, void *context)
{
	FtWalk	   *w = (FtWalk *) context;

	if (ft_wrap_node(ps, w->timer))
		w->switched++;
	return planstate_tree_walker(ps, ft_rearm_walker, context);
}

/*
 * A Gather or Gather Merge has just (re)initialized its parallel
 * machinery, and a parallel hash join below it has re-armed stock
 * instrumentation with ExecSetExecProcNode: put it back on ours.  The
 * join's own first leader-side call already ran under stock
 * instrumentation, which adds to the same totals in the same units.
 */
static pg_noinline void
ft_rearm_below_gather(PlanState *node, FtTimer timer)
{
	FtWalk		w;

	memset(&w, 0, sizeof(w));
	w.timer = timer;
	(void) planstate_tree_walker(node, ft_rearm_walker, &w);
	ereport(DEBUG1,
			(errmsg_internal("fasttime: %d plan nodes below %s re-armed after parallel start-up",
							 w.switched, IsA(node, GatherState) ? "Gather" : "Gather Merge")));
}

/* ---------------------------------------------------------------------
 * Set-up
 * ---------------------------------------------------------------------
 */

#if FT_HAVE_ISA_VARIANTS
/*
 * What a wrapper's buffer and WAL bookkeeping costs in one instruction set:
 * the start and stop halves over the real counters, iters times.  The
 * compiler barriers keep each half's loads and stores from being folded
 * away.
 */
#define FT_LANES_BENCH(isa, attr) \
static attr pg_noinline void \
ft_bench_##isa(BufferUsage *acc, WalUsage *wacc, int iters) \
{ \
	for (int i = 0; i < iters; i++) \
	{ \
		ft_lanes(acc, &pgBufferUsage, FT_BUFUSAGE_LANES, -1); \
		ft_lanes(wacc, &pgWalUsage, FT_WALUSAGE_LANES, -1); \
		pg_compiler_barrier(); \
		ft_lanes(acc, &pgBufferUsage, FT_BUFUSAGE_LANES, +1); \
		ft_lanes(wacc, &pgWalUsage, FT_WALUSAGE_LANES, +1); \
		pg_compiler_barrier(); \
	} \
}
FT_LANES_BENCH(avx2, __attribute__((target("avx2"))))
FT_LANES_BENCH(avx512, __attribute__((target("avx512f"))))

/* ns per start/stop pair: the best of several rounds, after a warm-up */
static double
ft_bench_isa(void (*fn) (BufferUsage *, WalUsage *, int))
{
	BufferUsage acc;
	WalUsage	wacc;
	double		best = 0;

	memset(&acc, 0, sizeof(acc));
	memset(&wacc, 0, sizeof(wacc));
	fn(&acc, &wacc, 2000);
	for (int r = 0; r < 9; r++)
	{
		int64		t0 = ft_read_clock_gettime_ns();
		double		ns;

		fn(&acc, &wacc, 2000);
		ns = (double) (ft_read_clock_gettime_ns() - t0) / 2000.0;
		if (r == 0 || ns < best)
			best = ns;
	}
	return best;
}
#endif

/* why this process uses the vector build it does, for fasttime_status() */
static char ft_isa_reason[200] = "no x86-64 vector builds: portable code";

/*
 * Once per process: choose the vector build of the wrappers, and fill the
 * sampling quantile table.  AVX2 where the CPU and the kernel support it;
 * AVX-512 only where it is also measured at least 10 % faster at the
 * bookkeeping the wrappers do on every call, since on some CPUs (Intel
 * Skylake-SP, Cascade Lake) running AVX-512 instructions on every node
 * call lowers the core's clock for all the code around them, while AVX2
 * does the 16-18 lanes in 4-5 operations.
 */
void
ft_wrappers_init(void)
{
#if FT_HAVE_ISA_VARIANTS
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx2"))
	{
		ft_table = &ft_avx2_table;
		ft_isa_name = "avx2";
		snprintf(ft_isa_reason, sizeof(ft_isa_reason),
				 "AVX2 supported, AVX-512 not");
		if (__builtin_cpu_supports("avx512f"))
		{
			double		t2 = ft_bench_isa(ft_bench_avx2);
			double		t512 = ft_bench_isa(ft_bench_avx512);

			if (t512 < 0.9 * t2)
			{
				ft_table = &ft_avx512_table;
				ft_isa_name = "avx512";
			}
			snprintf(ft_isa_reason, sizeof(ft_isa_reason),
					 "usage bookkeeping measured %.1f ns with AVX2, %.1f ns with AVX-512 per node call; AVX-512 only if at least 10 %% faster",
					 t2, t512);
		}
	}
	else
		snprintf(ft_isa_reason, sizeof(ft_isa_reason),
				 "no AVX2: portable code");
#endif
	for (int i = 0; i < FT_GAP_TABLE_SIZE; i++)
		ft_unit_exp[i] = -log1p(-((double) i + 0.5) / FT_GAP_TABLE_SIZE);
}

/* Which build of the wrappers this process uses, for fasttime_status(). */
const char *
ft_wrappers_isa(void)
{
	return ft_isa_name;
}

/* ... and why. */
const char *
ft_wrappers_isa_reason(void)
{
	return ft_isa_reason;
}

/* Names of fasttime.ordered_reads' values, as spelled in the setting. */
const char *
ft_read_order_name(FtReadOrder order)
{
	switch (order)
	{
		case FT_READS_PLAIN:
			return "off";
		case FT_READS_START:
			return "start";
		case FT_READS_BOTH:
			return "on";
	}
	return "?";
}

/* Names of timer kinds, for messages. */
const char *
ft_timer_name(FtTimer timer)
{
	switch (timer)
	{
		case FT_TIMER_NONE:
			return "none";
		case FT_TIMER_TSC:
			return "tsc";
		case FT_TIMER_CLOCK_GETTIME:
			return "clock_gettime";
		case FT_TIMER_TSC_SAMPLED:
			return "tsc, sampled";
		case FT_TIMER_CLOCK_GETTIME_SAMPLED:
			return "clock_gettime, sampled";
		case FT_TIMER_TSC_ORDERED:
			return "tsc, ordered reads";
		case FT_TIMER_TSC_ORDERED_START:
			return "tsc, ordered start reads";
		case FT_TIMER_TSC_SAMPLED_ORDERED:
			return "tsc, sampled, ordered reads";
		case FT_TIMER_TSC_SAMPLED_GUARDED:
			return "tsc, sampled, long calls caught";
		case FT_TIMER_TSC_SAMPLED_ORDERED_GUARDED:
			return "tsc, sampled, ordered reads, long calls caught";
		case FT_TIMER_CLOCK_GETTIME_SAMPLED_GUARDED:
			return "clock_gettime, sampled, long calls caught";
		case FT_TIMER_PROF_PHASE_TSC:
			return "tsc, profiled";
		case FT_TIMER_PROF_PHASE_CLOCK_GETTIME:
			return "clock_gettime, profiled";
		case FT_TIMER_PROF_TSC:
			return "tsc, profiled phase";
		case FT_TIMER_PROF_CLOCK_GETTIME:
			return "clock_gettime, profiled phase";
	}
	return "?";
}
