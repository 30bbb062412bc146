/*-------------------------------------------------------------------------
 *
 * profiler.h
 *	  Profiled node timing (fasttime.node_timing = profile): which plan node
 *	  is executing, kept by the node wrappers, and the parts of the
 *	  bookkeeping they run inline.
 *
 * Every plan node of a profiled query has a frame (FtProfFrame, inside the
 * node's frame of usage.h, reached with no load; listed by plan_node_id),
 * which its wrapper links on the chain of calls under way (usage.h) for
 * each call.  An exact frame's call is timed with two clock reads; a
 * profiled one's reads no clock, and the periodic tick (profiler.c)
 * credits the time since the previous tick to every profiled frame on top
 * of the chain, down to the first exact one.  Frames of queries not
 * profiled (FT_FRAME_NONE, linked for buffer counts) are passed over.  An
 * exact call on top of profiled frames credits them its duration at its
 * return (ft_prof_settle_up), a tick inside it its time so far, and the
 * next tick only the rest: time is counted once per node, and inclusive
 * times contain callees', as long as no profiled frame runs inside an
 * exact one.  Hence every query starts exact and all switch together, and
 * frames exact for good (below a Parallel Hash or a bitmap node, which
 * core times through MultiExecProcNode; nodes with async children; async
 * nodes) have only such frames below them.  A Hash that builds alone is
 * timed through a frame its child's calls link (ft_prof_build_link).  No
 * exact call credits the time before it to anyone: only a tick, at an
 * instant unrelated to the plan, tells which node was executing.
 *
 * The tick (a signal handler) and the settlements change counters of
 * frames on the chain; main code changes a node's counter only while its
 * frame is off the chain or under ft_prof_busy, which makes a tick that
 * lands then wait for the next.  An exact call holds ft_prof_busy around
 * its start and link, and around its unlink and settle-up, so that no
 * tick finds it off the chain with its time already its callers' or not
 * yet theirs.  Each frame is credited in its own query's unit.
 *
 * src/profiler.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FASTTIME_PROFILER_H
#define FASTTIME_PROFILER_H

#include <signal.h>

#include "compat.h"
#include "prof_frame.h"
#include "ticker.h"

#include "port/atomics.h"

/* values of fasttime.node_timing */
typedef enum FtNodeTimingMode
{
	FT_NODE_TIMING_EXACT = 0,
	FT_NODE_TIMING_PROFILE
} FtNodeTimingMode;

/* values of fasttime.tick_source */
typedef enum FtTickSource
{
	FT_TICK_SOURCE_WORKER = 0,
	FT_TICK_SOURCE_SIGNAL
} FtTickSource;

/* What one profiled query keeps: its frames, and what EXPLAIN shows. */
typedef struct FtProfQuery
{
	FtProfFrame **frames;		/* by plan_node_id; NULL where none */
	int			nframes;
	bool		tsc;			/* clock: the TSC, else clock_gettime ns */
	uint64		ticks;			/* ticks that ran while it did */
	uint64		tick_ms;		/* their intervals' sum, ms */
	uint64		tick_ms_sq;		/* the sum of their intervals' squares */
	int			longest_ms;		/* the longest interval it ticked at */
	uint64		samples;		/* ticks after the switch that sampled it */
	double		sample_ms;		/* the time they credited, ms */
	double		sample_sq_ms;	/* the sum of its squares, ms^2 */
	bool		switched;		/* its frames were profiled at some point */
	bool		worker_ticks;	/* the tick worker ticked it (not signals) */
	bool		worker_fallback;	/* then signals: the worker stopped */
	double		exact_ms;		/* the outermost run's time at the switch */
	double		est_calls;		/* estimated node calls (EXPLAIN's; else 0) */
	bool		ran;			/* it has run before (a cursor's FETCH) */
	double		calls_before;	/* its nodes' calls before this run */
	int			interval_ms;	/* the settings it ran with */
	int			after_ms;
	FtInstrUnits units;			/* its times' unit; its frames point here */
} FtProfQuery;

/* main code is changing counters of frames on the chain */
extern FT_HIDDEN volatile sig_atomic_t ft_prof_busy;

/*
 * The profiled fast path's gate: FT_FRAME_PROFILED only while no frame on
 * the chain is exact and every frame on a fast wrapper is profiled, so a
 * call on that wrapper may take the fast path testing the gate alone
 * (neither its own frame nor its callers').  An exact call shuts it
 * before its frame is linked (or made exact), and so does a run's start
 * (ft_prof_enter), which makes its frames exact until the switch unless
 * the switch is past; only a profiled frame's slow path opens it again
 * (ft_prof_gate_open), and a frame moves to a fast wrapper only when
 * profiled.  The tick never makes a frame exact; it shuts the gate only
 * to send the next call to the slow path, to re-arm or resume it.
 * Shutting is always safe, and an opening under way sees a shutting it
 * undid once the gate is open.
 */
#define ft_prof_gate (ft_prof_flags->gate)

/*
 * The gate and the suspension (below) live in FtTickFlags: the backend's
 * own, or its slot of the tick worker's shared memory once it has one, so
 * that the worker can set them (ticker.h).  Every access goes through
 * this pointer, which changes only while no run is under way.
 */
extern FT_HIDDEN FtTickFlags *ft_prof_flags;

/*
 * The clock of the outermost profiled run (true: the TSC), which every
 * reading compared within the run must be on.  A query begun inside the
 * run takes it; one begun outside (a cursor) and run inside may be on the
 * other, and its wrappers then move to this one (node_wrappers.c).
 */
extern FT_HIDDEN bool ft_prof_tsc;

