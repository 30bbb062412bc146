/*-------------------------------------------------------------------------
 *
 * profiler.h
 *	  Profiled node timing (fasttime.node_timing = profile): which plan node
 *	  is executing, kept by the node wrappers, and the parts of the
 *	  bookkeeping they run inline.
 *
 * Every plan node of a profiled query has a frame (FtProfFrame, of
 * prof_frame.h, part of the node's own frame of usage.h, so that a wrapper
 * reaches it with no load; the query lists them by plan_node_id).  A node's
 * wrapper links its node frame on top of the chain of the calls under way
 * (usage.h: one chain, which buffer and WAL crediting walks too) for the
 * duration of each call.  A frame is either exact -- the call is timed with
 * two clock reads, as in exact timing -- or profiled: no clock read, and the
 * periodic tick (profiler.c) credits the time elapsed since the previous
 * tick to every profiled frame on top of the chain, down to the first exact
 * one.  Frames on the chain that belong to no profiled query (a query run
 * inside a node with timing of its own, whose calls are linked for its
 * buffer counts) are neither: their mode is FT_FRAME_NONE and every walk
 * here passes over them, as if they were not linked.  An exact call on top
 * of profiled frames credits its duration to them when it returns
 * (ft_prof_settle_up), and a tick that lands inside it credits them its time
 * so far; either way the next tick credits only the rest of its interval, so
 * that time is counted once per node and a node's inclusive time contains
 * its callees' whatever mixes of exact and profiled frames are on the chain,
 * as long as no profiled frame runs inside an exact one -- which profiler.c
 * guarantees: every query starts exact and all of them switch together, and
 * the frames that stay exact for good (nodes below a Parallel Hash and
 * bitmap nodes, which the executor drives through MultiExecProcNode and
 * times itself, nodes with async children, and async nodes) have only
 * such frames below them.  A Hash that builds alone is timed through a
 * frame of its own that its child's calls link for the build
 * (ft_prof_build_link).  No exact
 * call credits the time before it to anyone: only a tick, at an instant that
 * has nothing to do with the plan's rhythm, tells which node was executing.
 *
 * Nothing here reads a clock in a profiled call: the wrapper stores two
 * pointers (the same two a node counting buffers stores anyway) and, when
 * it returns, tests whether the tick stopped itself in a wait
 * (ft_prof_suspended).  The tick and the settlements change the counters
 * of frames that are on the chain, in a signal handler; the main code
 * changes a node's counter only while its frame is off the chain (after
 * its call returned), or under ft_prof_busy, which makes a tick that lands
 * then wait for the next one.  An exact call takes ft_prof_busy around
 * its start and link, and around its unlink and settle-up, so that no
 * tick finds it off the chain with its time already its callers' or not
 * yet theirs.  Every frame points at the unit its query writes times in,
 * and is credited in it (profiler.c).
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

#include "port/atomics.h"

/* values of fasttime.node_timing */
typedef enum FtNodeTimingMode
{
	FT_NODE_TIMING_EXACT = 0,
	FT_NODE_TIMING_PROFILE
} FtNodeTimingMode;

/*
 * What one profiled query keeps: its frames, and what EXPLAIN
 * (CLOCK_SOURCE) says of it.
 */
typedef struct FtProfQuery
{
	FtProfFrame **frames;		/* by plan_node_id: each node's frame, in
								 * its own frame (usage.h); NULL where none */
	int			nframes;
	bool		tsc;			/* clock: the TSC, else clock_gettime ns */
	uint64		ticks;			/* ticks that ran while it did */
	uint64		tick_ms;		/* their intervals' sum, ms */
	uint64		tick_ms_sq;		/* the sum of their intervals' squares */
	int			longest_ms;		/* the longest interval it ticked at */
	uint64		samples;		/* ticks after the switch that credited
								 * time as a sample, while it ran */
	double		sample_ms;		/* the time they credited, ms */
	double		sample_sq_ms;	/* the sum of its squares, ms^2 */
	bool		switched;		/* its frames were profiled at some point */
	double		exact_ms;		/* the outermost run's time at the switch */
	int			interval_ms;	/* the settings it ran with */
	int			after_ms;
	FtInstrUnits units;			/* the unit its times are written in (its
								 * frames point here) */
	uint64		wrapper_ticks;	/* ticks that found a profiled wrapper's own
								 * code running */
	double		wrapper_ms;		/* the time they credited to no node */
} FtProfQuery;

/* main code is changing counters of frames on the chain */
extern volatile sig_atomic_t ft_prof_busy;

/*
 * A profiled call's wrapper is running its own code, not the node's: set
 * by the profiled phase's fast path around everything it does besides the
 * call of the node (node_wrappers.c).  A tick that finds it set credits
 * its interval to no node (FtProfQuery.wrapper_ms): the wrapper's work is
 * not part of the uninstrumented query, and crediting it to the caller or
 * the callee made the node calling a child millions of times look costlier
 * than it is (bench/shares.sh).
 */
extern volatile uint8 ft_prof_in_wrapper;

