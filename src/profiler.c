/*-------------------------------------------------------------------------
 *
 * profiler.c
 *	  Profiled node timing: the periodic tick that credits elapsed time to
 *	  the executing plan nodes, and the switch from exact timing to it.
 *
 * The design (frames, the chain, which frames are exact, ft_prof_busy)
 * is profiler.h's; per-plan decisions and the error of the credited times
 * are prof_plan.c's.  Each run (ExecutorRun, ExecutorFinish) of a
 * profiled query ticks: a timeout of timeout.c every
 * fasttime.profile_interval ms (a quarter of profile_after, at most 5 ms,
 * during the exact prefix of most plans), lengthening as the run goes on
 * (ft_prof_lengthen), whose handler reads the clock once and credits the
 * time since the previous tick to the profiled frames on top of the chain
 * (a late or lost tick loses nothing: the next credits the measured time).
 * Every run starts exact, no tick crediting anything, until the tick
 * switches every query of the run at once (ft_prof_switch_due,
 * ft_prof_switch); a tick that finds the backend waiting stops the ticks
 * until the next transition (ft_prof_suspend).  A credit is converted to
 * the unit of the query whose node gets it (FtInstrUnits, compat.h; on 19
 * a query nested in a node may have started under another
 * timing_clock_source).  The executor hooks restore the chain when a run
 * ends, by error or not (ft_usage_run_end); transaction abort clears it.
 *
 * src/profiler.c
 *
 *-------------------------------------------------------------------------
 */
#include "compat.h"

#include "access/parallel.h"
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
 * What the tick (a signal handler) shares with main code.  What the
 * handler writes, or main code changes while a tick may land, is volatile.
 * The rest (the query stack; the outermost run's clock, start, thresholds
 * and longest interval) the handler only reads, and main code changes
 * only under ft_prof_busy with pg_compiler_barrier() around the change (no
 * store moves across it), or while no run is under way (ft_prof_depth 0,
 * which the handler tests first).  A tick that finds ft_prof_busy set
 * credits nothing and leaves its interval to the next, so it never sees
 * them half-changed; not volatile, so that main code's reads are cheap.
 */

/* the chain, and the clock at the last tick */
volatile sig_atomic_t ft_prof_busy = 0;
static volatile uint64 ft_prof_last = 0;

/* the gate and the suspension: this backend's, until the worker's slot */
static FtTickFlags ft_prof_own_flags = {FT_FRAME_NONE, 0};
FtTickFlags *ft_prof_flags = &ft_prof_own_flags;

/*
 * Time since the last tick that exact calls have credited to the profiled
 * frames below them (the next tick credits only the rest), and time of
 * earlier intervals left by ticks inside exact calls, for the next tick
 * outside one.
 */
static volatile uint64 ft_prof_carved = 0;
static volatile uint64 ft_prof_pending = 0;

/* a Hash's build frame left on the chain to end at the next transition */
FT_HIDDEN FtUsageFrame *ft_prof_build_ending = NULL;

/* the frames of the query running now (made current by ft_prof_enter) */
FtProfFrame **ft_prof_frames = NULL;
uint32		ft_prof_nframes = 0;

/* settings */
int			ft_node_timing = FT_NODE_TIMING_PROFILE;
int			ft_profile_interval_ms = 1;
int			ft_profile_interval_max_ms = 4;
int			ft_profile_after_ms = 20;
int			ft_tick_source = FT_TICK_SOURCE_SIGNAL;

/* the timeout, once registered; unavailable: no slot (timed exactly) */
static bool ft_prof_registered = false;
static bool ft_prof_unavailable = false;
static TimeoutId ft_prof_timeout;

/* the queries running now, outermost first */
static FtProfQuery **ft_prof_stack = NULL;
static int	ft_prof_depth = 0;
static int	ft_prof_stack_size = 0;

/* the outermost run: its clock, start, threshold, and whether it switched */
FT_HIDDEN bool ft_prof_tsc = false;
static uint64 ft_prof_run_start = 0;
static uint64 ft_prof_threshold = 0;
static double ft_prof_max_calls = 0;	/* calls whose reads cost after / 4 */
static double ft_prof_call_reads = 0;	/* a call's two reads, clock units */
static bool ft_prof_early = false;	/* its plan is expected to pass that */
static volatile bool ft_prof_switched = false;
static volatile uint64 ft_prof_switch_at = 0;	/* the clock at the switch */

/*
 * The tick's interval in the outermost run: the timeout's now, the one the
 * tick wants (ft_prof_rearm_pending asks main code for it), the longest,
 * and the ticks at the current one since the switch or the last re-arm.
 */
static volatile int ft_prof_cur_ms = 1;
static volatile int ft_prof_want_ms = 1;
static int	ft_prof_max_ms = 1;
static int	ft_prof_first_ms = 1;	/* the run's profiled interval at first */
static volatile uint32 ft_prof_step_ticks = 0;
#define FT_PROF_TICKS_PER_STEP 250	/* ticks before the interval doubles */
#define FT_PROF_PREFIX_TICK_MS 5	/* the longest tick of an exact prefix */
volatile sig_atomic_t ft_prof_rearm_pending = 0;

static void ft_prof_tick(void);

/*
 * The tick stopped itself in a wait (ft_prof_suspend: ft_prof_suspended
 * set too), and when it was due.  Only then does ft_prof_resume re-arm.
 */
static volatile sig_atomic_t ft_prof_signal_stopped = 0;
static TimestampTz ft_prof_suspend_fin = 0;

/*
 * The outermost run moves to the tick worker at its switch (use), and the
 * worker ticks it now (on): the timeout is off, and ft_prof_resume is the
 * tick (ft_prof_worker_tick).
 */
static bool ft_prof_use_worker = false;
static volatile bool ft_prof_on_worker = false;

/*
 * While the worker ticks, the timeout stays armed as a watchdog: should
 * the worker not have ticked this backend (nor parked it) for that long
 * -- it was terminated, or starved of CPU -- the run goes back to timer
 * signals, or its nodes would be credited nothing for the rest of it.
 * At 10 signals a second it costs a hundredth of the ticks it replaces
 * (longer where the ticks' longest interval is over a third of that).
 */
#define FT_PROF_WATCHDOG_MS 100
static int	ft_prof_watch_ms = FT_PROF_WATCHDOG_MS;

