/*-------------------------------------------------------------------------
 *
 * profiler.c
 *	  Profiled node timing: the periodic tick that credits elapsed time to
 *	  the executing plan nodes, and the switch from exact timing to it.
 *
 * With fasttime.node_timing = profile, the node wrappers keep the chain of
 * calls under way (usage.h, profiler.h) and each run of the executor
 * (ExecutorRun, ExecutorFinish) ticks: a timeout of PostgreSQL's own
 * timeout machinery (timeout.c), every fasttime.profile_interval
 * milliseconds, whose handler reads the clock once and credits the time
 * since the previous tick to the profiled frames on top of the chain.  A
 * late or lost tick loses nothing: the next one credits the measured
 * elapsed time.  Ticks lengthen as a run goes on: after
 * FT_PROF_TICKS_PER_STEP ticks at one interval the interval doubles, up
 * to fasttime.profile_interval_max, so that short runs are sampled finely
 * and long ones, which collect ticks anyway, pay for fewer signals.  A
 * node's time is thus its share of the ticks' measured time, and since a tick credits every node whose call is under way, a
 * node's inclusive time contains its callees' by construction.
 *
 * Every run starts exact: the wrappers time each call with two clock
 * reads and no tick credits anything.  When the outermost run has lasted
 * fasttime.profile_after milliseconds -- or earlier, once its exact calls'
 * clock reads are estimated to have cost a quarter of that (the reads
 * made, from the calls counted in the frames so far, times the cost of
 * one read of the run's clock, measured once per backend): on a slow
 * clock the exact prefix is bounded by reads, not by time, so that its
 * numbers are not mostly the clock's own cost -- the tick switches every query of
 * the run to profiled frames at once: each exact call in flight keeps its
 * exact time up to that instant (the tick adds it) and is profiled from
 * then on, and the other frames are profiled from their next call.  Every
 * call is thus counted once, either side of the switch.  Runs shorter than
 * the threshold keep exact numbers throughout.
 *
 * A Hash, which the executor drives through MultiExecProcNode where no
 * wrapper sees it, is timed through its child: the child's call that
 * starts the build links a frame of the Hash's on the chain, and its call
 * that returns no row, which ends the build, unlinks it
 * (ft_prof_build_link), so that the Hash's build is exact or profiled like
 * any call, and core's clock reads around it are turned off (prof_plan.c).
 * Some calls stay exact after the switch: those of the nodes below a
 * Parallel Hash, a Bitmap Index Scan, a BitmapAnd or a BitmapOr (which the
 * executor times itself), of nodes with async children and of async
 * nodes, the calls of a Hash Join that build a Parallel Hash's table and
 * of a Bitmap Heap Scan that run its bitmap nodes (so that they contain
 * the time core measured for those children), and every call made inside
 * an exact one.  An exact
 * call on top of profiled frames credits them with its duration when it
 * returns -- a tick that lands inside it credits them its time so far --
 * and the next tick credits only the rest of its interval; a tick that
 * lands inside an exact call leaves that rest to the next tick that lands
 * outside one, since its instant is no sample of it.  So a profiled
 * node's inclusive time contains its exact callees' exactly, and no time
 * is handed to a node for being on the chain when an exact call starts.
 *
 * A tick that finds the backend waiting (it reports a wait event: a
 * Gather's leader waiting for its workers, a lock, pg_sleep) stops the
 * ticks until the next call of a profiled query starts or returns
 * (ft_prof_suspend, ft_prof_resume): PostgreSQL's SIGALRM handler sets
 * the process latch, so every tick would wake the waiting backend, and
 * while no call starts or returns every tick would credit the same
 * frames.  The transition that resumes the ticks credits those frames the
 * time since the last tick, exactly.
 *
 * Every credit is converted to the unit of the query whose node it is
 * credited to (FtInstrUnits, compat.h: on 19 the unit of instr_time
 * follows timing_clock_source when the query started, and a query run by
 * a function inside a node may have started under another setting than
 * the node's own query), not to the unit of the query running now.
 *
 * The ticks run only while a profiled query runs; the timeout is
 * registered in each backend at first use (a registration made in
 * _PG_init of a preloaded library is undone by InitializeTimeouts in each
 * backend).  The chain is restored by the executor hooks when a run ends,
 * by error or not (ft_usage_run_end), and cleared at transaction abort.
 *
 * What is decided per plan before a run (which nodes stay exact, the
 * frames, whether profiling can pay) and the error of the credited times
 * read after it are prof_plan.c's.
 *
 * src/profiler.c
 *
 *-------------------------------------------------------------------------
 */
#include "compat.h"

#include "nodes/execnodes.h"
#include "nodes/nodeFuncs.h"
#include "utils/memutils.h"
#include "utils/timeout.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "clock_state.h"
#ifdef FASTTIME_FAULT_INJECTION
#include "fault_injection.h"	/* test/fault/, fault builds only */
#endif
#include "profiler.h"
#include "usage.h"

/*
 * What the tick (a signal handler) shares with main code.  Variables the
 * handler writes, or that main code changes while a tick may land, are
 * volatile.  The rest below -- the query stack (ft_prof_stack,
 * ft_prof_depth), the outermost run's clock, start and thresholds
 * (ft_prof_tsc, ft_prof_run_start, ft_prof_threshold, ft_prof_max_calls,
 * ft_prof_max_ms) -- the handler only reads, and main code changes them
 * only with ft_prof_busy set and compiler barriers around the change
 * (pg_compiler_barrier(): no store moves across it), or while no run is
 * under way (ft_prof_depth is 0, which the handler tests first).  A tick
 * that finds ft_prof_busy set credits nothing and leaves its interval to
 * the next one, so it never sees them half-changed.  They are not volatile
 * so that main code's reads of them need not be.
 */

/* the chain, and the clock at the last tick */
volatile sig_atomic_t ft_prof_busy = 0;
volatile uint8 ft_prof_in_wrapper = 0;
volatile uint8 ft_prof_gate = FT_FRAME_NONE;
volatile uint64 ft_prof_last = 0;

/*
 * Time since the last tick that exact calls on top of profiled frames
 * have credited to those frames (the next tick credits only the rest of
 * its interval), and time of earlier intervals still to be credited (a
 * tick that lands inside such an exact call is no sample of the rest of
 * its interval: the next tick that lands outside one credits it).
 */
static volatile uint64 ft_prof_carved = 0;
static volatile uint64 ft_prof_pending = 0;

/* the frames of the query running now (made current by ft_prof_enter) */
FtProfFrame **ft_prof_frames = NULL;
uint32		ft_prof_nframes = 0;

