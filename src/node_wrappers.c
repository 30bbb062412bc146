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
 * each combination of what a node needs (timer kind, and whether it counts
 * buffers or WAL) is its own function, specialized by the compiler from
 * one always-inline body, and the executor hook picks one per node at
 * executor start; a Gather or Gather Merge gets instances of its own
 * (ft_wrap_gather).  No wrapper tests an option per call, divides, or
 * makes a system call (except the clock_gettime timers, which are the
 * stock clock on purpose).
 *
 * What each wrapper computes is exactly what stock's would:
 *
 * - rows, loops and the first-tuple time: the same code as InstrStopNode,
 *   including the async_mode rule;
 * - buffer and WAL usage: credited at transitions (usage.h).  A call of a
 *   node whose query counts buffers or WAL links the node's frame (its
 *   instrumentation, which node->instrument points at: one load) on top of
 *   the per-backend chain of the calls under way; when it starts (before
 *   it links) and when it returns (before it unlinks) the wrapper compares
 *   pgBufferUsage and pgWalUsage with their values at the previous
 *   transition -- a few vector compares, no stores -- and only when they
 *   moved adds the difference to every frame on the chain, out of line.
 *   Each node thus gets the usage during its calls, which is what stock's
 *   InstrStartNode/InstrStopNode diff gives, including what its functions'
 *   queries, SubPlans and InitPlans did inside its calls; a frame joins or
 *   leaves the chain only at a transition of its own, so the crediting is
 *   exact by construction.  Hash and bitmap nodes under MultiExecProcNode,
 *   async requests and ExecShutdownNode's pair around each running node
 *   run stock's start/stop on their own totals while they are not on the
 *   chain; their callers on the chain get the same usage at the next
 *   transition.  A call that never returns (an error) stays linked until
 *   the executor hook that started the run restores the chain;
 * - time: two RDTSC and one multiply (the TSC timers), or the stock clock
 *   with stock arithmetic (the clock_gettime timers, for machines where
 *   the TSC is not in effect but the cheaper bookkeeping still helps).
 *   Times are written in the unit instr_time has for the query
 *   (FtInstrUnits in compat.h: nanoseconds, or on PostgreSQL 19 with the
 *   server's TSC clock in effect raw TSC ticks, which the server converts),
 *   by a multiply chosen at executor start.
 *
 * The vector code for the buffer and WAL compares comes in two builds of
 * the same source (portable, AVX2), chosen once per process from CPUID by
 * ft_wrappers_init().
 *
 * Exact timing reads the TSC as fasttime.ordered_reads says: ordered
 * (LFENCE;RDTSC) at both ends of a call's interval (FT_TIMER_TSC_ORDERED,
 * the default) or plainly (FT_TIMER_TSC).  A plain read can be taken
 * before the loads the call issued have completed, so the latency of its
 * cache misses lands on
 * whichever interval the pipeline stalls in, the parent's in some runs and
 * the call's own in others (the truth pair mem_leaf, bench/sql/truth.sql).
 * Profiled timing (profiler.h) has wrappers of its own, ft_wrap_prof,
 * whose exact calls always read in order.
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
 * fasttime_status() and t/009_step_clock.pl.
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
 * The wrappers
 * ---------------------------------------------------------------------
 */

/* the last TSC read that ended an exact call (node_wrappers.h) */
uint64		ft_node_last_tsc = 0;

static void ft_rearm_below_gather(PlanState *node, FtTimer timer);
static inline ExecProcNodeMtd ft_method(PlanState *ps, FtTimer timer);

/*
 * The profiler's frame of a node of the query running now, or NULL when
 * it has none (a node of a query that is not profiled, or one the
 * executor made after ExecutorStart, or one of another query: the last
 * two should not happen; the wrapper then times the call exactly).
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
 * The one body every wrapper is built from.  timer (none, TSC plain or
 * ordered, or the stock clock), buf and wal are compile-time constants in
 * each instance, so every test of them below disappears; so is isa, the
 * instruction set of the usage compare.
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
 * Must this call of a node on the profiled phase's "core" wrapper take the
 * slow path?  When it runs a child the executor times itself
 * (ft_prof_core_will_run), or when the node is a Hash's child and the
 * Hash's build frame is not on top of the chain: the build is starting,
 * and the slow path links that frame first (ft_prof_build_link).
 */
static pg_attribute_always_inline bool
ft_prof_call_is_special(PlanState *node, FtProfFrame *pf)
{
	return (pf->build != NULL && ft_chain_top != pf->build) ||
		(pf->core_child && ft_prof_core_will_run(node));
}

/* the out-of-line profiled body: ft_wrap_prof, profiled */
typedef TupleTableSlot *(*FtProfSlowFn) (PlanState *node, bool tsc, bool buf,
										 bool wal);