/*
 * The watchdog's first look (after the move, or an unpark) only notes the
 * count: the worker's first tick comes an interval after it notices.
 */
#define FT_PROF_WATCH_FIRST PG_UINT64_MAX

/* the watchdog found the backend parked: one-shot at a second, re-armed */
static volatile bool ft_prof_watch_parked = false;
static uint64 ft_prof_watch_ticks = 0;	/* worker ticks at the last look */

/*
 * The worker's count of this backend's ticks when the backend last took
 * one (ft_prof_worker_tick): a call that runs over several ticks finds
 * the flag once, and counts each of them, as timer signals would.
 */
static uint64 ft_prof_worker_taken = 0;

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
 * The ticks the next sample stands for: 1, but for a worker's tick found
 * after more than one (a call that ran over several) or after none (its
 * tick counted by the take before).  Set and reset by
 * ft_prof_worker_tick, under ft_prof_busy.
 */
static uint64 ft_prof_sample_weight = 1;

/*
 * Credit a tick's sample (time no exact call accounted for) from "from"
 * down, and note it in those frames and every running query for the
 * nodes' error (ft_prof_node_error).  Time before the switch, or credited
 * by a transition (ft_prof_resume), is exact: no sample.  Plain stores
 * only: this runs in the signal handler.
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
		f->sample_ticks += ft_prof_sample_weight;
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
 * An exact call on top of a profiled frame, or at the bottom of the chain
 * (from NULL), has returned: credit what it owes (since its start, the
 * switch or the last tick in it) to the profiled frames from "from" down,
 * and carve it from the tick interval either way, since the call's own
 * exact time holds it and the next tick must not credit it again.  Its
 * start credited nothing: only a tick can tell what ran before.  The
 * caller holds ft_prof_busy from before the unlink, so that no tick sees
 * the call off the chain and not yet settled.
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
 * The switch, in the tick at "now": each exact call in flight keeps its
 * exact time up to now and is profiled from now on, except those that
 * stay exact (permanent, or running a child the executor times itself,
 * to its end), which owe the frames below only their time from now (no
 * frame was profiled before); every other frame is profiled from its next
 * call.  Each query notes the run's time so far as its exact prefix.
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
			 * Profiled from now, it would read shorter than the child core
			 * times (a Hash Join's build): exact to its end instead.
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

	/*
	 * The prefix ticked at its own interval (ft_prof_prefix_ms): main code
	 * re-arms at the profiled one at the next slow path, which the shut
	 * gate sends every call to; or moves the ticks to the worker there.
	 */
	if (ft_prof_first_ms != ft_prof_cur_ms || ft_prof_use_worker)
	{
		ft_prof_want_ms = ft_prof_first_ms;
		ft_prof_rearm_pending = 1;
		ft_prof_gate = FT_FRAME_NONE;
	}
}

/*
 * An exact-phase call linked its frame and found it profiled: the switch
 * came between the wrapper's mode test and the link, and missed the call.
 * Do what ft_prof_switch would have done (the caller holds ft_prof_busy);
 * else the call's whole exact time would add to its ticks, and its
 * caller, credited up to the switch, would get it again.
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
 * on top of the chain: the build starts.  Link the frame, so the Hash's
 * work between its child's calls is the Hash's.  An exact one starts as
 * an exact call does (node_wrappers.c: gate shut, clock read and link
 * under ft_prof_busy), so the switch finds it in flight like any other.
 * A tick that stopped itself resumes first, as at every transition.
 */
void
ft_prof_build_link(FtUsageFrame *bf, bool tsc)
{
	FtProfFrame *bp = &bf->prof;

	/* a transition: the time of a suspended tick is the unchanged chain's */
	ft_prof_resume_if_suspended();
	if (ft_prof_build_ending != NULL)
		ft_prof_build_end_now(tsc);
	ft_prof_busy = 1;
	pg_compiler_barrier();
	if (bp->mode == FT_FRAME_PROFILED)
	{
		FtProfFrame *below = ft_chain_prof(ft_chain_top);

		/*
		 * Inside an exact call, exact too: a profiled frame would take
		 * ticks its exact caller's time does not contain.
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
	bp->build_first = !bp->instr->running;
	ft_chain_link(bf);
	pg_compiler_barrier();
	ft_prof_busy = 0;
}

/*
 * The build is over: unlink the build frame as an exact call returns (its
 * time added unless settled, and owed to the profiled frames below) or,
 * profiled, just unlink it.  The caller has checked it is on top.
 */
static void
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

		bp->exact_stop = stop;
		ft_prof_add(bp, stop > bp->start ? stop - bp->start : 0, tsc);
		/* owed below, and carved; under an exact call, that one owes it */
		if (below == NULL || below->mode == FT_FRAME_PROFILED)
			ft_prof_settle_up(below, stop > bp->owed_from ? stop - bp->owed_from : 0,
							  stop, tsc);
	}
	if (bp->build_exact)
	{
		bp->build_exact = false;
		bp->mode = FT_FRAME_PROFILED;
	}

	/*
	 * MultiExecHash's InstrStopNode has taken the loop's first-tuple time
	 * from a counter the build's time was not yet added to (0 for an exact
	 * build): a Hash returns once a loop, so, as stock's, its first tuple
	 * is the build, added now.
	 */
	if (bp->build_first && bp->instr->running)
		ft_instr_set_firsttuple(bp->instr);
	bp->build_first = false;
	pg_compiler_barrier();
	ft_prof_busy = 0;
}

/*
 * A Hash's child returned no row (MultiExecPrivateHash stops at the first
 * empty slot), but the build goes on: the Hash then grows its bucket array
 * to the rows it got (ExecHashIncreaseNumBuckets, every tuple placed again;
 * a fifth of the build where the planner expected too few rows), time
 * stock's Hash holds.  So the build frame stays on top until the next
 * transition: the gate is shut, and the next call to take the slow path,
 * the Hash Join's return there, or a query starting or running inside
 * the Hash Join's call ends it (ft_prof_build_end_due).  A profiled Hash
 * Join returning on the fast path drops it from the chain as it unlinks
 * its own frame; nothing is owed then.  Where the Hash Join read its first
 * outer row before the build (ExecHashJoin does unless the outer side is
 * the costlier to start), that row's probe until the next transition is
 * the Hash's: one row's hashing and bucket scan.
 */