/* settings */
int			ft_node_timing = FT_NODE_TIMING_EXACT;
int			ft_profile_interval_ms = 1;
int			ft_profile_interval_max_ms = 4;
int			ft_profile_after_ms = 20;

/*
 * The timeout, once registered in this backend; ft_prof_unavailable when
 * it could not be (every user timeout slot taken): profiled timing then
 * falls back to exact timing in this backend.
 */
static bool ft_prof_registered = false;
static bool ft_prof_unavailable = false;
static TimeoutId ft_prof_timeout;

/* the queries running now, outermost first */
static FtProfQuery **ft_prof_stack = NULL;
static int	ft_prof_depth = 0;
static int	ft_prof_stack_size = 0;

/* the outermost run: its clock, start, threshold, and whether it switched */
static bool ft_prof_tsc = false;
static uint64 ft_prof_run_start = 0;
static uint64 ft_prof_threshold = 0;
static double ft_prof_max_calls = 0;	/* the exact prefix's read bound */
static volatile bool ft_prof_switched = false;
static volatile uint64 ft_prof_switch_at = 0;	/* the clock at the switch */

/*
 * The tick's interval in the outermost run: the one the timeout runs at
 * now, the one the tick wants (ft_prof_rearm_pending asks main code to
 * re-arm the timeout at it: ft_prof_rearm), the longest it may reach, and
 * the ticks taken at the current one since the switch or the last re-arm.
 */
static volatile int ft_prof_cur_ms = 1;
static volatile int ft_prof_want_ms = 1;
static int	ft_prof_max_ms = 1;
static volatile uint32 ft_prof_step_ticks = 0;
volatile sig_atomic_t ft_prof_rearm_pending = 0;

static void ft_prof_tick(void);

/*
 * The tick stopped itself in a wait (ft_prof_suspend), and the instant it
 * was due then.
 */
volatile sig_atomic_t ft_prof_suspended = 0;
static TimestampTz ft_prof_suspend_fin = 0;

#ifdef FASTTIME_FAULT_INJECTION
/* fasttime.fault_switch_at_return: this run's switch instant has come */
static bool ft_prof_fault_switch_armed = false;

static void ft_prof_fault_tick(void);
#endif

/* cost of one read of each clock, ns, measured at first use; 0 unknown */
static double ft_prof_read_ns[2] = {0, 0};

/* what this backend has done, for fasttime_status() */
static volatile uint64 ft_prof_ticks_total = 0;
static volatile uint64 ft_prof_deferred_total = 0;

/* the profiler's clock: fasttime's TSC, or clock_gettime nanoseconds */
static inline uint64
ft_prof_now(bool tsc)
{
	return tsc ? ft_node_ticks() : (uint64) ft_read_clock_gettime_ns();
}

/* time elapsed since the last event; never negative */
static inline uint64
ft_prof_since_last(uint64 now)
{
	uint64		last = ft_prof_last;

	return now > last ? now - last : 0;
}

/* a difference of the profiler's clock in milliseconds (the footer's) */
static inline double
ft_prof_ms(uint64 delta)
{
	return ft_prof_tsc ? (double) delta * 1000.0 / ft_conv.hz :
		(double) delta / 1e6;
}

/*
 * Credit a clock difference to the profiled frames from "from" down (the
 * nodes whose calls are under way there), stopping at the first exact one.
 */
static inline void
ft_prof_credit(FtProfFrame *from, uint64 delta, bool tsc)
{
	const FtInstrUnits *u = NULL;
	uint64		units = 0;

	if (delta == 0)
		return;
	for (FtProfFrame *f = from; f != NULL && f->mode == FT_FRAME_PROFILED; f = ft_prof_below(f))
	{
		/* each frame in its own query's unit: converted once per query */
		if (f->units != u)
		{
			u = f->units;
			units = ft_prof_units(u, delta, tsc);
		}
		ft_instr_time_add_units(&f->instr->counter, units);
	}
}

/*
 * Credit a tick's sample of time -- time no exact call accounted for,
 * given to the frames the chain holds at the tick's instant -- from
 * "from" down, and note the sample in those frames and in every query
 * running: what the node's error (ft_prof_node_error) is made of.  The
 * frames' time is exact before the switch (no frame is profiled: nothing
 * is credited), and so is a credit made by a transition rather than a
 * tick (ft_prof_resume): neither is a sample.  Plain stores only: this
 * runs in the tick's signal handler.
 */
static inline void
ft_prof_credit_sample(FtProfFrame *from, uint64 delta, bool tsc)
{
	double		ms;
	double		sq;

	ft_prof_credit(from, delta, tsc);
	if (delta == 0 || !ft_prof_switched)
		return;
	ms = tsc ? (double) delta * 1000.0 / ft_conv.hz : (double) delta / 1e6;
	sq = ms * ms;
	for (FtProfFrame *f = from; f != NULL && f->mode == FT_FRAME_PROFILED; f = ft_prof_below(f))
	{
		f->sample_ticks++;
		f->sample_sq_ms += sq;
	}
	for (int i = 0; i < ft_prof_depth; i++)
	{
		FtProfQuery *q = ft_prof_stack[i];

		q->samples++;
		q->sample_ms += ms;
		q->sample_sq_ms += sq;
	}
}

/*
 * An exact call on top of a profiled frame has returned: credit what it
 * owes (its duration since its start, the switch or the last tick that
 * landed in it) to the profiled frames from "from" down, and note it as
 * time the next tick must not credit again.  Its start credited nothing:
 * the time before it belongs to whatever was executing then, which only
 * a tick can tell (crediting it to the frames below the call, which
 * happen to be the chain when it starts, handed a node rescanned once per
 * outer row the time its callers spent between rows).  The caller holds
 * ft_prof_busy from before it unlinked the call (node_wrappers.c), so
 * that no tick sees the call off the chain and not yet settled.
 */
void
ft_prof_settle_up(FtProfFrame *from, uint64 delta, uint64 now, bool tsc)
{
	uint64		span;

	Assert(ft_prof_busy);
	ft_prof_credit(from, delta, tsc);
	/* exact time inside this tick interval: no more than the interval */
	span = ft_prof_since_last(now);
	ft_prof_carved += Min(delta, span);
}

/*
 * The switch, in the tick at "now": every exact call in flight on the
 * chain keeps its exact time up to now and is profiled from now on; an
 * exact call that stays exact (permanent, or a call running a child the
 * executor times itself, which stays exact to its end so as to contain
 * that child) owes the frames below it only its time from now; every
 * other frame of the running queries is profiled from its next call.  Before the switch no frame is profiled,
 * so nothing is owed from before.  Each query on the stack notes the run's
 * time so far as its exact prefix (EXPLAIN (CLOCK_SOURCE) shows it).
 */