/* the frames of the query running now */
extern FT_HIDDEN FtProfFrame **ft_prof_frames;
extern FT_HIDDEN uint32 ft_prof_nframes;

/* settings */
extern int	ft_node_timing;		/* fasttime.node_timing */
extern int	ft_profile_interval_ms; /* fasttime.profile_interval */
extern int	ft_profile_interval_max_ms; /* fasttime.profile_interval_max */
extern int	ft_profile_after_ms;	/* fasttime.profile_after */
extern int	ft_tick_source;		/* fasttime.tick_source */

/*
 * Will this call of a node with a child the executor times itself run
 * that child?  Then the call is exact, so that it contains the child's
 * time (core's own clock reads, which no tick can split).  A Hash Join
 * builds when it has no table (only a Parallel Hash's matters: any other
 * Hash is ticked, prof_plan.c); a Bitmap Heap Scan runs its bitmap nodes
 * in the first call of each scan; any other such node is always exact.
 */
static inline bool
ft_prof_core_will_run(PlanState *node)
{
	if (IsA(node, HashJoinState))
		return ((HashJoinState *) node)->hj_HashTable == NULL;
	if (IsA(node, BitmapHeapScanState))
		return !((BitmapHeapScanState *) node)->initialized;
	return true;
}

/* a difference of the profiler's clock in instr_time units of a query */
static inline uint64
ft_prof_units(const FtInstrUnits *u, uint64 delta, bool tsc)
{
	return ft_ticks_to_ns(tsc ? &u->tsc : &u->ns,
						  (int64) Min(delta, (uint64) PG_INT64_MAX));
}

/* add a clock difference to a node's time, in its own query's unit */
static inline void
ft_prof_add(FtProfFrame *pf, uint64 delta, bool tsc)
{
	ft_instr_time_add_units(&pf->instr->counter, ft_prof_units(pf->units, delta, tsc));
}

extern void ft_prof_settle_up(FtProfFrame *from, uint64 delta, uint64 now,
							  bool tsc);
extern void ft_prof_join_late(FtProfFrame *pf, uint64 start);
extern void ft_prof_build_link(struct FtUsageFrame *bf, bool tsc);
extern void ft_prof_build_end_later(struct FtUsageFrame *bf);
extern void ft_prof_build_end_now(bool tsc);

/* a Hash's build frame still on the chain, to end at the next transition */
extern FT_HIDDEN struct FtUsageFrame *ft_prof_build_ending;

/*
 * End a Hash's build left on the chain (main code: at the start of every
 * slow path, and before its own unlink).
 */
static inline void
ft_prof_build_end_due(bool tsc)
{
	if (unlikely(ft_prof_build_ending != NULL))
		ft_prof_build_end_now(tsc);
}
extern void ft_prof_gate_open(void);
extern void ft_prof_rearm(void);

/* the tick wants the timeout re-armed at another interval */
extern FT_HIDDEN volatile sig_atomic_t ft_prof_rearm_pending;

/*
 * The tick stopped itself in a wait, or the tick worker ticked
 * (profiler.c): the next call starting or returning in a profiled query
 * calls ft_prof_resume before changing the chain.
 */
#define ft_prof_suspended (ft_prof_flags->suspended)
extern FT_HIDDEN void ft_prof_resume(void);
extern void ft_prof_take_worker_tick(void);

/*
 * Resume the tick if it stopped itself (main code: every transition
 * checks; plain profiled calls' starts through the gate the tick shut).
 */
static inline void
ft_prof_resume_if_suspended(void)
{
	if (unlikely(ft_prof_suspended))
		ft_prof_resume();
}

/*
 * Re-arm the tick's timeout if the tick asked (main code only: every slow
 * path checks, so a stretch of exact calls keeps no old interval).
 */
static inline void
ft_prof_rearm_if_asked(void)
{
	if (unlikely(ft_prof_rearm_pending))
		ft_prof_rearm();
}

#ifdef FASTTIME_FAULT_INJECTION
extern void ft_prof_fault_switch(void);
extern void ft_prof_fault_at_return(PlanState *node);
extern void ft_prof_fault_abort_tick(void);
#endif

/* executor hooks' side (profiler.c) */
extern FtProfQuery *ft_prof_query_create(PlanState *planstate,
										 List *subplanstates, int nframes,
										 bool tsc, bool (*on_wrappers) (PlanState *),
										 MemoryContext cxt);
extern bool ft_prof_active(void);
extern bool ft_prof_available(void);
extern double ft_prof_estimated_calls(PlanState *planstate, double limit);
extern bool ft_prof_pays(double estimated_calls, bool tsc);
extern bool ft_prof_clock_is_tsc(void);
extern void ft_prof_enter(FtProfQuery *q, FtProfFrame ***saved_frames,
						  uint32 *saved_nframes);
extern void ft_prof_leave(FtProfQuery *q, FtProfFrame **saved_frames,
						  uint32 saved_nframes);
extern void ft_prof_forget(FtProfQuery *q);
extern void ft_prof_reset(void);
extern uint64 ft_prof_backend_ticks(void);
extern uint64 ft_prof_backend_deferred(void);
extern double ft_prof_effective_ticks(const FtProfQuery *q);
extern double ft_prof_expected_error(double ticks, double share);
extern bool ft_prof_node_error(const FtProfQuery *q, int plan_node_id,
							   uint64 *ticks, double *error_ms);
struct StringInfoData;
extern void ft_prof_describe(const FtProfQuery *q, struct StringInfoData *buf);
extern double ft_prof_tick_cost_ns(void);
extern bool ft_prof_tick_cost_known(double *cost_ns);

#endif							/* FASTTIME_PROFILER_H */
