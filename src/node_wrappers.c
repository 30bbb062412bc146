/*-------------------------------------------------------------------------
 *
 * node_wrappers.c
 *	  The per-node instrumentation wrappers: fasttime's hot path.
 *
 * Stock PostgreSQL's ExecProcNodeInstr calls the out-of-line
 * InstrStartNode and InstrStopNode, which test need_timer, need_bufusage
 * and need_walusage at every call, read clock_gettime(), and copy and diff
 * the whole BufferUsage.  Here each combination of timer kind and usage is
 * its own function, specialized from one always-inline body and picked
 * per node at executor start: no wrapper tests an option per call,
 * divides, or makes a system call (but the clock_gettime timers, the
 * stock clock on purpose).  Each computes what stock's would: rows, loops
 * and the first-tuple time with InstrStopNode's code (async_mode rule
 * included), usage at transitions (usage.h), and time from two TSC reads
 * or the stock clock, written in the query's instr_time unit
 * (FtInstrUnits, compat.h) by a multiply chosen at executor start.
 *
 * The usage compares come in two builds (portable, AVX2), chosen once per
 * process.  Exact timing reads the TSC as fasttime.ordered_reads says:
 * ordered (LFENCE;RDTSC) at both ends of a call, the default, or plainly,
 * which may read before the call's loads complete, so that their cache
 * misses land in the parent's interval or the call's, run to run.
 * Profiled timing (profiler.h) has wrappers of its own, whose exact calls
 * always read in order.
 *
 * src/node_wrappers.c
 *
 *-------------------------------------------------------------------------
 */
#include "compat.h"

#include "access/parallel.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "port/atomics.h"

#ifdef FASTTIME_FAULT_INJECTION
#include "fault_injection.h"	/* test/fault/, fault builds only */
#endif
#include "node_wrappers.h"
#include "profiler.h"
#include "usage.h"

/* The floor build (make FLOOR=1, benchmarks only) reads no clock. */
#ifdef FASTTIME_FLOOR
#define FT_TICKS_AT(stop) ((uint64) 0)
#define FT_TICKS_ORDERED_AT(stop) ((uint64) 0)
#define FT_STOCK_CLOCK(t) INSTR_TIME_SET_ZERO(t)
#elif defined(FASTTIME_FAULT_INJECTION)
/* Fault builds count each reader's reads (start/stop, plain/ordered). */
#define FT_TICKS_AT(stop) (ft_fault_wrapper_reads[(stop) * 2]++, ft_node_ticks())
#define FT_TICKS_ORDERED_AT(stop) (ft_fault_wrapper_reads[(stop) * 2 + 1]++, ft_node_ticks_ordered())
#define FT_STOCK_CLOCK(t) FT_INSTR_CLOCK_NOW(t)
#else
#define FT_TICKS_AT(stop) ft_node_ticks()
#define FT_TICKS_ORDERED_AT(stop) ft_node_ticks_ordered()
#define FT_STOCK_CLOCK(t) FT_INSTR_CLOCK_NOW(t)
#endif

/* ---------------------------------------------------------------------
 * The wrappers
 * ---------------------------------------------------------------------
 */

/* the last TSC read that ended an exact call (node_wrappers.h) */
uint64		ft_node_last_tsc = 0;

static void ft_rearm_below_gather(PlanState *node, FtTimer timer);
static inline ExecProcNodeMtd ft_method(PlanState *ps, FtTimer timer);

/*
 * The profiler's frame of a node of the query running now, or NULL when
 * it has none (not profiled; or made after ExecutorStart or of another
 * query, which should not happen): the wrapper then times it exactly.
 */
static inline FtProfFrame *
ft_prof_frame_of(PlanState *node)
{
	uint32		id = (uint32) node->plan->plan_node_id;
	FtProfFrame *pf = &ft_usage_frame_of(node)->prof;

	if (unlikely(id >= ft_prof_nframes || ft_prof_frames[id] != pf))
		return NULL;
	return pf;
}