static void
ft_prof_switch(uint64 now)
{
	uint64		elapsed = now > ft_prof_run_start ? now - ft_prof_run_start : 0;
	double		exact_ms = ft_prof_ms(elapsed);

	for (FtProfFrame *f = ft_chain_prof(ft_chain_top); f != NULL; f = ft_prof_below(f))
	{
		if (f->mode != FT_FRAME_EXACT)
			continue;
		if (f->permanent)
			f->owed_from = now;
		else if (f->core_call)
		{
			/*
			 * It runs a child the executor times itself (a Hash Join's
			 * build): profiled from now on, it would lose to that child
			 * whatever the ticks after the last one in it do not see, and
			 * read shorter than it.  It stays exact to its end, owing the
			 * frames below it its time from now, like a permanent one.
			 */
			f->owed_from = now;
			f->switch_pending = true;
		}
		else
		{
			ft_prof_add(f, now > f->start ? now - f->start : 0, ft_prof_tsc);
			f->settled = true;
			f->mode = FT_FRAME_PROFILED;
		}
	}
	for (int i = 0; i < ft_prof_depth; i++)
	{
		FtProfQuery *q = ft_prof_stack[i];

		for (int j = 0; j < q->nframes; j++)
		{
			if (q->frames[j] != NULL && !q->frames[j]->permanent &&
				!q->frames[j]->switch_pending)
				q->frames[j]->mode = FT_FRAME_PROFILED;
		}
		if (!q->switched)
		{
			q->switched = true;
			q->exact_ms = exact_ms;
		}
	}
	ft_prof_switch_at = now;
	ft_prof_switched = true;
}

/*
 * An exact call of the exact phase's wrapper has just linked its frame and
 * found it profiled: the switch came after the wrapper tested the mode and
 * before the link, so it did not find the call in flight, and made the
 * frame profiled with the rest.  Do now what it would have done a moment
 * later (the caller holds ft_prof_busy, so no tick runs meanwhile): a call
 * that runs a child the executor times itself stays exact to its end,
 * owing the frames below it its time from the switch; any other keeps its
 * exact time up to the switch and is profiled from there (settled), its
 * frame on the chain for the ticks.  Without this, the exact time of the
 * whole call would be added on top of the ticks it gets, and its caller,
 * which the switch found in flight and credited up to then, would be
 * credited the call's time from its start once more.
 */
void
ft_prof_join_late(FtProfFrame *pf, uint64 start)
{
	uint64		at = ft_prof_switch_at;

	if (pf->core_call)
	{
		pf->mode = FT_FRAME_EXACT;
		pf->owed_from = Max(start, at);
		pf->switch_pending = true;
	}
	else
	{
		ft_prof_add(pf, at > start ? at - start : 0, ft_prof_tsc);
		pf->settled = true;
	}
}

/*
 * A Hash's child is called and the Hash's build frame (prof_plan.c) is not
 * on top of the chain: the build starts.  Link the frame, so that the
 * Hash's own work between its child's calls (hashing and inserting each
 * row) is on the chain as the Hash's, and the child's calls run on top of
 * it.  An exact frame (before the switch) starts as an exact call does
 * (node_wrappers.c): the fast path's gate shut, the clock read, the start
 * and the link as one step under ft_prof_busy; the switch then finds it in
 * flight like any exact call.  A profiled one just links.
 */
void
ft_prof_build_link(FtUsageFrame *bf, bool tsc)
{
	FtProfFrame *bp = &bf->prof;

	ft_prof_busy = 1;
	pg_compiler_barrier();
	if (bp->mode == FT_FRAME_PROFILED)
	{
		FtProfFrame *below = ft_chain_prof(ft_chain_top);

		/*
		 * A build run inside an exact call (below a Parallel Hash or a
		 * bitmap node, or an async one) is exact too, as any call made
		 * inside one: a profiled frame there would take ticks its exact
		 * caller's time does not contain.
		 */
		if (below != NULL && below->mode == FT_FRAME_EXACT)
		{
			bp->mode = FT_FRAME_EXACT;
			bp->build_exact = true;
		}
	}
	if (bp->mode == FT_FRAME_EXACT)
	{
		ft_prof_gate = FT_FRAME_NONE;
		bp->start = ft_prof_now(tsc);
		bp->owed_from = bp->start;
	}
	ft_chain_link(bf);
	pg_compiler_barrier();
	ft_prof_busy = 0;
}

/*
 * A Hash's child returned no row: the build is over (MultiExecPrivateHash
 * stops at the first empty slot), and the child's frame is off the chain.
 * Unlink the Hash's build frame as an exact call returns -- its time added
 * unless the switch took it over in flight (settled), and owed to the
 * profiled frames below it -- or, profiled, just unlink it.
 */
void
ft_prof_build_unlink(FtUsageFrame *bf, bool tsc)
{
	FtProfFrame *bp = &bf->prof;
	bool		exact = (bp->mode == FT_FRAME_EXACT);
	uint64		stop = exact ? ft_prof_now(tsc) : 0;

	ft_prof_busy = 1;
	pg_compiler_barrier();
	ft_chain_unlink(bf);
	if (bp->settled)
		bp->settled = false;
	else if (exact)
	{
		FtProfFrame *below = ft_chain_prof(bf->caller);

		ft_prof_add(bp, stop > bp->start ? stop - bp->start : 0, tsc);
		if (below != NULL && below->mode == FT_FRAME_PROFILED)
			ft_prof_settle_up(below, stop > bp->owed_from ? stop - bp->owed_from : 0,
							  stop, tsc);
	}
	if (bp->build_exact)
	{
		bp->build_exact = false;
		bp->mode = FT_FRAME_PROFILED;
	}
	pg_compiler_barrier();
	ft_prof_busy = 0;
}

/*
 * The tick wants a longer interval (ft_prof_lengthen): re-arm the timeout
 * at it, in main code -- the slow path of a node call, exact or profiled
 * (ft_prof_rearm_if_asked) -- since timeout.c's enable functions are not
 * made to be called from a timeout handler.  The first tick at the new
 * interval comes one interval from now; whatever time passes until then,
 * the tick credits as it measures it.  The count of ticks at the interval
 * starts again before the tick may count, so that no tick of the old
 * interval counts against the new one.
 */
