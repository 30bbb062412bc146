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
	FT_TIMER_TSC,				/* every call, RDTSC */
	FT_TIMER_CLOCK_GETTIME,		/* every call, the stock clock */
	FT_TIMER_TSC_SAMPLED,		/* a random 1 in N calls, RDTSC */
	FT_TIMER_CLOCK_GETTIME_SAMPLED	/* a random 1 in N calls, stock clock */
} FtTimer;

#define FT_N_TIMERS 5

/*
 * Sampled timing of one query: the scale that turns a unit-exponential
 * quantile into a geometric gap with mean interval, and the weight each
 * sampled call counts with (the exact mean of those gaps).
 */
typedef struct FtSampling
{
	int			interval;		/* fasttime.timing_sample_interval */
	double		gap_scale;
	double		weight;
} FtSampling;

extern void ft_wrappers_init(void);
extern const char *ft_wrappers_isa(void);
extern const char *ft_timer_name(FtTimer timer);
extern void ft_sampling_prepare(int interval, FtSampling *out);
extern void ft_sampling_swap(const FtSampling *in, FtSampling *saved);

extern void ft_wrappers_learn_stock(void);
extern bool ft_wrappers_stock_known(void);
extern int	ft_wrap_query_nodes(PlanState *planstate, List *subplanstates,
								FtTimer timer, int *switched);

#endif							/* FASTTIME_NODE_WRAPPERS_H */