void
ft_prof_build_end_later(FtUsageFrame *bf)
{
	ft_prof_build_ending = bf;
	ft_prof_gate = FT_FRAME_NONE;
}

/*
 * A transition in the slow path while a build was ending: end it if its
 * frame is on top of the chain, forget it if it is no longer on the chain
 * (a fast return dropped it), else leave it for a later transition.
 */
void
ft_prof_build_end_now(bool tsc)
{
	FtUsageFrame *bf = ft_prof_build_ending;

	/* a transition: the time of a suspended tick is the unchanged chain's */
	ft_prof_resume_if_suspended();
	if (ft_chain_top == bf)
	{
		ft_prof_build_ending = NULL;
		ft_prof_build_unlink(bf, tsc);
		return;
	}
	for (FtUsageFrame *f = ft_chain_top; f != NULL; f = f->caller)
	{
		if (f == bf)
			return;
	}
	ft_prof_build_ending = NULL;
}

/*
 * The outermost run has switched, and the tick worker runs: stop the
 * timeout and have the worker tick this backend every ms from now (main
 * code: ft_prof_rearm, ft_prof_resume).  Should the worker have gone
 * meanwhile, the timeout ticks on.
 */
static void
ft_prof_to_worker(int ms)
{
	ft_prof_step_ticks = 0;
	ft_prof_cur_ms = ms;
	ft_prof_watch_ticks = FT_PROF_WATCH_FIRST;
	ft_prof_watch_parked = false;
	ft_prof_watch_ms = Max(FT_PROF_WATCHDOG_MS, 3 * Max(ms, ft_prof_max_ms));
	ft_prof_worker_taken = ft_ticker_ticks();
	if (ft_ticker_start(ms))
	{
		/* the watchdog armed before a signal may take the run for one */
		if (ft_prof_registered)
			enable_timeout_every(ft_prof_timeout,
								 TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
															 ft_prof_watch_ms),
								 ft_prof_watch_ms);
		pg_compiler_barrier();
		ft_prof_on_worker = true;
		return;
	}
	ft_prof_use_worker = false;
	if (ft_prof_registered)
		enable_timeout_every(ft_prof_timeout,
							 TimestampTzPlusMilliseconds(GetCurrentTimestamp(), ms),
							 ms);
}

/*
 * The tick wants another interval (a longer one, ft_prof_lengthen; the
 * profiled one after the prefix's, ft_prof_switch): re-arm the timeout in
 * main code, since timeout.c's enable functions are not made for a
 * handler.  The time until the first new tick is credited as measured.
 * The count restarts before the re-arm, so that no tick of the old
 * interval counts against the new one.  The request is cleared before the
 * interval is read: one a tick makes after that stays for the next slow
 * path.
 */
void
ft_prof_rearm(void)
{
	int			want;

	ft_prof_rearm_pending = 0;
	pg_compiler_barrier();
	want = ft_prof_want_ms;
	if (ft_prof_depth > 0 && ft_prof_use_worker && ft_prof_switched)
	{
		if (!ft_prof_on_worker)
			ft_prof_to_worker(want);
		else if (want != ft_prof_cur_ms)
		{
			ft_prof_step_ticks = 0;
			ft_prof_cur_ms = want;
			ft_ticker_set_interval(want);
		}
	}
	else if (ft_prof_depth > 0 && want != ft_prof_cur_ms)
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
}

/*
 * A plain profiled call found the gate shut (by an exact call, or by the
 * tick asking for a re-arm or stopping itself): resume or re-arm if
 * asked, and open the gate if no frame on the chain is exact.  A tick
 * only makes frames profiled, so the walk's answer holds until main code
 * links or makes an exact frame, shutting the gate first.  A tick after
 * the walk has its shutting undone by the opening, so the opening looks
 * again once the gate is open.
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
	/* the worker sets the suspension as it shuts the gate (ticker.h) */
	if (ft_prof_on_worker)
		pg_memory_barrier();
	else
		pg_compiler_barrier();
	ft_prof_resume_if_suspended();
	ft_prof_rearm_if_asked();
}

#ifdef FASTTIME_FAULT_INJECTION
/* Fault builds (fault_switch_in_link): a tick's switch now, if not yet. */
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

/* Fault builds: a tick now, SIGALRM blocked so no real one lands inside. */
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

/*
 * Fault builds: fasttime.fault_tick_at_abort ticks in the transaction-abort
 * callback, before ft_prof_reset: after a FATAL error, the executor memory
 * of the run under way is gone by then, so no run may be left on the
 * stack for the tick to reach (ft_prof_forget).  The LOG line says how
 * many were.
 */
void
ft_prof_fault_abort_tick(void)
{
	if (!ft_fault_tick_at_abort)
		return;
	elog(LOG, "fasttime fault: a tick at transaction abort, %d profiled runs on the stack",
		 ft_prof_depth);
	ft_prof_fault_tick();
}

/* Does a fault setting name this node's type, as EXPLAIN names it? */
static bool
ft_prof_fault_names(const char *setting, PlanState *node)
{
	static const struct
	{
		NodeTag		tag;
		const char *name;
	}			names[] = {
		{T_AggState, "Aggregate"},
		{T_BitmapHeapScanState, "Bitmap Heap Scan"},
		{T_FunctionScanState, "Function Scan"},
		{T_HashJoinState, "Hash Join"},
		{T_LimitState, "Limit"},
		{T_MaterialState, "Materialize"},
		{T_NestLoopState, "Nested Loop"},
		{T_SeqScanState, "Seq Scan"},
		{T_SortState, "Sort"},
		{T_SubqueryScanState, "Subquery Scan"},
	};

	if (setting == NULL || setting[0] == '\0')
		return false;
	for (int i = 0; i < lengthof(names); i++)
	{
		if (nodeTag(node) == names[i].tag)
			return strcmp(setting, names[i].name) == 0;
	}
	return false;
}

/*
 * Fault builds: an exact call of this node has left the chain and not yet
 * settled up.  fasttime.fault_tick_at_return ticks here for the node type
 * it names; fasttime.fault_switch_at_return makes the first such return
 * the switch's instant (and no other until then).
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
#endif

/* The calls a query's nodes have made (rows and loops), in all its runs. */
static double
ft_prof_query_calls(const FtProfQuery *q)
{
	double		calls = 0;

	for (int j = 0; j < q->nframes; j++)
	{
		if (q->frames[j] != NULL)
		{
			FtNodeInstr *instr = q->frames[j]->instr;

			calls += instr->tuplecount + instr->ntuples + instr->nloops;
		}
	}
	return calls;
}

