/*-------------------------------------------------------------------------
 *
 * fasttime.h
 *	  Declarations shared by fasttime's source files.
 *
 * src/fasttime.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FASTTIME_H
#define FASTTIME_H

#include "clock_decide.h"
#include "clock_facts.h"
#include "ticks.h"

/* fasttime.c: settings and state */
extern int	ft_clock_setting;	/* fasttime.clock_source, an FtClockSetting */
extern FtTickConv ft_conv;		/* TSC conversion in use by the node wrapper */

extern const FtClockFacts *ft_get_facts(void);
extern const FtDecision *ft_get_decision(FtClockSetting setting);
extern FtClockChoice ft_effective_choice(void);
extern void ft_publish_facts(void);

/* node_timing.c: executor hooks */
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

/* explain_option.c: EXPLAIN (ANALYZE, CLOCK_SOURCE), PostgreSQL 18+ */
extern void ft_register_explain_option(void);

#endif							/* FASTTIME_H */