void
ft_prof_rearm(void)
{
	int			want = ft_prof_want_ms;

	if (ft_prof_depth > 0 && want != ft_prof_cur_ms)
	{
		ft_prof_step_ticks = 0;
		pg_compiler_barrier();
		enable_timeout_every(ft_prof_timeout,
							 TimestampTzPlusMilliseconds(GetCurrentTimestamp(), want),
							 want);
		pg_compiler_barrier();
		ft_prof_cur_ms = want;
#ifdef FASTTIME_FAULT_INJECTION
		if (ft_fault_lengthen_in_gate_open)
			ereport(LOG,
					(errmsg("fasttime fault injection: profiled timing's tick re-armed at %d ms", want)));
#endif
	}
	pg_compiler_barrier();
	ft_prof_rearm_pending = 0;
}

/*
 * A plain profiled call found the fast path's gate shut (an exact call
 * shut it, and may have returned since, or the tick wants the timeout
 * re-armed, or stopped itself in a wait): resume or re-arm the tick if
 * asked, and open the gate if no frame on the chain is exact.  Runs in
 * main code, before the call links its own (profiled) frame; a tick only
 * ever makes frames profiled, so what the walk finds stays true until
 * main code links or makes an exact frame, which shuts the gate first.
 * One walk per stretch of exact calls.  A tick that lands after the walk
 * and shuts the gate to ask for a re-arm (or stops itself) has its
 * shutting undone by the opening: so the opening looks again once the
 * gate is open, and does what the tick asked.
 */
void
ft_prof_gate_open(void)
{
	ft_prof_resume_if_suspended();
	ft_prof_rearm_if_asked();
	for (FtProfFrame *f = ft_chain_prof(ft_chain_top); f != NULL; f = ft_prof_below(f))
	{
		if (f->mode == FT_FRAME_EXACT)
			return;
	}
#ifdef FASTTIME_FAULT_INJECTION
	if (ft_fault_lengthen_in_gate_open && ft_prof_switched &&
		!ft_prof_rearm_pending && ft_prof_cur_ms < ft_prof_max_ms)
	{
		/* the tick that asks for the longer interval lands here */
		ft_prof_step_ticks = FT_PROF_TICKS_PER_STEP - 1;
		ft_prof_fault_tick();
	}
#endif
	ft_prof_gate = FT_FRAME_PROFILED;
	pg_compiler_barrier();
	ft_prof_resume_if_suspended();
	ft_prof_rearm_if_asked();
}

#ifdef FASTTIME_FAULT_INJECTION
/*
 * Fault builds (fasttime.fault_switch_in_link): the switch, now, as the
 * tick that would land here does it -- unless the run has switched.
 */
void
ft_prof_fault_switch(void)
{
	uint64		now;

	if (ft_prof_depth == 0 || ft_prof_switched)
		return;
	now = ft_prof_now(ft_prof_tsc);
	ft_prof_carved = 0;
	ft_prof_pending = 0;
	ft_prof_last = now;
	ft_prof_switch(now);
}

/*
 * Fault builds: the tick, delivered here as the timeout machinery would
 * deliver it (with SIGALRM blocked meanwhile, so that a real tick cannot
 * land inside this one; it comes right after instead).
 */
static void
ft_prof_fault_tick(void)
{
	sigset_t	alrm;
	sigset_t	saved;

	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	sigprocmask(SIG_BLOCK, &alrm, &saved);
	ft_prof_tick();
	sigprocmask(SIG_SETMASK, &saved, NULL);
}

/* Does a fault setting name this node's type, as EXPLAIN names it? */
static bool
ft_prof_fault_names(const char *setting, PlanState *node)
{
	const char *name;

	if (setting == NULL || setting[0] == '\0')
		return false;
	switch (nodeTag(node))
	{
		case T_AggState:
			name = "Aggregate";
			break;
		case T_BitmapHeapScanState:
			name = "Bitmap Heap Scan";
			break;
		case T_FunctionScanState:
			name = "Function Scan";
			break;
		case T_HashJoinState:
			name = "Hash Join";
			break;
		case T_LimitState:
			name = "Limit";
			break;
		case T_MaterialState:
			name = "Materialize";
			break;
		case T_NestLoopState:
			name = "Nested Loop";
			break;
		case T_SeqScanState:
			name = "Seq Scan";
			break;
		case T_SortState:
			name = "Sort";
			break;
		case T_SubqueryScanState:
			name = "Subquery Scan";
			break;
		default:
			return false;
	}
	return strcmp(setting, name) == 0;
}

/*
 * Fault builds: an exact call of this node has just left the chain, and
 * has not settled its time with the frames below it yet.
 * fasttime.fault_tick_at_return delivers a tick here, at every such
 * return of a node of the type it names; fasttime.fault_switch_at_return
 * makes the run's first one the instant of the switch (ft_prof_tick
 * switches at no other until then).
 */
void
ft_prof_fault_at_return(PlanState *node)
{
	if (ft_prof_depth == 0)
		return;
	if (!ft_prof_fault_switch_armed &&
		ft_prof_fault_names(ft_fault_switch_at_return, node))
	{
		ft_prof_fault_switch_armed = true;
		ft_prof_fault_tick();
	}
	if (ft_prof_fault_names(ft_fault_tick_at_return, node))
		ft_prof_fault_tick();
}

/*
 * Fault builds: a plain profiled call's wrapper is running its own code
 * (ft_prof_in_wrapper is set); fasttime.fault_tick_in_wrapper delivers a
 * tick here.
 */
void
ft_prof_fault_in_wrapper(void)
{
	if (ft_prof_depth > 0 && ft_fault_tick_in_wrapper)
		ft_prof_fault_tick();
}
#endif

/*
 * The calls the running queries' nodes have made so far (each call
 * returns a row or ends a loop; calls cut short by a LIMIT are not
 * counted): the tick's estimate of the exact prefix's reads, two a call.
 */
static double
ft_prof_calls_so_far(void)
{
	double		calls = 0;

	for (int i = 0; i < ft_prof_depth; i++)
	{
		FtProfQuery *q = ft_prof_stack[i];

		for (int j = 0; j < q->nframes; j++)
		{
			if (q->frames[j] != NULL)
			{
				FtNodeInstr *instr = q->frames[j]->instr;

				calls += instr->tuplecount + instr->ntuples + instr->nloops;
			}
		}
	}
	return calls;
}

/*
 * The cost of one read of a clock as the exact calls read it (the TSC in
 * order), measured once per backend at first use (a few hundred reads,
 * microseconds on any clock; the median of five batches, so that an
 * interrupt in one does not count): what bounds the exact prefix by reads.
 */