/*
 * The calls the running queries' nodes have made in their current runs:
 * the tick's estimate of the exact prefix's reads, two a call.  A
 * cursor's earlier FETCHes are not this run's (calls_before).
 */
static double
ft_prof_calls_so_far(void)
{
	double		calls = 0;

	for (int i = 0; i < ft_prof_depth; i++)
	{
		FtProfQuery *q = ft_prof_stack[i];

		calls += ft_prof_query_calls(q) - q->calls_before;
	}
	return calls;
}

/* The median of n values, which it sorts. */
static double
ft_prof_median(double *v, int n)
{
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && v[j] < v[j - 1]; j--)
		{
			double		t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/*
 * The cost of one read of a clock as exact calls read it (the TSC in
 * order), measured once per backend: the median of five batches, so that
 * an interrupt in one does not count.  It bounds the exact prefix's reads.
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
	ft_prof_read_ns[tsc] = ft_prof_median(batch, 5);
	ft_prof_read_ns[tsc] = Max(ft_prof_read_ns[tsc], 0.1);
	return ft_prof_read_ns[tsc];
}

/*
 * After FT_PROF_TICKS_PER_STEP profiled ticks at one interval, ask for
 * twice it, up to fasttime.profile_interval_max: short runs keep the
 * ticks they need, long ones pay for fewer signals; the schedule depends
 * on the tick count alone, so ticks stay unrelated to the plan.  Only
 * main code may re-arm: the tick asks and shuts the gate for the next
 * slow path (ft_prof_rearm).  Until then each tick shuts it again, in case
 * an opening under way undid the shutting.
 */
static inline void
ft_prof_lengthen(int nticks)
{
	if (ft_prof_rearm_pending)
	{
		ft_prof_gate = FT_FRAME_NONE;
		return;
	}
	if (ft_prof_cur_ms >= ft_prof_max_ms)
		return;
	ft_prof_step_ticks += nticks;
	if (ft_prof_step_ticks < FT_PROF_TICKS_PER_STEP)
		return;
	ft_prof_want_ms = Min(ft_prof_cur_ms * 2, ft_prof_max_ms);
	ft_prof_rearm_pending = 1;
	ft_prof_gate = FT_FRAME_NONE;
}

/*
 * Has the outermost run's exact prefix lasted fasttime.profile_after, or
 * have its reads cost a quarter of its time so far (so that its numbers
 * are not mostly the clock's own cost, and profiled timing is the cheaper
 * by far)?  Every call is then counted once, either side of the switch;
 * shorter runs, and runs whose reads stay a small part of their time, are
 * exact throughout the prefix.  The reads are estimated: the calls made
 * so far, two reads each, at the measured cost of a read.  (Fault builds:
 * fasttime.fault_switch_at_return decides.)
 */
static inline bool
ft_prof_switch_due(uint64 now)
{
	uint64		elapsed = now - ft_prof_run_start;

#ifdef FASTTIME_FAULT_INJECTION
	if (ft_fault_switch_at_return != NULL && ft_fault_switch_at_return[0] != '\0')
		return ft_prof_fault_switch_armed;
#endif
	return elapsed >= ft_prof_threshold ||
		4.0 * ft_prof_call_reads * ft_prof_calls_so_far() >= (double) elapsed;
}

/*
 * Credit the time since the last tick (or resumption) as of "now": to the
 * profiled frames on top of the chain, or, inside an exact call on top of
 * profiled frames, its time so far to those and the rest to the next
 * instant outside exact calls.  sample: "now" is the tick's sample; for
 * ft_prof_resume only time pending from earlier ticks is, the rest being
 * the unchanged chain's, exactly.  sampled, when not NULL, is the profiled
 * frame the tick worker found on top at the tick, which the sample goes
 * to instead of the chain's top now; sampled_exact, that the worker found
 * an exact call there, whose time is its own: the sample's time is then
 * left to the next tick, as a signal's in an exact call is
 * (ft_prof_worker_sample).  The caller keeps ticks out.
 */
static void
ft_prof_credit_until(uint64 now, bool sample, FtProfFrame *sampled,
					 bool sampled_exact)
{
	uint64		span;
	uint64		rest;
	FtProfFrame *top = ft_chain_prof(ft_chain_top);
	FtProfFrame *exact = NULL;
	FtProfFrame *below;

	/* the outermost of the exact calls on top of the chain, if any */
	for (below = top; below != NULL && below->mode == FT_FRAME_EXACT; below = ft_prof_below(below))
		exact = below;
	if (exact != NULL)
	{
		/*
		 * Its time so far is its own, timed exactly, and the profiled
		 * frames' below (if any), as it would owe when it returns: no
		 * sample's.  At the bottom of the chain (a Bitmap Heap Scan at the
		 * root building its bitmap) it is carved all the same, or the next
		 * sample would credit it again.
		 */
		uint64		part = now > exact->owed_from ? now - exact->owed_from : 0;

		if (below != NULL)
			ft_prof_credit(below, part, ft_prof_tsc);
		ft_prof_carved += part;
		exact->owed_from = now;
	}

	/* the interval's time that no exact call accounted for */
	span = ft_prof_since_last(now);
	rest = span > ft_prof_carved ? span - ft_prof_carved : 0;
	ft_prof_carved = 0;
	ft_prof_last = now;
	if (exact == NULL && sample && sampled_exact)
	{
		/* the worker's tick landed in an exact call that has returned */
		ft_prof_pending += rest;
	}
	else if (exact == NULL)
	{
		/*
		 * A sample of that time: the chain at this instant holds it (for a
		 * worker's tick, the call on top at the tick and those below it)
		 */
		if (sample)
			ft_prof_credit_sample(sampled != NULL ? sampled : top,
								  rest + ft_prof_pending, ft_prof_tsc);
		else
		{
			ft_prof_credit(top, rest, ft_prof_tsc);
			ft_prof_credit_sample(top, ft_prof_pending, ft_prof_tsc);
		}
		ft_prof_pending = 0;
	}
	else
	{
		/* in exact time, no sample: left to the next tick outside one */
		ft_prof_pending += rest;
	}
}

/* Is the backend waiting (has it reported a wait event)?  For the tick. */
static inline bool
ft_prof_waiting(void)
{
	return my_wait_event_info != NULL &&
		*(volatile uint32 *) my_wait_event_info != 0;
}

/* the stopped tick's timeout: a backstop should no transition resume it */
#define FT_PROF_SUSPENDED_MS 1000

/*
 * In the tick, which found the backend waiting: stop ticking until the
 * next transition.  PostgreSQL's SIGALRM handler sets the process latch,
 * so every tick would wake a backend sleeping on it for nothing: while no
 * call starts or returns, every tick credits the same frames.  The
 * periodic timeout becomes a one-shot one (timeout.c re-enables only a
 * still-periodic one), the gate is shut for the next plain profiled call,
 * and ft_prof_suspended makes every other transition check; the first
 * resumes the tick (ft_prof_resume) on the same grid of instants.
 */
static void
ft_prof_suspend(void)
{
	ft_prof_suspend_fin = get_timeout_finish_time(ft_prof_timeout);
	ft_prof_signal_stopped = 1;
	ft_prof_suspended = 1;
	ft_prof_gate = FT_FRAME_NONE;
	enable_timeout_after(ft_prof_timeout, FT_PROF_SUSPENDED_MS);
}

/* Is this frame on the chain now? */
static bool
ft_prof_on_chain(FtUsageFrame *u)
{
	for (FtUsageFrame *f = ft_chain_top; f != NULL; f = f->caller)
	{
		if (f == u)
			return true;
	}
	return false;
}

/* Is this one of the frames of the profiled queries running now? */
static bool
ft_prof_running_frame(FtUsageFrame *u)
{
	for (int i = 0; i < ft_prof_depth; i++)
	{
		FtProfQuery *q = ft_prof_stack[i];

		for (int j = 0; j < q->nframes; j++)
		{
			if (q->frames[j] != NULL && ft_usage_frame_of_prof(q->frames[j]) == u)
				return true;
		}
	}
	return false;
}

/*
 * The profiled frame to credit the tick worker's sample to: the call the
 * worker found on top of the chain at the tick (ticker.c), at "at" on the
 * run's clock.  Its frame is trusted only where the backend can vouch for
 * it: on the chain now (where it usually still is, the backend taking a
 * tick within a few transitions), or, for a call that has returned since,
 * one of the running profiled queries' frames, as must be every caller
 * its link names down to the chain (a frame's caller is not cleared at
 * its unlink, and a query that has ended may have freed its frames), all
 * compared by address before anything is read through them.  Where it
 * cannot, NULL, and the sample goes to the chain's top when the backend
 * takes it.  A frame whose call at the tick was exact (still exact, or
 * its last exact call spanning the tick) sets *in_exact: that time is the
 * call's own, and the sample's is left to the next tick, as a signal's
 * landing there is.  A few dozen compares a tick.
 */
static FtProfFrame *
ft_prof_worker_sample(struct FtUsageFrame *at_tick, uint64 at, bool *in_exact)
{
	FtProfFrame *pf;

	*in_exact = false;
	if (at_tick == NULL)
		return NULL;
	for (FtUsageFrame *u = at_tick; u != NULL && !ft_prof_on_chain(u); u = u->caller)
	{
		if (!ft_prof_running_frame(u))
			return NULL;
	}
	pf = ft_chain_prof(at_tick);
	if (pf == NULL)
		return NULL;
	if (pf->mode == FT_FRAME_EXACT || (pf->start <= at && at < pf->exact_stop))
	{
		*in_exact = true;
		return NULL;
	}
	return pf->mode == FT_FRAME_PROFILED ? pf : NULL;
}

/*
 * The tick worker's tick, at the first transition after it (main code).
 * It credits the time since the last tick as a sample, as the signal's
 * tick does where it lands: to the call the worker found on top of the
 * chain at the tick's instant (ft_prof_worker_sample), else to the chain
 * as it is now, before this transition changes it.  A backend the worker found
 * waiting was parked there, and no transition has come since: the time
 * up to that tick is a sample, the rest the waiting chain's, exactly.
 * A call that ran over several ticks finds the flag once: the sample
 * stands for each of them (the worker's count), as signals would count.
 */
static void
ft_prof_worker_tick(void)
{
	uint64		now;
	uint64		since;
	uint64		ago;
	int64		ago_ns;
	bool		parked;
	uint64		made;
	uint64		nticks;
	uint64		at;
	FtProfFrame *sampled;
	bool		sampled_exact;

	/*
	 * The flag cleared, then the worker's count read (it counts a tick
	 * before it sets the flag): a tick counted here whose flag lands after
	 * the clearing makes a take that finds no new tick, which counts
	 * nothing; a tick not counted here sets the flag after the clearing,
	 * and the next take counts it.  Each tick is counted once.
	 */
	ft_prof_suspended = 0;
	pg_memory_barrier();
	made = ft_ticker_ticks();
	if (ft_prof_depth == 0)
	{
		ft_prof_worker_taken = made;
		return;
	}
	ft_prof_busy = 1;
	pg_compiler_barrier();
	now = ft_prof_now(ft_prof_tsc);
	ago_ns = ft_ticker_tick_ago();
	parked = ft_ticker_unpark();
	/* the worker's ticks since the last taken: more than one in a long call */
	nticks = made > ft_prof_worker_taken ? made - ft_prof_worker_taken : 0;
	ft_prof_worker_taken = made;
	since = now > ft_prof_last ? now - ft_prof_last : 0;
	ago = ft_prof_tsc ?
		(uint64) ((double) ago_ns * (ft_conv.hz / 1e9)) : (uint64) ago_ns;

	/*
	 * The sample ends at the tick's instant, as a signal's would: the time
	 * since, to this transition, is the next sample's (crediting it to the
	 * node sampled would favour nodes whose calls run long between
	 * transitions).  A parked backend has waited since the tick, on the
	 * same chain: that is its own, exactly.
	 */
	ft_prof_sample_weight = nticks;
	at = now - Min(ago, since);
	sampled = ft_prof_worker_sample(ft_ticker_tick_top(), at, &sampled_exact);
	ft_prof_credit_until(at, true, sampled, sampled_exact);
	ft_prof_sample_weight = 1;
	if (parked)
	{
		ft_prof_credit_until(now, false, NULL, false);
		/* the worker ticks again on its grid: the watchdog waits */
		ft_prof_watch_ticks = FT_PROF_WATCH_FIRST;
	}
	ft_prof_ticks_total += nticks;
	for (int i = 0; i < ft_prof_depth; i++)
	{
		FtProfQuery *q = ft_prof_stack[i];

		q->ticks += nticks;
		q->worker_ticks = true;
		q->tick_ms += nticks * (uint64) ft_prof_cur_ms;
		q->tick_ms_sq += nticks * (uint64) ft_prof_cur_ms * ft_prof_cur_ms;
		q->longest_ms = Max(q->longest_ms, ft_prof_cur_ms);
	}
	ft_prof_lengthen((int) Min(nticks, FT_PROF_TICKS_PER_STEP));
	pg_compiler_barrier();
	ft_prof_busy = 0;
	if (ft_prof_watch_parked && ft_prof_registered)
	{
		/* the wait has ended: the watchdog every watch_ms again */
		ft_prof_watch_parked = false;
		ft_prof_watch_ticks = FT_PROF_WATCH_FIRST;
		enable_timeout_every(ft_prof_timeout,
							 TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
														 ft_prof_watch_ms),
							 ft_prof_watch_ms);
	}
}

