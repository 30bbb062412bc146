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
extern char *ft_leader_clock_check;	/* fasttime.leader_clock_check */
extern bool ft_publishing_facts;	/* fasttime is setting one of them */

extern FtTickConv ft_conv;		/* TSC conversion in use by the node wrappers */
extern bool ft_clock_fell_back;	/* this process gave the TSC up for good */

extern const FtClockFacts *ft_get_facts(void);
extern bool ft_facts_detected(void);
extern const FtDecision *ft_get_decision(FtClockSetting setting);
extern FtClockChoice ft_effective_choice(void);
extern void ft_publish_facts(void);
extern bool ft_adopt_leader_facts(const char *serialized);
extern void ft_clock_fall_back(const char *why);
extern const char *ft_clock_fallback_reason(void);
extern void ft_clock_disagreed(void);
extern bool ft_clock_backend_disagreed(void);
extern void ft_publish_clock_check(void);
extern void ft_adopt_leader_clock_check(const char *value);
extern char *ft_sentence(const char *text);

#endif							/* FASTTIME_CLOCK_STATE_H */