static double
ft_prof_measure_read_ns(bool tsc)
{
	double		batch[5];

	if (ft_prof_read_ns[tsc] > 0)
		return ft_prof_read_ns[tsc];
	for (int b = 0; b < 5; b++)
	{
		int64		t0;
		volatile uint64 sink = 0;

		t0 = ft_read_clock_gettime_ns();
		for (int i = 0; i < 64; i++)
			sink += tsc ? ft_node_ticks_ordered() : (uint64) ft_read_clock_gettime_ns();
		batch[b] = (double) (ft_read_clock_gettime_ns() - t0) / 64.0;
		(void) sink;
	}
	/* the median: five values, insertion sort */
	for (int i = 1; i < 5; i++)
		for (int j = i; j > 0 && batch[j] < batch[j - 1]; j--)
		{
			double		t = batch[j];

			batch[j] = batch[j - 1];
			batch[j - 1] = t;
		}
	ft_prof_read_ns[tsc] = Max(batch[2], 0.1);
	return ft_prof_read_ns[tsc];
}

/*
 * After FT_PROF_TICKS_PER_STEP ticks of profiled time at one interval, ask
 * for twice that interval, up to fasttime.profile_interval_max: a short
 * run keeps the ticks it needs to be precise, and a long run, whose tick
 * count keeps growing anyway, pays for fewer ticks a second (a timer
 * signal costs 10 to 50 us on a virtual machine).  The schedule depends
 * on nothing but the count of ticks, never on what the nodes do, so every
 * tick still samples an instant unrelated to the plan.  Only main code may
 * re-arm the timeout: the tick asks for it and shuts the fast path's gate,
 * so that the next node call takes the slow path, which re-arms it
 * (ft_prof_rearm).  Until then the ticks go on at the old interval and
 * count nothing, and each shuts the gate again, in case an opening under
 * way when the asking tick came undid its shutting; a run that makes no
 * further node call (its last call is under way) keeps the old interval,
 * which costs it no precision.
 */
static inline void
ft_prof_lengthen(void)
{
	if (ft_prof_rearm_pending)
	{
		ft_prof_gate = FT_FRAME_NONE;
		return;
	}
	if (ft_prof_cur_ms >= ft_prof_max_ms)
		return;
	if (++ft_prof_step_ticks < FT_PROF_TICKS_PER_STEP)
		return;
	ft_prof_want_ms = Min(ft_prof_cur_ms * 2, ft_prof_max_ms);
	ft_prof_rearm_pending = 1;
	ft_prof_gate = FT_FRAME_NONE;
}

/*
 * Has the exact prefix of the outermost run lasted long enough, by time or
 * by its reads?  (Fault builds with fasttime.fault_switch_at_return: once
 * the instant it names has come, and not before.)
 */
static inline bool
ft_prof_switch_due(uint64 now)
{
#ifdef FASTTIME_FAULT_INJECTION
	if (ft_fault_switch_at_return != NULL && ft_fault_switch_at_return[0] != '\0')
		return ft_prof_fault_switch_armed;
#endif
	return now - ft_prof_run_start >= ft_prof_threshold ||
		ft_prof_calls_so_far() >= ft_prof_max_calls;
}

/*
 * Credit the time since the last tick (or resumption) as of "now": to
 * the profiled frames on top of the chain, or, inside an exact call on top
 * of profiled frames, that call's time so far to the frames below it and
 * the rest to the next instant outside exact calls.  The tick's work
 * (sample: this instant is a sample of the interval, and one in a profiled
 * wrapper's own code credits it to no node), and the resumption's
 * (ft_prof_resume: it credits the time since the tick that stopped, which
 * the chain held all along, exactly; only time still pending from earlier
 * ticks is a sample); the caller keeps ticks out.
 */
static void
ft_prof_credit_until(uint64 now, bool sample)
{
	uint64		span;
	uint64		rest;
	FtProfFrame *top = ft_chain_prof(ft_chain_top);
	FtProfFrame *exact = NULL;
	FtProfFrame *below;

	/* the outermost of the exact calls on top of the chain, if any */
	for (below = top; below != NULL && below->mode == FT_FRAME_EXACT; below = ft_prof_below(below))
		exact = below;
	if (exact != NULL && below != NULL)
	{
		/*
		 * Inside an exact call on top of profiled frames: its time so far
		 * is theirs, exactly (what it would owe them when it returns).
		 */
		uint64		part = now > exact->owed_from ? now - exact->owed_from : 0;

		ft_prof_credit(below, part, ft_prof_tsc);
		ft_prof_carved += part;
		exact->owed_from = now;
	}

	/* the interval's time that no exact call accounted for */
	span = ft_prof_since_last(now);
	rest = span > ft_prof_carved ? span - ft_prof_carved : 0;
	ft_prof_carved = 0;
	ft_prof_last = now;
	if (exact == NULL && sample && ft_prof_in_wrapper)
	{
		/*
		 * A sample of that time in a profiled wrapper's own code: time the
		 * uninstrumented query does not spend, credited to no node
		 * (ft_prof_in_wrapper), and shown as such.
		 */
		double		ms = ft_prof_ms(rest + ft_prof_pending);

		for (int i = 0; i < ft_prof_depth; i++)
		{
			ft_prof_stack[i]->wrapper_ticks++;
			ft_prof_stack[i]->wrapper_ms += ms;
		}
		ft_prof_pending = 0;
	}
	else if (exact == NULL)
	{
		/* a sample of that time: the chain at this instant holds it */
		if (sample)
			ft_prof_credit_sample(top, rest + ft_prof_pending, ft_prof_tsc);
		else
		{
			ft_prof_credit(top, rest, ft_prof_tsc);
			ft_prof_credit_sample(top, ft_prof_pending, ft_prof_tsc);
		}
		ft_prof_pending = 0;
	}
	else
	{
		/*
		 * This instant is in exact time, so it is no sample of the rest:
		 * the next tick that lands outside exact calls credits it.
		 */
		ft_prof_pending += rest;
	}
}

/*
 * Is the backend waiting (it has reported a wait event: on its latch, a
 * lock, a condition variable, I/O)?  Read in the tick, as the statistics
 * collector reads it from other processes.
 */
static inline bool
ft_prof_waiting(void)
{
	return my_wait_event_info != NULL &&
		*(volatile uint32 *) my_wait_event_info != 0;
}

/*
 * The tick's timeout while it is stopped: a backstop only, should no
 * transition come to resume it (a wait of a second wakes once).
 */
#define FT_PROF_SUSPENDED_MS 1000