/*
 * A run ends, by error or not (the executor hooks, before they restore
 * the chain), or a nested run begins: a worker's tick not yet taken is
 * taken now, while the run's frames are still there (an error skips the
 * transitions that would take it), and is not counted for a nested query.
 */
void
ft_prof_take_worker_tick(void)
{
	if (ft_prof_on_worker && ft_prof_suspended)
		ft_prof_worker_tick();
}

/*
 * The first transition after the tick stopped itself (main code, before
 * the chain changes): credit the time since the last tick to the
 * unchanged chain, exactly, and re-arm the periodic timeout at the
 * interval the tick wants, on the stopped tick's grid.
 */
void
ft_prof_resume(void)
{
	TimestampTz now_ts;
	TimestampTz fin;
	int			ms;
	int64		step;

	if (ft_prof_on_worker)
	{
#ifdef FASTTIME_FAULT_INJECTION
		static int	passed_over = 0;

		if (ft_prof_depth > 0 && passed_over < ft_fault_worker_take_late)
		{
			passed_over++;
			return;
		}
		passed_over = 0;
#endif
		ft_prof_worker_tick();
		return;
	}
	if (!ft_prof_signal_stopped)
	{
		/* the worker's last tick of a run that has stopped it: nothing */
		ft_prof_suspended = 0;
		return;
	}
	if (ft_prof_depth > 0)
	{
		ft_prof_busy = 1;
		pg_compiler_barrier();
		ft_prof_credit_until(ft_prof_now(ft_prof_tsc), false, NULL, false);
		pg_compiler_barrier();
		ft_prof_busy = 0;
	}
	ft_prof_signal_stopped = 0;
	ft_prof_suspended = 0;
	pg_compiler_barrier();
	if (ft_prof_depth == 0 || !ft_prof_registered)
		return;
#ifdef FASTTIME_FAULT_INJECTION
	if (ft_fault_switch_in_resume)
	{
		/* a tick's switch here; a real one waits (ft_prof_busy) */
		ft_prof_busy = 1;
		pg_compiler_barrier();
		ft_prof_fault_switch();
		pg_compiler_barrier();
		ft_prof_busy = 0;
	}
#endif
	/* a request a tick makes after this (a switch) stays for the slow path */
	ft_prof_rearm_pending = 0;
	pg_compiler_barrier();
	ms = ft_prof_want_ms;
	if (ms != ft_prof_cur_ms)
	{
		ft_prof_step_ticks = 0;
		ft_prof_cur_ms = ms;
	}
	if (ft_prof_use_worker && ft_prof_switched)
	{
		/* the switch came with the tick stopped: the worker from now */
		ft_prof_to_worker(ms);
		return;
	}
	now_ts = GetCurrentTimestamp();
	step = (int64) ms * 1000;
	fin = ft_prof_suspend_fin;
	if (fin <= 0 || fin > now_ts)
		fin = now_ts + step;
	else
		fin += ((now_ts - fin) / step + 1) * step;
	enable_timeout_every(ft_prof_timeout, fin, ms);
}

