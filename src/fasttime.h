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
extern void ft_install_executor_hooks(void);

/* explain_option.c: EXPLAIN (ANALYZE, CLOCK_SOURCE), PostgreSQL 18+ */
extern void ft_register_explain_option(void);

#endif							/* FASTTIME_H */