/*
 * Profiled timing (profiler.h).  profiled: the wrapper of the profiled
 * phase, else of the exact phase (before the switch, and for the frames
 * that stay exact).  A node whose frame is in the other mode moves itself
 * to the other wrapper first.  A call is exact when the wrapper is the
 * exact phase's or when it runs inside an exact call; an exact call is
 * timed with two reads of the profiler's clock (in order, on the TSC: the
 * exact timing the prefix stands for is exact timing's default) and credits the profiled
 * frames below it when it returns (ft_prof_settle_up); so is a call of a
 * node that will run a child the executor times itself
 * (ft_prof_core_will_run).  A profiled call stores two pointers.  Rows, buffers, WAL and the first-tuple time are
 * kept as in ft_wrap, the first-tuple time after the frame is off the
 * chain, so that no tick changes the counter while it is read.
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
		/*
		 * Timed exactly, and linked (if it counts buffers) as a frame of no
		 * profiled query for the call, so that no tick takes it for one.
		 */
		FtProfFrame *own = &uf->prof;
		uint8		own_mode = own->mode;

		own->mode = FT_FRAME_NONE;
		result = ft_wrap(node, tsc ? FT_TIMER_TSC_ORDERED : FT_TIMER_CLOCK_GETTIME,
						 buf, wal, isa);
		own->mode = own_mode;
		return result;
	}
	if (unlikely(pf->mode != (profiled ? FT_FRAME_PROFILED : FT_FRAME_EXACT)))
	{
		FtTimer		other;

		/*
		 * A node with a child the executor times itself gets the profiled
		 * wrapper that asks whether a call will run that child; no other
		 * node's profiled calls pay for the question.
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
		 * between the two would find the call off the chain, and credit the
		 * profiled frames below it an interval that ends inside the call,
		 * which its settle-up credits them again.  Before the switch, the
		 * switch may have come between the test of the mode above and here:
		 * the frame is profiled now, and was not in flight as far as the
		 * switch could see (ft_prof_join_late).
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
		stop = tsc ? FT_TICKS_ORDERED_AT(1) : (uint64) ft_read_clock_gettime_ns();
		if (buf || wal)
			ft_usage_transition(buf, wal, isa);
		ft_prof_resume_if_suspended();

		/*
		 * The unlink and the settle-up as one step, under ft_prof_busy: a
		 * tick between the two would find the call off the chain and credit
		 * the frames below it the whole interval, this call's time in it,
		 * which the settle-up then credits again; a switching tick there
		 * would credit the caller, in flight, its time up to the switch,
		 * this call's in it, and make it profiled, and the settle-up would
		 * credit it this call's time once more.  A tick before the unlink
		 * finds the call on the chain and takes what it owes up to then
		 * (owed_from), or switches it in flight (settled).
		 */
		ft_prof_busy = 1;
		pg_compiler_barrier();
		ft_chain_unlink(uf);
#ifdef FASTTIME_FAULT_INJECTION
		ft_prof_fault_at_return(node);
#endif
		if (likely(!pf->settled))
		{
			ft_prof_add(pf, stop > start ? stop - start : 0, tsc);
			if (unlikely(caller != NULL && caller->mode == FT_FRAME_PROFILED))
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
	/* a Hash's child returning no row: the build is over */
	if (pf->build != NULL && TupIsNull(result))
		ft_prof_build_unlink(pf->build, tsc);

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
 * The profiled phase's wrapper, as the hot path sees it.  Most calls of a
 * profiled query after the switch are plain profiled calls: the node's
 * frame is profiled, and so is the call it runs in (or it runs in none).
 * Those take this path, which stores two pointers around the call and
 * reads no clock; the frame is part of the node's own frame (usage.h), at
 * a fixed offset from the pointer the wrapper loads anyway.  It does not
 * look at the call it runs in: the gate (ft_prof_gate, profiler.h) is open
 * only while no frame on the chain is exact, and a frame on the chain
 * that is not exact is profiled or of no profiled query (passed over by
 * the ticks).  Every other call -- an exact one, one while the gate is
 * shut (the first after a stretch of exact calls opens it again), a node
 * with no profiled frame (whose embedded frame stays exact), a frame in
 * the other mode -- goes to "slow", ft_wrap_prof out of line, so that the
 * exact machinery costs the plain calls nothing (no registers to save,
 * one test).  A node with a child the executor times itself, whose calls
 * that run that child must be exact, and a Hash's child, whose call that
 * starts the Hash's build links the Hash's frame first and whose call
 * returning no row ends it, have an instance of their own ("core"), which
 * also sends those calls to "slow" and ends the build.  The frame used here is the one ft_prof_frame_of finds: a node runs only
 * inside a run of its own query, when its query's frames are current.
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

	/*
	 * The frame is profiled and the gate open (no exact frame on the
	 * chain): with modes 0, 1 and 2, only 2 & 2 has bit 1 set, so one test
	 * stands for both.
	 */
	StaticAssertStmt(FT_FRAME_PROFILED == 2 && FT_FRAME_EXACT == 1 &&
					 FT_FRAME_NONE == 0, "frame modes are 0, 1 and 2");
	Assert(core == (pf->core_child || pf->build != NULL) ||
		   pf->mode != FT_FRAME_PROFILED);

	/* from here to the end, but for the node's call: the wrapper's time */
	ft_prof_in_wrapper = 1;
	if (unlikely((pf->mode & ft_prof_gate & FT_FRAME_PROFILED) == 0 ||
				 (core && ft_prof_call_is_special(node, pf))))
	{
		ft_prof_in_wrapper = 0;
		return slow(node, tsc, buf, wal);
	}
#ifdef FASTTIME_FAULT_INJECTION
	ft_prof_fault_in_wrapper();
#endif

	if (buf || wal)
		ft_usage_transition(buf, wal, isa);
	ft_chain_link(uf);
	ft_prof_in_wrapper = 0;
	result = node->ExecProcNodeReal(node);
	ft_prof_in_wrapper = 1;
	if (buf || wal)
		ft_usage_transition(buf, wal, isa);
	ft_prof_resume_if_suspended();
	ft_chain_unlink(uf);
	if (core && unlikely(pf->build != NULL && TupIsNull(result)))
		ft_prof_build_unlink(pf->build, tsc);

	save_tuplecount = instr->tuplecount;
	instr->tuplecount += TupIsNull(result) ? 0.0 : 1.0;
	if (!instr->running)
	{
		instr->running = true;
		ft_instr_set_firsttuple(instr);
	}
	else if (instr->async_mode && save_tuplecount < 1.0)
		ft_instr_set_firsttuple(instr);
	ft_prof_in_wrapper = 0;
	return result;
}

/*
 * One instance per timer kind and usage, for each instruction set; and the
 * table that finds them.  usage: the node counts buffers or WAL, or both.
 * Such a wrapper compares both counters at each of its transitions,
 * whichever its query counts, which halves the instances; a frame is
 * still credited only with what its node counts (usage.c), and a
 * transition more is never wrong (usage.h).
 */
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
 * The AVX2 build, chosen where the CPU and the kernel support it: W2 and
 * W3 with BUFFERS, whose nodes compare the counters at every call,
 * measured 1.12-1.16 times slower with the portable build
 * (bench/results/2026-12-04-lean).  An AVX-512 build measured no faster
 * than AVX2 anywhere and was removed.
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

/*
 * The timer a Gather's children are put back on when it re-arms them: the
 * query's, which for the profiled phase's wrappers is the profiled
 * query's.
 */
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
 * Gather and Gather Merge: the same body, noting first whether this call
 * starts the node's parallel machinery (initialized still false), and
 * then re-arming the nodes below it (ft_rearm_below_gather).  A Gather is
 * called once per row it returns, so these are instances of their own
 * rather than one out-of-line level around the others: that level (an
 * extra call and the table's look-up per row) cost 6-8 % of the leader's
 * CPU on a parallel query returning 3.3M rows (P1,
 * bench/results/2026-12-04-lean).  One build (portable): a Gather's own
 * compare is not where its time goes.  No other node's wrapper carries
 * the test.  A profiled wrapper that moves the node to the other mode's
 * wrapper (ft_wrap_prof) moves it to the Gather instance of that timer,
 * and calls it: on that one call the re-arm runs twice, which changes
 * nothing (the walk is idempotent).
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
FT_GT(0)
FT_GT(1)
FT_GT(2)
FT_GT(3)
FT_GT(4)
FT_GT(5)
FT_GT(6)
FT_GT(7)
FT_GT(8)
FT_GT(9)

#define FT_EG(t) {ft_gather_##t##_0, ft_gather_##t##_1}
static const FtWrapperTable ft_gather_table = {
	FT_EG(0), FT_EG(1), FT_EG(2), FT_EG(3), FT_EG(4),
	FT_EG(5), FT_EG(6), FT_EG(7), FT_EG(8), FT_EG(9)
};

/*
 * The wrapper a node gets for good, by its timer, whether it counts
 * buffers or WAL, and whether it is a Gather.  A node whose usage is
 * derived from its parent's (usage.h) gets the wrapper of a node that
 * counts neither: no transitions, and for profiled timing a link for the
 * ticks alone.
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

static const ExecProcNodeMtd ft_first[FT_N_TIMERS] = {
	ft_first_0, ft_first_1, ft_first_2, ft_first_3, ft_first_4, ft_first_5,
	ft_first_6, ft_first_7, ft_first_8, ft_first_9
};

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
	switch (timer)
	{
		case FT_TIMER_NONE:
			return "none";
		case FT_TIMER_TSC:
			return "tsc";
		case FT_TIMER_CLOCK_GETTIME:
			return "clock_gettime";
		case FT_TIMER_TSC_ORDERED:
			return "tsc, ordered reads";
		case FT_TIMER_PROF_PHASE_TSC:
			return "tsc, profiled";
		case FT_TIMER_PROF_PHASE_CLOCK_GETTIME:
			return "clock_gettime, profiled";
		case FT_TIMER_PROF_TSC:
			return "tsc, profiled phase";
		case FT_TIMER_PROF_CLOCK_GETTIME:
			return "clock_gettime, profiled phase";
		case FT_TIMER_PROF_CORE_TSC:
			return "tsc, profiled phase, core child";
		case FT_TIMER_PROF_CORE_CLOCK_GETTIME:
			return "clock_gettime, profiled phase, core child";
	}
	return "?";
}