/*
 * The tick, in the SIGALRM handler: arithmetic on memory, one clock read,
 * and one call of timeout.c when it stops itself.  Under ft_prof_busy it
 * credits nothing; the next tick credits from the last one.
 */
static volatile uint64 ft_prof_idle_ticks = 0;

static void
ft_prof_tick(void)
{
	uint64		now;
	bool		stopped;
	int			counted_ms = ft_prof_cur_ms;	/* the interval it counts as */

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
	if (ft_prof_on_worker)
	{
		uint64		worker_ticks = ft_ticker_ticks();

		/*
		 * The watchdog: the worker is ticking, or the backend waits (then
		 * it only looks once a second, or every look would wake the
		 * backend: PostgreSQL's handler sets the latch).
		 */
		if (ft_ticker_parked() && ft_ticker_running())
		{
			ft_prof_watch_parked = true;
			enable_timeout_after(ft_prof_timeout, FT_PROF_SUSPENDED_MS);
			return;
		}
		if (worker_ticks != ft_prof_watch_ticks)
		{
			ft_prof_watch_ticks = worker_ticks;
			return;
		}

		/*
		 * No tick for a watchdog interval, or no worker: signals from
		 * here on, at the interval the run had (main code re-arms); this
		 * one samples, counted at that interval.
		 */
		ft_ticker_stop();
		ft_prof_on_worker = false;
		ft_prof_use_worker = false;
		for (int i = 0; i < ft_prof_depth; i++)
			ft_prof_stack[i]->worker_fallback = true;
		ft_prof_want_ms = ft_prof_cur_ms;
		ft_prof_cur_ms = ft_prof_watch_ms;
		ft_prof_rearm_pending = 1;
		ft_prof_gate = FT_FRAME_NONE;
	}
	now = ft_prof_now(ft_prof_tsc);
	/* stopped in a wait, the chain has not changed since: no sample */
	stopped = ft_prof_signal_stopped;
	ft_prof_credit_until(now, !stopped, NULL, false);

	ft_prof_ticks_total++;

	/*
	 * A query's ticks are those that sample, after the switch: not the
	 * backstop of a stopped tick (one a second of a wait), which would
	 * count as a tick of the interval and bring the lengthening forward.
	 */
	if (ft_prof_switched && !stopped)
	{
		for (int i = 0; i < ft_prof_depth; i++)
		{
			FtProfQuery *q = ft_prof_stack[i];

			q->ticks++;
			q->tick_ms += counted_ms;
			q->tick_ms_sq += (uint64) counted_ms * counted_ms;
			q->longest_ms = Max(q->longest_ms, counted_ms);
		}
		ft_prof_lengthen(1);
	}
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
 * Error context callback around RegisterTimeout, whose only error is a
 * FATAL that cannot be caught; errfinish runs the callbacks before it
 * reports, so jump back to ft_prof_available from here, which resets the
 * error state.
 */
static void
ft_prof_register_escape(void *arg)
{
	if (ft_prof_register_jmp != NULL)
		siglongjmp(*ft_prof_register_jmp, 1);
}

/*
 * Can this backend run profiled timing?  Registers the tick's timeout at
 * the first profiled query's ExecutorStart (not in _PG_init, which
 * InitializeTimeouts would undo).  RegisterTimeout raises FATAL when the
 * slots are taken; fasttime must never end a session, so it is caught
 * before it is reported, and this backend times exactly (one LOG).  Called
 * outside any error handling, so the reset drops only that FATAL.
 */
bool
ft_prof_available(void)
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

	/*
	 * From the first profiled query on, the gate and the suspension live in
	 * this backend's slot of the tick worker's shared memory, if it has one
	 * (no run is under way yet).
	 */
	if (ft_prof_registered && ft_prof_flags == &ft_prof_own_flags)
	{
		FtTickFlags *slot = ft_ticker_attach();

		if (slot != NULL)
		{
			ft_prof_busy = 1;
			pg_compiler_barrier();
			slot->gate = ft_prof_own_flags.gate;
			slot->suspended = ft_prof_own_flags.suspended;
			ft_prof_flags = slot;
			ft_chain_move_top(ft_ticker_chain_top_at());
			pg_compiler_barrier();
			ft_prof_busy = 0;
		}
	}

	/* (a parallel worker, a process a query, leaves it to its leader) */
	if (ft_prof_unavailable && !IsParallelWorker())
		ereport(LOG,
				(errmsg("profiled node timing is not available in this session, so plan nodes are timed exactly"),
				 errdetail("Every timeout slot PostgreSQL offers extensions is taken in this backend, and profiled timing needs one for its tick."),
				 errhint("Other loaded extensions use the slots; exact node timing works without one.")));
	return ft_prof_registered;
}

