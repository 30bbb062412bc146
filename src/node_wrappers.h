/*-------------------------------------------------------------------------
 *
 * node_wrappers.h
 *	  fasttime's per-node instrumentation wrappers (the hot path), and the
 *	  walk that puts a plan's nodes on them.
 *
 * src/node_wrappers.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FASTTIME_NODE_WRAPPERS_H
#define FASTTIME_NODE_WRAPPERS_H

#include "nodes/execnodes.h"

#include "clock_state.h"

/*
 * How the nodes of one query are timed: chosen once at executor start and
 * baked into the wrapper each node gets, so the wrapper never tests it.
 */
typedef enum FtTimer
{
	FT_TIMER_NONE = 0,			/* TIMING OFF: rows (and buffers, WAL) only */
	FT_TIMER_TSC,				/* every call, plain RDTSC */
	FT_TIMER_CLOCK_GETTIME,		/* every call, the stock clock */
	FT_TIMER_TSC_ORDERED,		/* every call, both reads LFENCE;RDTSC */
	/* profiled (profiler.h): exact until the switch, then profiled */
	FT_TIMER_PROF_PHASE_TSC,
	FT_TIMER_PROF_PHASE_CLOCK_GETTIME,
	/* node-level only: the profiled wrappers the above move nodes to */
	FT_TIMER_PROF_TSC,
	FT_TIMER_PROF_CLOCK_GETTIME,
	/* the same, for a node with a child the executor times itself */
	FT_TIMER_PROF_CORE_TSC,
	FT_TIMER_PROF_CORE_CLOCK_GETTIME
} FtTimer;

#define FT_N_TIMERS 10

/* Values of fasttime.ordered_reads: which TSC reads wait for earlier work. */
typedef enum FtReadOrder
{
	FT_READS_PLAIN = 0,			/* neither */
	FT_READS_BOTH				/* both */
} FtReadOrder;

/* Does this timer read the TSC? */
static inline bool
ft_timer_is_tsc(FtTimer timer)
{
	return timer == FT_TIMER_TSC ||
		timer == FT_TIMER_TSC_ORDERED ||
		timer == FT_TIMER_PROF_PHASE_TSC || timer == FT_TIMER_PROF_TSC ||
		timer == FT_TIMER_PROF_CORE_TSC;
}

/* Is it profiled? */
static inline bool
ft_timer_is_profiled(FtTimer timer)
{
	return timer == FT_TIMER_PROF_PHASE_TSC ||
		timer == FT_TIMER_PROF_PHASE_CLOCK_GETTIME ||
		timer == FT_TIMER_PROF_TSC || timer == FT_TIMER_PROF_CLOCK_GETTIME ||
		timer == FT_TIMER_PROF_CORE_TSC ||
		timer == FT_TIMER_PROF_CORE_CLOCK_GETTIME;
}

/*
 * Which of its TSC reads are ordered: profiled timing's exact calls read
 * in order whatever fasttime.ordered_reads says.
 */
static inline FtReadOrder
ft_timer_reads(FtTimer timer)
{
	switch (timer)
	{
		case FT_TIMER_TSC_ORDERED:
		case FT_TIMER_PROF_PHASE_TSC:
		case FT_TIMER_PROF_TSC:
		case FT_TIMER_PROF_CORE_TSC:
			return FT_READS_BOTH;
		default:
			return FT_READS_PLAIN;
	}
}

/*
 * The TSC read that ended this process's latest exact TSC-timed call: the
 * clock cross-check (node_timing.c) bounds a short query's reads by it.
 */
extern FT_HIDDEN uint64 ft_node_last_tsc;

extern void ft_wrappers_init(void);
extern const char *ft_wrappers_isa(void);
extern const char *ft_wrappers_isa_reason(void);
extern const char *ft_timer_name(FtTimer timer);
extern const char *ft_read_order_name(FtReadOrder order);

extern void ft_wrappers_learn_stock(void);
extern bool ft_wrappers_stock_known(void);
extern bool ft_wrappers_node_is_ours(PlanState *ps);
extern int	ft_wrap_query_nodes(PlanState *planstate, List *subplanstates,
								FtTimer timer, int *switched,
								int *max_plan_node_id);

#endif							/* FASTTIME_NODE_WRAPPERS_H */