/*
 * The gate of the profiled phase's fast path: FT_FRAME_PROFILED only while
 * no frame on the chain is exact, so that a call whose own frame is
 * profiled may take that path without looking at its callers.  An exact
 * call shuts it before its frame is linked (or made exact), and
 * ft_prof_gate_open, in main code, opens it again once a walk of the chain
 * finds no exact frame.  The tick never makes a frame exact; it only ever
 * shuts the gate, when it wants the timeout re-armed at a longer interval
 * (which only main code may do), or when it stops itself in a wait: the
 * next call then takes the slow path, whose ft_prof_gate_open re-arms or
 * resumes it.  Shutting is always safe, and a shutting undone by an
 * opening under way is seen by that opening once it has opened the gate.
 */
extern volatile uint8 ft_prof_gate;

/* the clock at the last tick */
extern volatile uint64 ft_prof_last;

/* the frames of the query running now */
extern FtProfFrame **ft_prof_frames;
extern uint32 ft_prof_nframes;

/* settings */
extern int	ft_node_timing;		/* fasttime.node_timing */
extern int	ft_profile_interval_ms; /* fasttime.profile_interval */
extern int	ft_profile_interval_max_ms; /* fasttime.profile_interval_max */
extern int	ft_profile_after_ms;	/* fasttime.profile_after */

/*
 * Will this call of a node with a child the executor times itself run
 * that child?  Then the call is exact, so that the node's time contains
 * the child's (core times it with its own clock reads, which no tick can
 * split).  A Hash Join builds its hash table, running its Hash, when it
 * has none (its first call, or the first after a rescan that dropped
 * it), which matters only for a Parallel Hash: any other Hash is timed by
 * the ticks (prof_plan.c); a Bitmap Heap Scan runs its bitmap nodes in the first call of each
 * scan.  Any other such node (none in core today) is exact every call.
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

/*
 * A difference of the profiler's clock (TSC ticks, or clock_gettime
 * nanoseconds) in instr_time ticks of a query's unit.
 */
static inline uint64
ft_prof_units(const FtInstrUnits *u, uint64 delta, bool tsc)
{
	return ft_ticks_to_ns(tsc ? &u->tsc : &u->ns,
						  (int64) Min(delta, (uint64) PG_INT64_MAX));
}

/*
 * Add a clock difference to a node's time, in the unit of the node's own
 * query (which need not be the query running now: profiler.c).
 */
static inline void
ft_prof_add(FtProfFrame *pf, uint64 delta, bool tsc)
{
	ft_instr_time_add_units(&pf->instr->counter, ft_prof_units(pf->units, delta, tsc));
}

extern void ft_prof_settle_up(FtProfFrame *from, uint64 delta, uint64 now,
							  bool tsc);
extern void ft_prof_join_late(FtProfFrame *pf, uint64 start);
struct FtUsageFrame;
extern void ft_prof_build_link(struct FtUsageFrame *bf, bool tsc);
extern void ft_prof_build_unlink(struct FtUsageFrame *bf, bool tsc);
extern void ft_prof_gate_open(void);
extern void ft_prof_rearm(void);

/* the tick wants the timeout re-armed at a longer interval */
extern volatile sig_atomic_t ft_prof_rearm_pending;

/*
 * The tick found the backend waiting and stopped itself (profiler.c):
 * the next transition of a profiled query's call -- a call starting or
 * returning -- resumes it, before it changes the chain.
 */
extern volatile sig_atomic_t ft_prof_suspended;
extern void ft_prof_resume(void);

/*
 * Resume the tick if it stopped itself (main code: every transition of a
 * profiled query's call checks, the plain profiled calls' starts through
 * the gate, which the stopping tick shuts).
 */
static inline void
ft_prof_resume_if_suspended(void)
{
	if (unlikely(ft_prof_suspended))
		ft_prof_resume();
}

/*
 * Re-arm the tick's timeout if the tick asked (main code only: the slow
 * path of every call of a profiled query checks, so that a stretch of
 * exact calls -- a hash table's build -- does not hold the old interval).
 */
static inline void
ft_prof_rearm_if_asked(void)
{
	if (unlikely(ft_prof_rearm_pending))
		ft_prof_rearm();
}

/*
 * How far below the exact prefix's read bound a plan's estimated node
 * calls must stay for the plan to be timed exactly throughout
 * (ft_prof_pays): the planner's row estimates are often off by an order
 * of magnitude or two.
 */
#define FT_PROF_ESTIMATE_MARGIN 100.0

/* ticks per interval before the interval doubles (profiler.c) */
#define FT_PROF_TICKS_PER_STEP 250
#ifdef FASTTIME_FAULT_INJECTION
extern void ft_prof_fault_switch(void);
extern void ft_prof_fault_at_return(PlanState *node);
extern void ft_prof_fault_in_wrapper(void);
#endif

/* executor hooks' side (profiler.c) */
extern FtProfQuery *ft_prof_query_create(PlanState *planstate,
										 List *subplanstates, int nframes,
										 bool tsc, MemoryContext cxt);
extern bool ft_prof_active(void);
extern bool ft_prof_available(void);
extern double ft_prof_estimated_calls(PlanState *planstate, double limit);
extern bool ft_prof_pays(double estimated_calls, bool tsc);
extern bool ft_prof_clock_is_tsc(void);
extern void ft_prof_enter(FtProfQuery *q, FtProfFrame ***saved_frames,
						  uint32 *saved_nframes);
extern void ft_prof_leave(FtProfQuery *q, FtProfFrame **saved_frames,
						  uint32 saved_nframes);
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