/*
 * Is profiled timing worth setting up for a plan estimated to make so many
 * node calls?  A plan that cannot near the exact prefix's read bound is
 * timed exactly throughout, without a profiled run's set-up, which costs
 * more than the timing on a short statement.  The margin covers row
 * estimates off by an order of magnitude or two; beyond it a plan is
 * still timed right.  With profile_after = 0 every plan is profiled.
 */
#define FT_PROF_ESTIMATE_MARGIN 100.0

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
 * The interval of the ticks of the outermost run's exact prefix, which
 * only ask whether the switch is due.  A plan expected to end its prefix
 * by reads (ft_prof_early, below) ticks at the profiled interval, so that
 * it switches soon after its reads have cost a quarter of its time; any
 * other at a quarter of profile_after, at most FT_PROF_PREFIX_TICK_MS:
 * four ticks in the default 20 ms rather than sixteen, each a signal that
 * credits nothing (27-75 us of CPU on a kvm-clock guest), while a plan
 * estimated too low still switches within 5 ms of its reads passing the
 * bound.  The tick that switches asks for the profiled interval.
 */
static int
ft_prof_prefix_ms(void)
{
	if (ft_prof_early)
		return ft_prof_first_ms;
	return Max(ft_prof_first_ms,
			   Min(ft_profile_after_ms / 4, FT_PROF_PREFIX_TICK_MS));
}

/*
 * When the outermost run's first tick comes, in ms from its start.  A
 * plan under EXPLAIN that the planner expects to make more calls than
 * those whose reads cost a quarter of profile_after (ft_prof_early;
 * node_timing.c passes no estimate for other statements) would end its
 * prefix by reads anyway: its first tick comes after one interval, and it
 * switches there if its reads have cost a quarter of its time so far,
 * which saves most of the prefix on plans of many cheap calls (W1 on a
 * kvm-clock guest: 2-7 points of 15-20, bench/results/2026-12-05e-kind-b).
 * Any other run's first tick comes after a quarter of profile_after, or
 * after one interval if later, moved up to one prefix interval later so
 * that a tick falls at profile_after (ft_prof_prefix_ms): a shorter query
 * takes no signal, which matters for short queries back to back
 * (timeout.c leaves the interrupt pending when a timeout is disabled).
 * An estimate too high costs an EXPLAIN a few signals before a quarter of
 * profile_after, never its exact prefix: the switch still waits for the
 * reads.
 */
static int
ft_prof_first_tick_ms(void)
{
	int			first;
	int			step = ft_prof_prefix_ms();

	if (ft_prof_early)
		return ft_prof_first_ms;
	first = Max(ft_prof_first_ms, ft_profile_after_ms / 4);
	/* on the prefix ticks' grid, one tick falls at profile_after */
	if (ft_profile_after_ms > first)
		first = ft_profile_after_ms -
			(ft_profile_after_ms - first) / step * step;
	return first;
}

/*
 * No run is under way any more: stop the ticks, the timeout's or the
 * worker's.
 */
static void
ft_prof_stop_ticks(void)
{
	if (ft_prof_on_worker)
		ft_ticker_stop();
	ft_prof_on_worker = false;
	ft_prof_use_worker = false;
	ft_prof_signal_stopped = 0;
	ft_prof_suspended = 0;
	if (ft_prof_registered && get_timeout_active(ft_prof_timeout))
		disable_timeout(ft_prof_timeout, false);
}

