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

#include "compat.h"

#include "clock_state.h"
#include "node_wrappers.h"
#include "profiler.h"

/* fasttime.ordered_reads (FtReadOrder) */
extern int	ft_ordered_reads;

typedef struct FtNodeTimingStats
{
	int64		queries;		/* queries whose nodes were TSC-timed */
	int			last_query_nodes;	/* TSC-timed nodes in the latest one */
	int64		disagreements;	/* queries where the TSC disagreed */
	int			last_query_derived; /* its nodes whose usage is derived */
	int64		prof_declined;	/* queries timed exactly (FtProfDecline) */
	int64		small_plans;	/* small plans left as stock built them */
} FtNodeTimingStats;

extern FtNodeTimingStats ft_node_timing_stats;

/* why a query that asked for profiled timing was timed exactly */
typedef enum FtProfDecline
{
	FT_PROF_NOT_DECLINED = 0,
	FT_PROF_DECLINED_FEW_CALLS, /* its plan's estimated calls are too few */
	FT_PROF_DECLINED_NO_TIMEOUT /* no timeout slot for the tick */
} FtProfDecline;

/*
 * What timed one instrumented query, from ExecutorStart until its executor
 * state goes away: for the clock check and EXPLAIN (CLOCK_SOURCE).
 */
typedef struct FtQueryClock
{
	struct QueryDesc *queryDesc;
	const struct PlannedStmt *plannedstmt;
	FtClockSetting setting;		/* fasttime.clock_source at start */
	bool		node_timing;	/* per-node timing was asked for */
	bool		wrapped;		/* its nodes are on fasttime's wrappers */
	FtTimer		timer;			/* with this timer, when wrapped */
	FtProfQuery *prof;			/* its frames, when profiled */
	struct FtUsageDerived *derived; /* its nodes whose usage is derived */
	bool		has_frames;		/* some of its nodes have frames (usage.h) */
	FtProfDecline prof_declined;	/* why profiled timing was declined */
	double		est_calls;		/* estimated node calls, if profiled asked */
	FtInstrUnits units;			/* the unit its nodes' times are written in */
	bool		tsc;			/* its nodes were timed with the TSC */
	bool		checked;		/* ExecutorFinish compared the clocks */
	bool		disagreed;		/* ... and they disagreed */
	int64_t		wall_ns;		/* the two clocks' time over the query, */
	int64_t		tsc_ns;			/* when checked */
	double		tsc_hz;			/* the frequency converting its ticks */
	FtFreqOrigin tsc_hz_origin; /* where that frequency came from */
	uint64_t	tsc_start;		/* both clocks at start, when tsc */
	int64_t		wall_start_ns;
	int64_t		start_slack_ns; /* how far they may be off (paired_stamp) */
} FtQueryClock;

extern const FtQueryClock *ft_find_query_clock(const struct PlannedStmt *plannedstmt);
extern int	ft_open_query_notes(void);
extern void ft_install_executor_hooks(void);

#endif							/* FASTTIME_NODE_TIMING_H */