/*
 * In the tick, which found the backend waiting: stop ticking until the
 * next transition.  PostgreSQL's SIGALRM handler sets the process latch
 * before it runs any timeout's handler, so every tick wakes a backend
 * that sleeps on its latch -- a Gather's leader waiting for its workers,
 * a lock wait, pg_sleep -- which then goes back to sleep: hundreds of
 * wake-ups a second for nothing, since while no call starts or returns
 * the chain does not change and every tick would credit the same frames.
 * So the periodic timeout is replaced by a one-shot one a second away
 * (timeout.c re-enables a periodic timeout after its handler only if it
 * is still periodic), the gate is shut, so that the next plain profiled
 * call starts on the slow path, and ft_prof_suspended makes every other
 * transition check: the first resumes the tick (ft_prof_resume) before
 * it changes the chain, and credits the time since this tick to the chain
 * as it was all along, exactly.  The instant the tick was due is kept, so
 * that it resumes on the same grid of instants.
 */
static void
ft_prof_suspend(void)
{
	ft_prof_suspend_fin = get_timeout_finish_time(ft_prof_timeout);
	ft_prof_suspended = 1;
	ft_prof_gate = FT_FRAME_NONE;
	enable_timeout_after(ft_prof_timeout, FT_PROF_SUSPENDED_MS);
}

/*
 * The first transition after the tick stopped itself (main code, before
 * the chain changes): credit the time since the last tick to the chain,
 * which has not changed since -- not a sample, the time of these very
 * frames -- and arm the periodic timeout again, at the interval the tick
 * wants (so a re-arm it asked for meanwhile is done too), its next instant
 * on the grid the stopped tick was on.
 */
void
ft_prof_resume(void)
{
	TimestampTz now_ts;
	TimestampTz fin;
	int			ms = ft_prof_want_ms;
	int64		step;

	if (ft_prof_depth > 0)
	{
		ft_prof_busy = 1;
		pg_compiler_barrier();
		ft_prof_credit_until(ft_prof_now(ft_prof_tsc), false);
		pg_compiler_barrier();
		ft_prof_busy = 0;
	}
	ft_prof_suspended = 0;
	pg_compiler_barrier();
	if (ft_prof_depth == 0 || !ft_prof_registered)
		return;
	if (ms != ft_prof_cur_ms)
	{
		ft_prof_step_ticks = 0;
		ft_prof_cur_ms = ms;
	}
	now_ts = GetCurrentTimestamp();
	step = (int64) ms * 1000;
	fin = ft_prof_suspend_fin;
	if (fin <= 0 || fin > now_ts)
		fin = now_ts + step;
	else
		fin += ((now_ts - fin) / step + 1) * step;
	ft_prof_rearm_pending = 0;
	pg_compiler_barrier();
	enable_timeout_every(ft_prof_timeout, fin, ms);
}

/*
 * The tick (a timeout handler: it runs in the SIGALRM handler, and does
 * nothing but arithmetic on memory and one clock read, and when it stops
 * itself one call of timeout.c).  A tick that lands while the main code
 * is changing counters of frames on the chain credits nothing: the next
 * tick credits from the last one.
 */
static volatile uint64 ft_prof_idle_ticks = 0;

static void
ft_prof_tick(void)
{
	uint64		now;

	if (ft_prof_depth == 0)
	{
		ft_prof_idle_ticks++;	/* ft_prof_tick_cost_ns is measuring */
		return;
	}
	if (ft_prof_busy)
	{
		ft_prof_deferred_total++;
		return;
	}
	now = ft_prof_now(ft_prof_tsc);
	/* stopped in a wait, the chain has not changed since: no sample */
	ft_prof_credit_until(now, !ft_prof_suspended);

	ft_prof_ticks_total++;
	for (int i = 0; i < ft_prof_depth; i++)
	{
		FtProfQuery *q = ft_prof_stack[i];

		q->ticks++;
		q->tick_ms += ft_prof_cur_ms;
		q->tick_ms_sq += (uint64) ft_prof_cur_ms * ft_prof_cur_ms;
		q->longest_ms = Max(q->longest_ms, ft_prof_cur_ms);
	}
	if (ft_prof_switched)
		ft_prof_lengthen();
	if (!ft_prof_switched && ft_prof_switch_due(now))
	{
		ft_prof_switch(now);
		/* everything before the switch was timed exactly */
		ft_prof_carved = 0;
		ft_prof_pending = 0;
	}
	if (ft_prof_waiting())
		ft_prof_suspend();
}

/* where ft_prof_register_escape returns to, while RegisterTimeout runs */
static sigjmp_buf *ft_prof_register_jmp = NULL;

/*
 * Error context callback around RegisterTimeout: the only error it raises
 * is its FATAL "cannot add more timeout reasons", which cannot be caught
 * (errfinish ends the process after reporting it), but errfinish runs the
 * context callbacks before it reports anything.  Jump back to
 * ft_prof_register from here, before the report; the error state is reset
 * there.
 */
static void
ft_prof_register_escape(void *arg)
{
	if (ft_prof_register_jmp != NULL)
		siglongjmp(*ft_prof_register_jmp, 1);
}

/*
 * Register the tick's timeout in this backend, once (a registration made
 * in _PG_init of a preloaded library is undone by InitializeTimeouts in
 * each backend).  PostgreSQL has ten timeout slots for extensions, and
 * RegisterTimeout ends the session with FATAL when all of them are taken:
 * fasttime must never be the reason a session ends, so that FATAL is
 * intercepted before it is reported (ft_prof_register_escape), and
 * profiled timing gives way to exact timing in this backend, said once at
 * LOG.  Called in main code, outside any error handling, so that
 * resetting the error state afterwards drops nothing but that FATAL.
 * Returns whether the tick can be armed.
 */
static bool
ft_prof_register(void)
{
	sigjmp_buf	jmp;
	ErrorContextCallback escape;
	MemoryContext cxt = CurrentMemoryContext;
	ErrorContextCallback *volatile saved_context = error_context_stack;
	sigjmp_buf *volatile saved_exception = PG_exception_stack;

	if (ft_prof_registered || ft_prof_unavailable)
		return ft_prof_registered;

	escape.callback = ft_prof_register_escape;
	escape.arg = NULL;
	escape.previous = error_context_stack;
	if (sigsetjmp(jmp, 0) == 0)
	{
		ft_prof_register_jmp = &jmp;
		error_context_stack = &escape;
#ifdef FASTTIME_FAULT_INJECTION
		ft_fault_fill_timeouts(ft_prof_tick);
#endif
		ft_prof_timeout = RegisterTimeout(USER_TIMEOUT, ft_prof_tick);
		ft_prof_registered = true;
	}
	else
	{
		/* RegisterTimeout's FATAL, not reported: forget it */
		MemoryContextSwitchTo(cxt);
		FlushErrorState();
		ft_prof_unavailable = true;
	}
	ft_prof_register_jmp = NULL;
	error_context_stack = saved_context;
	PG_exception_stack = saved_exception;

	if (ft_prof_unavailable)
		ereport(LOG,
				(errmsg("profiled node timing is not available in this session, so plan nodes are timed exactly"),
				 errdetail("Every timeout slot PostgreSQL offers extensions is taken in this backend, and profiled timing needs one for its tick."),
				 errhint("Other loaded extensions use the slots; exact node timing works without one.")));
	return ft_prof_registered;
}