/*
 * fasttime.tick_source = worker where the server started without the
 * worker (set later, or per database, role or session; or fasttime not
 * preloaded): the runs tick with signals, which the server log says once
 * per backend, so that the setting is not ignored silently.  LOG, not a
 * warning to the client: the numbers are as true either way.
 */
static void
ft_prof_note_no_worker(void)
{
	static bool noted = false;

	/* a parallel worker, a process a query, leaves it to its leader */
	if (noted || IsParallelWorker())
		return;
	noted = true;
	ereport(LOG,
			(errmsg("fasttime.tick_source is \"worker\", but this server has no tick worker"),
			 errdetail("The tick worker is started only where fasttime is in shared_preload_libraries and fasttime.tick_source is \"worker\" when the server starts; this backend's profiled runs are ticked by timer signals."),
			 errhint("Set fasttime.tick_source = worker in postgresql.conf and restart the server, or set it to signal.")));
}

/*
 * A profiled query's run begins: make its frames current, in the mode of
 * the outermost run (a new outermost run starts exact again), which
 * starts the ticks.  The caller restores with ft_prof_leave, also on
 * error.
 */
void
ft_prof_enter(FtProfQuery *q, FtProfFrame ***saved_frames,
			  uint32 *saved_nframes)
{
	/*
	 * A nested run: a tick the worker made meanwhile is the running
	 * chain's, the outer run's (its first transition would count it for
	 * the nested query too).
	 */
	if (ft_prof_depth > 0)
	{
		if (ft_prof_on_worker)
			ft_prof_take_worker_tick();
		else
			ft_prof_resume_if_suspended();
	}

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
		/* a call's two reads, and the calls whose reads cost after / 4 */
		ft_prof_call_reads = 2.0 * ft_prof_measure_read_ns(ft_prof_tsc);
		ft_prof_max_calls = (double) ft_profile_after_ms * 1e6 / 4.0 /
			ft_prof_call_reads;
		if (ft_prof_tsc)
			ft_prof_call_reads *= ft_conv.hz / 1e9;
		ft_prof_early = q->est_calls >= ft_prof_max_calls;
		ft_prof_run_start = ft_prof_now(ft_prof_tsc);
		ft_prof_last = ft_prof_run_start;
		ft_prof_carved = 0;
		ft_prof_pending = 0;
		/* the prefix's interval; the switch asks for the profiled one */
		ft_prof_first_ms = ft_profile_interval_ms;
		ft_prof_cur_ms = ft_prof_prefix_ms();
		ft_prof_want_ms = ft_prof_cur_ms;
		ft_prof_max_ms = Max(ft_prof_first_ms, ft_profile_interval_max_ms);
		ft_prof_step_ticks = 0;
		ft_prof_rearm_pending = 0;
		ft_prof_suspended = 0;
		ft_prof_signal_stopped = 0;
		ft_prof_on_worker = false;
		if (ft_tick_source == FT_TICK_SOURCE_WORKER && !ft_ticker_started())
			ft_prof_note_no_worker();
		ft_prof_use_worker = ft_tick_source == FT_TICK_SOURCE_WORKER &&
			ft_ticker_running();
		ft_prof_build_ending = NULL;
#ifdef FASTTIME_FAULT_INJECTION
		ft_prof_fault_switch_armed = false;
#endif
	}

	/* what its earlier runs called (before it is on the stack) */
	q->calls_before = q->ran ? ft_prof_query_calls(q) : 0.0;
	q->ran = true;

	/* no tick between here and the end of the mode change */
	ft_prof_busy = 1;
	pg_compiler_barrier();
	/* frames made exact below: the fast path's gate shut first */
	ft_prof_gate = FT_FRAME_NONE;
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

	if (ft_prof_depth == 1 && ft_prof_available())
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
	/* a build left open is this run's (an outer one's ended as it began) */
	ft_prof_build_ending = NULL;
	if (ft_prof_depth == 0)
		ft_prof_stop_ticks();
}

/*
 * A profiled query's executor memory is going away: if its run is still
 * on the stack, drop it and every run above it (nested in it), and stop
 * the ticks when none is left.  Normally ft_prof_leave has popped it
 * long before.  A FATAL error (pg_terminate_backend, a client that
 * client_connection_check_interval finds gone, transaction_timeout) does
 * not unwind through the executor hooks: proc_exit aborts the
 * transaction, which deletes the portals' executor memory well before the
 * abort callback calls ft_prof_reset, and a tick in between would write
 * into the freed query and follow its freed frames.
 */
void
ft_prof_forget(FtProfQuery *q)
{
	int			i;

	for (i = 0; i < ft_prof_depth; i++)
	{
		if (ft_prof_stack[i] == q)
			break;
	}
	if (i == ft_prof_depth)
		return;
	ft_prof_busy = 1;
	pg_compiler_barrier();
	ft_prof_depth = i;
	ft_prof_frames = i > 0 ? ft_prof_stack[i - 1]->frames : NULL;
	ft_prof_nframes = i > 0 ? (uint32) ft_prof_stack[i - 1]->nframes : 0;
	ft_prof_gate = FT_FRAME_NONE;
	ft_prof_build_ending = NULL;
	pg_compiler_barrier();
	ft_prof_busy = 0;
	if (ft_prof_depth == 0)
		ft_prof_stop_ticks();
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
	ft_prof_build_ending = NULL;
	ft_prof_gate = FT_FRAME_NONE;
	pg_compiler_barrier();
	ft_prof_busy = 0;
	ft_prof_stop_ticks();
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

/* This thread's CPU time, ns: what a tick takes, whatever else runs. */
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
 * backend: about 10 ms of CPU work run without ticks and with a tick every
 * millisecond (whose handler only counts), in rounds alternating which
 * half runs first so that a drift in speed weighs on both alike.  Each
 * round's CPU time difference over its ticks is an estimate; the cost is
 * their median.  About 170 ms in all; 0 when nothing could be measured.
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
	if (!ft_prof_available())
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
	cost = ft_prof_median(est, n);
	cost = Max(cost, 0.0);
	return cost;
}

/*
 * What ft_prof_tick_cost_ns measured earlier, false if nothing: for
 * fasttime_status(), which anyone may call and must not spin 170 ms.
 */
bool
ft_prof_tick_cost_known(double *cost_ns)
{
	if (cost < 0.0)
		return false;
	*cost_ns = cost;
	return true;
}
