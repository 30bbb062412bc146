/*-------------------------------------------------------------------------
 *
 * clock_state.h
 *	  This process's clock facts, decisions and tick conversion.
 *
 * src/clock_state.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FASTTIME_CLOCK_STATE_H
#define FASTTIME_CLOCK_STATE_H

#include "clock_decide.h"
#include "clock_facts.h"
#include "ticks.h"

/* the variables behind the settings fasttime.c defines */
extern int	ft_clock_setting;	/* fasttime.clock_source, an FtClockSetting */
extern char *ft_leader_facts;	/* fasttime.leader_facts */
extern bool ft_publishing_facts;	/* ft_publish_facts is setting it */

extern FtTickConv ft_conv;		/* TSC conversion in use by the node wrappers */

extern const FtClockFacts *ft_get_facts(void);
extern const FtDecision *ft_get_decision(FtClockSetting setting);
extern FtClockChoice ft_effective_choice(void);
extern void ft_publish_facts(void);
extern bool ft_adopt_leader_facts(const char *serialized);
extern char *ft_sentence(const char *text);

#endif							/* FASTTIME_CLOCK_STATE_H */