/*
 * Can this backend run profiled timing?  Registers the tick's timeout at
 * the first profiled query (ExecutorStart), so that a backend that cannot
 * gets exact wrappers from the start.
 */
bool
ft_prof_available(void)
{
	return ft_prof_register();
}

/*
 * Is profiled timing worth setting up for a plan estimated to make so many
 * node calls?  The exact prefix ends when its clock reads are estimated to
 * have cost a quarter of fasttime.profile_after (profiler.c's header):
 * exact timing's cost follows the calls, not the time, and a plan whose
 * calls cannot get near that bound is timed exactly from start to end,
 * however long it runs, at no more than exact timing's cost -- without
 * the frames, the run bookkeeping and the timer of a profiled run, which
 * cost more than the timing itself on a statement of a few calls (every
 * statement of an OLTP server under auto_explain).  The bound is taken
 * with a margin of 100 for the planner's misestimates: below a hundredth
 * of it, a plan is timed exactly.  A plan misestimated by more than that
 * is still timed right, at exact timing's cost.  With profile_after = 0
 * every plan is profiled.
 */
bool
ft_prof_pays(double estimated_calls, bool tsc)
{
	double		bound = (double) ft_profile_after_ms * 1e6 / 4.0 /
		(2.0 * ft_prof_measure_read_ns(tsc));

	return estimated_calls >= bound / FT_PROF_ESTIMATE_MARGIN;
}

/* Is a profiled run under way, and with which clock? */
bool
ft_prof_active(void)
{
	return ft_prof_depth > 0;
}

bool
ft_prof_clock_is_tsc(void)
{
	return ft_prof_tsc;
}

/*
 * When the outermost run's first tick comes, in ms from its start.  Ticks
 * of the exact prefix credit nothing: they only ask whether the switch is
 * due, by time (profile_after) or by the prefix's reads, whose bound is
 * set so that they cost a quarter of profile_after -- so they cannot reach
 * it before a quarter of profile_after has passed.  The first tick comes
 * then (or after one interval, if that is later), not after one interval:
 * the switch comes when it came before, and a query shorter than that
 * takes no timer signal.  That matters where short queries follow each
 * other (auto_explain with log_analyze on a busy server): the timeout
 * machinery leaves the interrupt pending when a timeout is disabled, so
 * with queries of a few microseconds back to back a signal still came
 * every interval, landing in whichever query ran then and crediting
 * nothing, and a signal costs 11-50 us on the guests measured.
 */
static int
ft_prof_first_tick_ms(void)
{
	return Max(ft_prof_cur_ms, ft_profile_after_ms / 4);
}

/*
 * A profiled query's run (ExecutorRun or ExecutorFinish) begins: make its
 * frames current, in the mode the outermost run is in (a query whose
 * earlier run was profiled starts exact again in a new outermost run);
 * the outermost run starts the ticks.  The caller restores what is saved
 * here with ft_prof_leave, also on error.
 */
void
ft_prof_enter(FtProfQuery *q, FtProfFrame ***saved_frames,
			  uint32 *saved_nframes)
{
	*saved_frames = ft_prof_frames;
	*saved_nframes = ft_prof_nframes;

#ifdef FASTTIME_FAULT_INJECTION
	if (ft_fault_nested_units && ft_prof_depth > 0)
	{
		/* nested: instr_time in ticks half as long as the run's */
		ft_instr_units.tsc.mult *= 2;
		ft_instr_units.ns.mult *= 2;
	}
#endif

	if (ft_prof_depth == ft_prof_stack_size)
	{
		int			n = Max(8, ft_prof_stack_size * 2);
		FtProfQuery **s = MemoryContextAlloc(TopMemoryContext, sizeof(FtProfQuery *) * n);

		if (ft_prof_depth > 0)
			memcpy(s, ft_prof_stack, sizeof(FtProfQuery *) * ft_prof_depth);
		ft_prof_busy = 1;
		pg_compiler_barrier();
		if (ft_prof_stack)
			pfree(ft_prof_stack);
		ft_prof_stack = s;
		ft_prof_stack_size = n;
		pg_compiler_barrier();
		ft_prof_busy = 0;
	}

	if (ft_prof_depth == 0)
	{
		ft_prof_tsc = q->tsc;
		ft_prof_switched = false;
		ft_prof_threshold = ft_prof_tsc ?
			(uint64) (ft_conv.hz / 1000.0 * ft_profile_after_ms) :
			(uint64) ft_profile_after_ms * 1000000;
		/* reads costing a quarter of the prefix: two a call */
		ft_prof_max_calls = (double) ft_profile_after_ms * 1e6 / 4.0 /
			(2.0 * ft_prof_measure_read_ns(ft_prof_tsc));
		ft_prof_run_start = ft_prof_now(ft_prof_tsc);
		ft_prof_last = ft_prof_run_start;
		ft_prof_carved = 0;
		ft_prof_pending = 0;
		ft_prof_cur_ms = ft_profile_interval_ms;
		ft_prof_want_ms = ft_profile_interval_ms;
		ft_prof_max_ms = Max(ft_profile_interval_ms, ft_profile_interval_max_ms);
		ft_prof_step_ticks = 0;
		ft_prof_rearm_pending = 0;
		ft_prof_suspended = 0;
#ifdef FASTTIME_FAULT_INJECTION
		ft_prof_fault_switch_armed = false;
#endif
	}

	/* no tick between here and the end of the mode change */
	ft_prof_busy = 1;
	pg_compiler_barrier();
	/* the unit its nodes' times are written in (node_timing.c set it) */
	q->units = ft_instr_units;
	for (int j = 0; j < q->nframes; j++)
	{
		FtProfFrame *f = q->frames[j];

		if (f == NULL)
			continue;
		f->settled = false;
		f->core_call = false;
		f->build_exact = false;
		f->switch_pending = false;
		f->mode = (ft_prof_switched && !f->permanent) ?
			FT_FRAME_PROFILED : FT_FRAME_EXACT;
	}
	if (ft_prof_switched && !q->switched)
		q->switched = true;
	ft_prof_stack[ft_prof_depth++] = q;
	ft_prof_frames = q->frames;
	ft_prof_nframes = (uint32) q->nframes;
	pg_compiler_barrier();
	ft_prof_busy = 0;

	if (ft_prof_depth == 1 && ft_prof_register())
		enable_timeout_every(ft_prof_timeout,
							 TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
														 ft_prof_first_tick_ms()),
							 ft_prof_cur_ms);
}

