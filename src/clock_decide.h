/*-------------------------------------------------------------------------
 *
 * clock_decide.h
 *	  Which clock to time plan nodes with: a pure function of the machine's
 *	  facts and the user's setting.
 *
 * src/clock_decide.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FASTTIME_CLOCK_DECIDE_H
#define FASTTIME_CLOCK_DECIDE_H

#include "clock_facts.h"

/* Values of fasttime.clock_source. */
typedef enum FtClockSetting
{
	FT_SETTING_AUTO = 0,
	FT_SETTING_TSC,
	FT_SETTING_TRY_TSC,
	FT_SETTING_CLOCK_GETTIME
} FtClockSetting;

/* What is actually used. */
typedef enum FtClockChoice
{
	FT_CHOICE_CLOCK_GETTIME = 0,
	FT_CHOICE_TSC
} FtClockChoice;

/*
 * A TSC read must cost at most this fraction of a clock_gettime() read for
 * auto to consider it "clearly cheaper".
 */
#define FT_AUTO_MAX_COST_RATIO 0.75

typedef struct FtDecision
{
	FtClockChoice choice;
	bool		refused;		/* setting cannot be honoured (tsc, unusable) */
	char		reason[640];	/* for humans: why this choice */
} FtDecision;

extern const char *ft_counter_name(const FtClockFacts *facts);
extern const char *ft_counter_clocksource(const FtClockFacts *facts);
extern bool ft_tsc_usable(const FtClockFacts *facts, char *why, size_t whylen);
extern void ft_decide(const FtClockFacts *facts, FtClockSetting setting,
					  FtDecision *out);
extern const char *ft_setting_name(FtClockSetting setting);
extern const char *ft_choice_name(FtClockChoice choice);

#endif							/* FASTTIME_CLOCK_DECIDE_H */