/*
 * The one body every wrapper is built from.  timer, buf, wal and isa (the
 * usage compare's instruction set) are compile-time constants in each
 * instance, so every test of them below disappears.
 */
static pg_attribute_always_inline TupleTableSlot *
ft_wrap(PlanState *node, const FtTimer timer, const bool buf, const bool wal,
		const int isa)
{
	FtNodeInstr *instr = node->instrument;
	FtUsageFrame *uf = ft_usage_frame_of(node);
	TupleTableSlot *result;
	double		save_tuplecount;
	uint64		tsc_start = 0;
	instr_time	clock_start;

	/* InstrStartNode; buffers and WAL: a transition, then on the chain */
	if (buf || wal)
	{
		ft_usage_transition(buf, wal, isa);
		ft_chain_link(uf);
	}
	if (timer == FT_TIMER_TSC)
		tsc_start = FT_TICKS_AT(0);
	else if (timer == FT_TIMER_TSC_ORDERED)
		tsc_start = FT_TICKS_ORDERED_AT(0);
	else if (timer == FT_TIMER_CLOCK_GETTIME)
		FT_STOCK_CLOCK(clock_start);

	result = node->ExecProcNodeReal(node);

	/* InstrStopNode */
	if (timer == FT_TIMER_TSC || timer == FT_TIMER_TSC_ORDERED)
	{
		uint64		tsc_stop = timer == FT_TIMER_TSC_ORDERED ?
			FT_TICKS_ORDERED_AT(1) : FT_TICKS_AT(1);

		ft_instr_time_add_ticks(&instr->counter, (int64) (tsc_stop - tsc_start));
		ft_node_last_tsc = tsc_stop;
	}
	else if (timer == FT_TIMER_CLOCK_GETTIME)
	{
		instr_time	clock_stop;

		FT_STOCK_CLOCK(clock_stop);
		ft_instr_time_accum_clock(&instr->counter, clock_stop, clock_start);
	}

	save_tuplecount = instr->tuplecount;
	instr->tuplecount += TupIsNull(result) ? 0.0 : 1.0;

	if (buf || wal)
	{
		ft_usage_transition(buf, wal, isa);
		ft_chain_unlink(uf);
	}

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
 * Must this call on the profiled "core" wrapper take the slow path?  When
 * it runs a child the executor times itself, or starts a Hash's build
 * (the build frame not on top: the slow path links it first).
 */
static pg_attribute_always_inline bool
ft_prof_call_is_special(PlanState *node, FtProfFrame *pf)
{
	return (pf->build != NULL && ft_chain_top != pf->build) ||
		(pf->core_child && ft_prof_core_will_run(node));
}

/*
 * A profiled query's node, on the wrappers of the clock its query began
 * on, called in a run on the other clock: a cursor declared under one
 * fasttime.clock_source and fetched inside a profiled query begun under
 * the other.  The run compares a call's readings with its own (the tick's
 * "now" with a call's start), so the node moves to the same wrapper on the
 * run's clock, as a node whose frame changed modes moves to the other
 * mode's; a later run on the first clock moves it back.  Its time adds up
 * in its query's units either way (each query's hold both conversions).
 */
static pg_noinline TupleTableSlot *
ft_prof_reclock(PlanState *node, bool profiled)
{
	FtProfFrame *pf = ft_prof_frame_of(node);
	bool		tsc = ft_prof_tsc;
	FtTimer		timer;

	if (!profiled)
		timer = tsc ? FT_TIMER_PROF_PHASE_TSC : FT_TIMER_PROF_PHASE_CLOCK_GETTIME;
	else if (pf->core_child || pf->build != NULL)
		timer = tsc ? FT_TIMER_PROF_CORE_TSC : FT_TIMER_PROF_CORE_CLOCK_GETTIME;
	else
		timer = tsc ? FT_TIMER_PROF_TSC : FT_TIMER_PROF_CLOCK_GETTIME;
	node->ExecProcNode = ft_method(node, timer);
	return node->ExecProcNode(node);
}

/* the out-of-line profiled body: ft_wrap_prof, profiled */
typedef TupleTableSlot *(*FtProfSlowFn) (PlanState *node, bool tsc, bool buf,
										 bool wal);

/*
 * Profiled timing (profiler.h).  profiled: the profiled phase's wrapper,
 * else the exact phase's; a node whose frame is in the other mode moves
 * to the other wrapper first.  A call is exact in the exact phase, inside
 * an exact call, or when it runs a child the executor times itself: two
 * clock reads (ordered on the TSC), the frames below credited at return.
 * Rows and usage are kept as in ft_wrap; the first-tuple time after the
 * frame is off the chain, so that no tick changes the counter meanwhile.
 */
static pg_attribute_always_inline TupleTableSlot *
ft_wrap_prof(PlanState *node, const bool tsc, const bool profiled,
			 const bool buf, const bool wal, const int isa)
{
	FtNodeInstr *instr = node->instrument;
	FtUsageFrame *uf = ft_usage_frame_of(node);
	FtProfFrame *pf = ft_prof_frame_of(node);
	FtProfFrame *caller;
	TupleTableSlot *result;
	double		save_tuplecount;

	if (unlikely(pf == NULL))
	{
		/* timed exactly, linked (for buffers) as no profiled query's */
		FtProfFrame *own = &uf->prof;
		uint8		own_mode = own->mode;

		/* a Hash's build left open ends before the chain changes */
		ft_prof_build_end_due(ft_prof_tsc);
		own->mode = FT_FRAME_NONE;
		result = ft_wrap(node, tsc ? FT_TIMER_TSC_ORDERED : FT_TIMER_CLOCK_GETTIME,
						 buf, wal, isa);
		own->mode = own_mode;
		return result;
	}
	if (unlikely(tsc != ft_prof_tsc))
		return ft_prof_reclock(node, profiled);
	if (unlikely(pf->mode != (profiled ? FT_FRAME_PROFILED : FT_FRAME_EXACT)))
	{
		FtTimer		other;

		/*
		 * Only a node with a child the executor times itself gets the
		 * profiled wrapper that asks whether a call will run that child.
		 */
		if (profiled)
			other = tsc ? FT_TIMER_PROF_PHASE_TSC : FT_TIMER_PROF_PHASE_CLOCK_GETTIME;
		else if (pf->core_child || pf->build != NULL)
			other = tsc ? FT_TIMER_PROF_CORE_TSC : FT_TIMER_PROF_CORE_CLOCK_GETTIME;
		else
			other = tsc ? FT_TIMER_PROF_TSC : FT_TIMER_PROF_CLOCK_GETTIME;
		node->ExecProcNode = ft_method(node, other);
		return node->ExecProcNode(node);
	}

	/* a Hash's build that ended its child's calls ends here */
	ft_prof_build_end_due(tsc);
	/* a Hash's child starting its build: the Hash's frame first */
	if (pf->build != NULL && ft_chain_top != pf->build)
		ft_prof_build_link(pf->build, tsc);
	if (buf || wal)
		ft_usage_transition(buf, wal, isa);

	caller = ft_chain_prof(ft_chain_top);
	if (profiled && likely(caller == NULL || caller->mode == FT_FRAME_PROFILED) &&
		likely(!pf->core_child || !ft_prof_core_will_run(node)))
	{
		if (ft_prof_gate != FT_FRAME_PROFILED)
			ft_prof_gate_open();
		ft_chain_link(uf);
		result = node->ExecProcNodeReal(node);
		ft_prof_build_end_due(tsc);
		if (buf || wal)
			ft_usage_transition(buf, wal, isa);
		ft_prof_resume_if_suspended();
		ft_chain_unlink(uf);
	}
	else
	{
		uint64		start;
		uint64		stop;

		/* an exact frame on the chain: the fast path's gate shut first */
		ft_prof_gate = FT_FRAME_NONE;
		pg_compiler_barrier();
		ft_prof_resume_if_suspended();
		ft_prof_rearm_if_asked();
		if (profiled)
			pf->mode = FT_FRAME_EXACT;	/* for this call */
		pf->core_call = pf->core_child && ft_prof_core_will_run(node);
#ifdef FASTTIME_FAULT_INJECTION
		if (!profiled &&
			(ft_fault_switch_in_link == FT_FAULT_SWITCH_FIRST_CALL ||
			 (ft_fault_switch_in_link == FT_FAULT_SWITCH_CORE_CALL && pf->core_call)))
			ft_prof_fault_switch();
#endif

		/*
		 * The start and the link as one step, under ft_prof_busy: a tick
		 * between them would credit the frames below an interval ending
		 * inside the call, which the settle-up credits again.  A switch
		 * since the mode test above has made the frame profiled without
		 * seeing it in flight (ft_prof_join_late).
		 */
		ft_prof_busy = 1;
		pg_compiler_barrier();
		start = tsc ? FT_TICKS_ORDERED_AT(0) : (uint64) ft_read_clock_gettime_ns();
		pf->start = start;
		pf->owed_from = start;
		ft_chain_link(uf);
		if (!profiled && unlikely(pf->mode == FT_FRAME_PROFILED))
			ft_prof_join_late(pf, start);
		pg_compiler_barrier();
		ft_prof_busy = 0;

		result = node->ExecProcNodeReal(node);
		/* a build it ran ends inside it (below: its frame is above ours) */
		ft_prof_build_end_due(tsc);
		stop = tsc ? FT_TICKS_ORDERED_AT(1) : (uint64) ft_read_clock_gettime_ns();
		if (buf || wal)
			ft_usage_transition(buf, wal, isa);
		ft_prof_resume_if_suspended();

		/*
		 * The unlink and the settle-up as one step, under ft_prof_busy: a
		 * tick between them would credit the frames below the whole
		 * interval, this call's time included, which the settle-up credits
		 * again (a switching tick: the caller's time up to the switch, then
		 * this call's once more).  A tick before the unlink takes what the
		 * call owes so far (owed_from) or switches it in flight (settled).
		 */
		ft_prof_busy = 1;
		pg_compiler_barrier();
		ft_chain_unlink(uf);
#ifdef FASTTIME_FAULT_INJECTION
		ft_prof_fault_at_return(node);
#endif
		if (likely(!pf->settled))
		{
			pf->exact_stop = stop;
			ft_prof_add(pf, stop > start ? stop - start : 0, tsc);
			/* owed below, and carved; under an exact call, that one owes it */
			if (caller == NULL || caller->mode == FT_FRAME_PROFILED)
				ft_prof_settle_up(caller, stop > pf->owed_from ? stop - pf->owed_from : 0,
								  stop, tsc);
		}
		else
			pf->settled = false;
		pg_compiler_barrier();
		ft_prof_busy = 0;
		pf->core_call = false;
		if (unlikely(pf->switch_pending))
		{
			/* the switch came during this call: profiled from the next */
			pf->switch_pending = false;
			pf->mode = FT_FRAME_PROFILED;
		}
		if (profiled)
			pf->mode = FT_FRAME_PROFILED;
	}
	/* a Hash's child returning no row: the build ends at the next transition */
	if (pf->build != NULL && TupIsNull(result))
		ft_prof_build_end_later(pf->build);

	save_tuplecount = instr->tuplecount;
	instr->tuplecount += TupIsNull(result) ? 0.0 : 1.0;
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
 * ft_prof_resume for the fast path, handing the call's result through: the
 * fast path then keeps nothing across the call, so it needs no stack slot
 * (two instructions a call).
 */
static pg_noinline TupleTableSlot *
ft_prof_resume_passing(TupleTableSlot *result)
{
	ft_prof_resume();
	return result;
}

/*
 * The profiled phase's wrapper as the hot path sees it.  Plain profiled
 * calls (frame profiled, and the call it runs in, if any) take this path:
 * two pointer stores, no clock read.  It need look neither at its caller
 * nor at its own frame: the gate (profiler.h) is open only while no frame
 * on the chain is exact and every frame on this path is profiled (testing
 * the frame too took four more instructions a call, about a point of a
 * count(*): bench/results/2026-12-05g-kind-b).
 * Every other call goes to "slow" (ft_wrap_prof, out of line), so the
 * exact machinery costs plain calls one test.  "core" instances (nodes
 * with a child the executor times itself, a Hash's children) also send
 * the calls that run that child or start the build there, and end the
 * build.  The embedded frame is the one ft_prof_frame_of would find: a
 * node runs only inside its own query's run, when its frames are current.
 * A tick in this code credits the caller (before the link, after the
 * unlink) or the node, as stock's per-call clock reads land in them too.
 * Marking the code for the tick (a flag stored around it, the time then
 * no node's) cost 2.6-5.7 % of a count(*) on a TSC host, more than it
 * brought nodes closer to where the plain query spends its time
 * (bench/results/2026-12-04-kind-a), so it is not done.  The row is
 * counted before the unlink: with all of the call's bookkeeping after
 * it, a parent over short calls read up to 7 points more than perf's
 * picture of the plain query gives it (bench/results/2026-12-05c-kind-a).
 * A loop's first-tuple time comes after it, as in ft_wrap_prof.
 */
static pg_attribute_always_inline TupleTableSlot *
ft_wrap_prof_fast(PlanState *node, const bool tsc, const bool core,
				  const bool buf, const bool wal, const FtProfSlowFn slow,
				  const int isa)
{
	FtUsageFrame *uf = ft_usage_frame_of(node);
	FtNodeInstr *instr = &uf->instr;
	FtProfFrame *pf = &uf->prof;
	TupleTableSlot *result;
	double		save_tuplecount;

	Assert(core == (pf->core_child || pf->build != NULL) ||
		   pf->mode != FT_FRAME_PROFILED);

	/* the gate open: this frame is profiled, and every one below it */
	if (unlikely(ft_prof_gate != FT_FRAME_PROFILED ||
				 (core && ft_prof_call_is_special(node, pf))))
		return slow(node, tsc, buf, wal);
	Assert(pf->mode == FT_FRAME_PROFILED);

	if (buf || wal)
		ft_usage_transition(buf, wal, isa);
	ft_chain_link(uf);
	result = node->ExecProcNodeReal(node);
	if (buf || wal)
		ft_usage_transition(buf, wal, isa);
	if (unlikely(ft_prof_suspended))
		result = ft_prof_resume_passing(result);

	save_tuplecount = instr->tuplecount;
	instr->tuplecount += TupIsNull(result) ? 0.0 : 1.0;
	ft_chain_unlink(uf);

	/*
	 * The first-tuple time once the frame is off the chain: a tick adds to
	 * the counter while it is on, and before 16 the counter is two words,
	 * which a tick between their loads would tear by a second.
	 */
	if (!instr->running)
	{
		instr->running = true;
		ft_instr_set_firsttuple(instr);
	}
	else if (instr->async_mode && save_tuplecount < 1.0)
		ft_instr_set_firsttuple(instr);

	/* (the run's clock: this node's wrapper may be another's, see above) */
	if (core && unlikely(pf->build != NULL && TupIsNull(result)))
		ft_prof_build_end_later(pf->build);
	return result;
}

/*
 * One instance per timer kind and usage, for each instruction set, and
 * their table.  usage: the node counts buffers or WAL or both; its wrapper
 * compares both counters, which halves the instances (a frame is credited
 * only what it counts, and an extra transition is never wrong: usage.h).
 * FT_EACH_TIMER applies a one-argument macro to each timer kind.
 */
#define FT_EACH_TIMER(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9)
#define FT_BODY(isa, t, u) \
	((t) == FT_TIMER_PROF_PHASE_TSC ? \
	 ft_wrap_prof(node, true, false, u, u, FT_ISA_##isa) : \
	 (t) == FT_TIMER_PROF_PHASE_CLOCK_GETTIME ? \
	 ft_wrap_prof(node, false, false, u, u, FT_ISA_##isa) : \
	 (t) == FT_TIMER_PROF_TSC ? \
	 ft_wrap_prof_fast(node, true, false, u, u, ft_##isa##_prof_slow, \
					   FT_ISA_##isa) : \
	 (t) == FT_TIMER_PROF_CLOCK_GETTIME ? \
	 ft_wrap_prof_fast(node, false, false, u, u, ft_##isa##_prof_slow, \
					   FT_ISA_##isa) : \
	 (t) == FT_TIMER_PROF_CORE_TSC ? \
	 ft_wrap_prof_fast(node, true, true, u, u, ft_##isa##_prof_slow, \
					   FT_ISA_##isa) : \
	 (t) == FT_TIMER_PROF_CORE_CLOCK_GETTIME ? \
	 ft_wrap_prof_fast(node, false, true, u, u, ft_##isa##_prof_slow, \
					   FT_ISA_##isa) : \
	 ft_wrap(node, (FtTimer) (t), u, u, FT_ISA_##isa))
#define FT_WT(isa, attr, t) \
static attr TupleTableSlot * \
ft_##isa##_##t##_0(PlanState *node) \
{ \
	return FT_BODY(isa, t, false); \
} \
static attr TupleTableSlot * \
ft_##isa##_##t##_1(PlanState *node) \
{ \
	return FT_BODY(isa, t, true); \
}
/* the profiled phase's calls that are not plain profiled calls */
#define FT_SLOW(isa, attr) \
static attr pg_noinline TupleTableSlot * \
ft_##isa##_prof_slow(PlanState *node, bool tsc, bool buf, bool wal) \
{ \
	return ft_wrap_prof(node, tsc, true, buf, wal, FT_ISA_##isa); \
}
#define FT_WALL(isa, attr) \
	FT_SLOW(isa, attr) \
	FT_WT(isa, attr, 0) FT_WT(isa, attr, 1) FT_WT(isa, attr, 2) \
	FT_WT(isa, attr, 3) FT_WT(isa, attr, 4) FT_WT(isa, attr, 5) \
	FT_WT(isa, attr, 6) FT_WT(isa, attr, 7) FT_WT(isa, attr, 8) \
	FT_WT(isa, attr, 9)
#define FT_ET(isa, t) {ft_##isa##_##t##_0, ft_##isa##_##t##_1}
#define FT_EALL(isa) \
	{FT_ET(isa, 0), FT_ET(isa, 1), FT_ET(isa, 2), FT_ET(isa, 3), FT_ET(isa, 4), \
	 FT_ET(isa, 5), FT_ET(isa, 6), FT_ET(isa, 7), FT_ET(isa, 8), FT_ET(isa, 9)}

typedef ExecProcNodeMtd FtWrapperTable[FT_N_TIMERS][2];

FT_WALL(portable, )
static const FtWrapperTable ft_portable_table = FT_EALL(portable);

/*
 * The AVX2 build, where the CPU and kernel support it: the usage compare
 * at every call of a query with BUFFERS is measurably faster with it.
 */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define FT_HAVE_ISA_VARIANTS 1
FT_WALL(avx2, __attribute__((target("avx2"))))
static const FtWrapperTable ft_avx2_table = FT_EALL(avx2);
#else
#define FT_HAVE_ISA_VARIANTS 0
#endif

static const FtWrapperTable *ft_table = &ft_portable_table;
static const char *ft_isa_name = "portable";

/* the query's timer, which a Gather's re-armed children are put back on */
static inline FtTimer
ft_query_timer(FtTimer timer)
{
	switch (timer)
	{
		case FT_TIMER_PROF_TSC:
		case FT_TIMER_PROF_CORE_TSC:
			return FT_TIMER_PROF_PHASE_TSC;
		case FT_TIMER_PROF_CLOCK_GETTIME:
		case FT_TIMER_PROF_CORE_CLOCK_GETTIME:
			return FT_TIMER_PROF_PHASE_CLOCK_GETTIME;
		default:
			return timer;
	}
}

/*
 * Gather and Gather Merge: the same body, then re-arming the nodes below
 * if this call started the parallel machinery (ft_rearm_below_gather).
 * Instances of their own, sparing other wrappers the test and Gathers an
 * out-of-line level per row; portable only (a Gather's time is not in its
 * compare).  A profiled wrapper changing modes moves the node to another
 * Gather instance, so the (idempotent) re-arm may run twice on one call.
 */
static pg_attribute_always_inline TupleTableSlot *
ft_wrap_gather(PlanState *node, const int t, const bool u)
{
	bool		starting;
	TupleTableSlot *result;

	if (IsA(node, GatherState))
		starting = !((GatherState *) node)->initialized;
	else
		starting = !((GatherMergeState *) node)->initialized;
	result = FT_BODY(portable, t, u);
	if (unlikely(starting))
		ft_rearm_below_gather(node, ft_query_timer((FtTimer) t));
	return result;
}

#define FT_GT(t) \
static TupleTableSlot * \
ft_gather_##t##_0(PlanState *node) \
{ \
	return ft_wrap_gather(node, t, false); \
} \
static TupleTableSlot * \
ft_gather_##t##_1(PlanState *node) \
{ \
	return ft_wrap_gather(node, t, true); \
}
FT_EACH_TIMER(FT_GT)

#define FT_EG(t) {ft_gather_##t##_0, ft_gather_##t##_1},
static const FtWrapperTable ft_gather_table = {FT_EACH_TIMER(FT_EG)};

/*
 * The wrapper a node gets for good, by its timer, usage and whether it is
 * a Gather.  A node whose usage is derived (usage.h) gets the no-usage
 * wrapper: no transitions, and for profiled timing a link for the ticks.
 */
static inline ExecProcNodeMtd
ft_method(PlanState *ps, FtTimer timer)
{
	FtNodeInstr *instr = ps->instrument;
	bool		usage = FT_INSTR_NEED_BUFUSAGE(instr) ||
		FT_INSTR_NEED_WALUSAGE(instr);

	/* (a node that counts either has a frame: the wrappers link it) */
	if (usage && ft_usage_frame_of(ps)->usage_from != NULL)
		usage = false;
	if (IsA(ps, GatherState) || IsA(ps, GatherMergeState))
		return ft_gather_table[timer][usage ? 1 : 0];
	return (*ft_table)[timer][usage ? 1 : 0];
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
FT_EACH_TIMER(FT_FIRST)

#define FT_EF(t) ft_first_##t,
static const ExecProcNodeMtd ft_first[FT_N_TIMERS] = {FT_EACH_TIMER(FT_EF)};

/* Is this one of the methods we put nodes on? */
static bool
ft_is_ours(ExecProcNodeMtd m)
{
	const ExecProcNodeMtd *all = &(*ft_table)[0][0];
	const ExecProcNodeMtd *gathers = &ft_gather_table[0][0];

	for (int i = 0; i < FT_N_TIMERS; i++)
		if (m == ft_first[i])
			return true;
	for (int i = 0; i < FT_N_TIMERS * 2; i++)
		if (m == all[i] || m == gathers[i])
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

/* A node method that returns no tuple, for ft_wrappers_learn_stock. */
static TupleTableSlot *
probe_exec_proc_node(PlanState *node)
{
	return NULL;
}

/*
 * Learn execProcnode.c's static ExecProcNodeFirst and ExecProcNodeInstr by
 * running a dummy node through them, to recognise nodes stock code has
 * (re)armed and leave alone those another extension wrapped.  The dummy's
 * instrumentation needs no timer or usage, so nothing outside it changes.
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
		ereport(LOG,
				(errmsg("fasttime could not identify the executor's instrumentation wrappers"),
				 errdetail("Plan nodes will be instrumented by stock PostgreSQL.")));
}

bool
ft_wrappers_stock_known(void)
{
	return stock_known;
}

/*
 * Is this node on one of our wrappers (not stock's, not another
 * extension's)?  For the profiler, which must know whose calls it sees.
 */
bool
ft_wrappers_node_is_ours(PlanState *ps)
{
	return ft_is_ours(ps->ExecProcNode);
}

/*
 * Put one node on our wrappers if it is instrumented and on a stock one
 * now; leave it alone otherwise (already ours, or another extension's),
 * which makes every walk idempotent.
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
 * planstate_tree_walker descends into initPlan and subPlan lists, whose
 * plans are also in es_subplanstates (CTE scans use them without a
 * SubPlan): a subplan's root is entered only from that list's walk, so
 * each node is visited once.
 */
static bool
ft_wrap_walker(PlanState *ps, void *context)
{
	FtWalk	   *w = (FtWalk *) context;

	if (ps != w->current_root && w->nroots > 0 &&
		bsearch(&ps, w->roots, w->nroots, sizeof(PlanState *), ft_ptr_cmp) != NULL)
		return false;
	/* (a node just switched is ours: the search is for the others) */
	if (ft_wrap_node(ps, w->timer))
	{
		w->switched++;
		w->nodes++;
	}
	else if (ft_is_ours(ps->ExecProcNode))
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
 * A Gather has just (re)initialized its parallel machinery, and a parallel
 * hash join below it has re-armed stock instrumentation: put it back on
 * ours.  Its first leader call ran under stock's, which adds to the same
 * totals in the same units.
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

/* why this process uses the vector build it does, for fasttime_status() */
static char ft_isa_reason[100] = "no x86-64 vector build: portable code";

/* Once per process: choose the vector build of the wrappers. */
void
ft_wrappers_init(void)
{
#if FT_HAVE_ISA_VARIANTS
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx2"))
	{
		ft_table = &ft_avx2_table;
		ft_isa_name = "avx2";
		snprintf(ft_isa_reason, sizeof(ft_isa_reason), "AVX2 supported");
	}
	else
		snprintf(ft_isa_reason, sizeof(ft_isa_reason),
				 "no AVX2: portable code");
#endif
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
		case FT_READS_BOTH:
			return "on";
	}
	return "?";
}

/* Names of timer kinds, for messages. */
const char *
ft_timer_name(FtTimer timer)
{
	static const char *const names[FT_N_TIMERS] = {
		[FT_TIMER_NONE] = "none",
		[FT_TIMER_TSC] = "tsc",
		[FT_TIMER_CLOCK_GETTIME] = "clock_gettime",
		[FT_TIMER_TSC_ORDERED] = "tsc, ordered reads",
		[FT_TIMER_PROF_PHASE_TSC] = "tsc, profiled",
		[FT_TIMER_PROF_PHASE_CLOCK_GETTIME] = "clock_gettime, profiled",
		[FT_TIMER_PROF_TSC] = "tsc, profiled phase",
		[FT_TIMER_PROF_CLOCK_GETTIME] = "clock_gettime, profiled phase",
		[FT_TIMER_PROF_CORE_TSC] = "tsc, profiled phase, core child",
		[FT_TIMER_PROF_CORE_CLOCK_GETTIME] = "clock_gettime, profiled phase, core child",
	};

	return (unsigned int) timer < FT_N_TIMERS ? names[timer] : "?";
}
