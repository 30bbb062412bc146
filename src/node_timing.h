/*-------------------------------------------------------------------------
 *
 * node_timing.h
 *	  Executor hooks: which queries get fasttime's node wrappers, and what
 *	  timed each instrumented query.
 *
 * src/node_timing.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FASTTIME_NODE_TIMING_H
#define FASTTIME_NODE_TIMING_H

#include "clock_state.h"

typedef struct FtNodeTimingStats
{
	int64		queries;		/* queries whose nodes were TSC-timed */
	int			last_query_nodes;	/* TSC-timed nodes in the latest one */
	int64		disagreements;	/* queries where the TSC disagreed */
} FtNodeTimingStats;

extern FtNodeTimingStats ft_node_timing_stats;

/*
 * What timed one instrumented query, noted at ExecutorStart and kept until
 * ExecutorEnd: for the clock cross-check at ExecutorFinish, and for EXPLAIN
 * (CLOCK_SOURCE), which prints in between.
 */
typedef struct FtQueryClock
{
	struct QueryDesc *queryDesc;
	const struct PlannedStmt *plannedstmt;
	int			nest_level;		/* (sub)transaction nesting at start */
	FtClockSetting setting;		/* fasttime.clock_source at start */
	bool		node_timing;	/* per-node timing was asked for */
	bool		tsc;			/* its nodes were switched to the TSC */
	bool		checked;		/* ExecutorFinish compared the clocks */
	double		tsc_hz;			/* the frequency converting its ticks */
	FtFreqOrigin tsc_hz_origin; /* where that frequency came from */
	uint64_t	tsc_start;		/* both clocks at start, when tsc */
	int64_t		wall_start_ns;
} FtQueryClock;

extern const FtQueryClock *ft_find_query_clock(const struct PlannedStmt *plannedstmt);
extern void ft_install_executor_hooks(void);

#endif							/* FASTTIME_NODE_TIMING_H */