/*
 * A profiled query's run ends, normally or by error: restore the frames
 * of the run around it (the executor hooks restore the chain); the
 * outermost run stops the ticks.
 */
void
ft_prof_leave(FtProfQuery *q, FtProfFrame **saved_frames,
			  uint32 saved_nframes)
{
	ft_prof_busy = 1;
	pg_compiler_barrier();
	ft_prof_frames = saved_frames;
	ft_prof_nframes = saved_nframes;
	/* the code running from here on is its caller's, after an error too */
	ft_prof_in_wrapper = 0;
	/* normally the top of the stack; after an error, whatever ran above */
	for (int i = ft_prof_depth - 1; i >= 0; i--)
	{
		if (ft_prof_stack[i] == q)
		{
			ft_prof_depth = i;
			break;
		}
	}
	pg_compiler_barrier();
	ft_prof_busy = 0;
	if (ft_prof_depth == 0)
	{
		ft_prof_suspended = 0;
		if (ft_prof_registered)
			disable_timeout(ft_prof_timeout, false);
	}
}

/*
 * Transaction abort: no run is under way any more (the executor hooks
 * restored the chain already; this is a backstop).
 */
void
ft_prof_reset(void)
{
	ft_prof_busy = 1;
	pg_compiler_barrier();
	ft_prof_frames = NULL;
	ft_prof_nframes = 0;
	ft_prof_depth = 0;
	ft_prof_suspended = 0;
	ft_prof_in_wrapper = 0;
	pg_compiler_barrier();
	ft_prof_busy = 0;
	if (ft_prof_registered && get_timeout_active(ft_prof_timeout))
		disable_timeout(ft_prof_timeout, false);
}

/* ticks of this backend, and ticks that waited for the next one */
uint64
ft_prof_backend_ticks(void)
{
	return ft_prof_ticks_total;
}

uint64
ft_prof_backend_deferred(void)
{
	return ft_prof_deferred_total;
}

/*
 * The CPU time this backend has used, ns: what a tick takes from it,
 * whatever else the machine does meanwhile (a virtual machine's host
 * taking the CPU away for a while costs the thread no CPU time, so it
 * does not count against either side of the measurement below).
 */
static int64
ft_prof_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return ft_read_clock_gettime_ns();
	return (int64) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* a fixed piece of CPU work, ns of CPU time it took */
static pg_noinline int64
ft_prof_spin(int64 iters, volatile uint64 *sink)
{
	int64		t0 = ft_prof_cpu_ns();
	uint64		x = *sink;

	for (int64 i = 0; i < iters; i++)
	{
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		pg_compiler_barrier();
	}
	*sink = x;
	return ft_prof_cpu_ns() - t0;
}

/* rounds of ft_prof_tick_cost_ns, and the CPU time of each half of one */
#define FT_PROF_COST_ROUNDS 8
#define FT_PROF_COST_ROUND_NS 10000000

/* what ft_prof_tick_cost_ns measured in this backend; < 0: not yet */
static double cost = -1.0;

/*
 * What one tick costs the backend it interrupts, measured once per
 * backend: a fixed piece of CPU work of about 10 ms, run without ticks and
 * with ticks every millisecond (the handler doing nothing but counting:
 * the signal, the kernel's and the timeout machinery's work), in eight
 * rounds that alternate which half runs first, so that a drift in the
 * machine's speed weighs on both halves alike.  Each round's difference
 * of CPU time, over the ticks that landed in it, is one estimate; the
 * median of them is the cost (CPU time, not elapsed time: what the host
 * of a virtual machine takes away in between is no part of either half).
 * About 170 ms in all.  0 when nothing could be measured.
 */
double
ft_prof_tick_cost_ns(void)
{
	volatile uint64 sink = 1;
	int64		iters = 100000;
	double		est[FT_PROF_COST_ROUNDS];
	int			n = 0;

	if (cost >= 0.0)
		return cost;
	if (ft_prof_depth > 0)
		return 0.0;
	/* about 10 ms of work */
	while (ft_prof_spin(iters, &sink) < FT_PROF_COST_ROUND_NS / 8 &&
		   iters < (PG_INT64_MAX / 16))
		iters *= 2;
	iters *= 8;
	if (!ft_prof_register())
	{
		cost = 0.0;
		return cost;
	}
	for (int r = 0; r < FT_PROF_COST_ROUNDS; r++)
	{
		int64		plain = 0;
		int64		ticked = 0;
		uint64		ticks = 0;

		for (int half = 0; half < 2; half++)
		{
			uint64		ticks0 = ft_prof_idle_ticks;

			if ((half + r) % 2 == 0)
			{
				plain = ft_prof_spin(iters, &sink);
				continue;
			}
			/* the spin cannot fail: nothing to clean up on error */
			enable_timeout_every(ft_prof_timeout,
								 TimestampTzPlusMilliseconds(GetCurrentTimestamp(), 1),
								 1);
			ticked = ft_prof_spin(iters, &sink);
			disable_timeout(ft_prof_timeout, false);
			ticks = ft_prof_idle_ticks - ticks0;
		}
		if (ticks > 0)
			est[n++] = (double) (ticked - plain) / (double) ticks;
	}
	if (n == 0)
	{
		cost = 0.0;
		return cost;
	}
	/* the median: insertion sort */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && est[j] < est[j - 1]; j--)
		{
			double		t = est[j];

			est[j] = est[j - 1];
			est[j - 1] = t;
		}
	cost = n % 2 ? est[n / 2] : (est[n / 2 - 1] + est[n / 2]) / 2.0;
	cost = Max(cost, 0.0);
	return cost;
}

/*
 * What ft_prof_tick_cost_ns measured earlier in this backend, without
 * measuring: false if it has not.  For fasttime_status(), which anyone may
 * call and must not spin a CPU for 170 ms.
 */
bool
ft_prof_tick_cost_known(double *cost_ns)
{
	if (cost < 0.0)
		return false;
	*cost_ns = cost;
	return true;
}
