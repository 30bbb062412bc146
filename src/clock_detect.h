/*-------------------------------------------------------------------------
 *
 * clock_detect.h
 *	  Detecting this machine's clocks (clock_detect.c).
 *
 * src/clock_detect.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FASTTIME_CLOCK_DETECT_H
#define FASTTIME_CLOCK_DETECT_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "clock_facts.h"

/* Gather every fact about this machine (slow: CPUID, calibration). */
extern void ft_detect_clock_facts(FtClockFacts *facts);

/* Read the kernel's current and available clocksources; cheap. */
extern bool ft_read_kernel_clocksource(char *current, size_t curlen,
									   char *available, size_t availlen);

#ifdef FASTTIME_FAULT_INJECTION
/* replace the clock calibration reads (NULL: clock_gettime again) */
extern void ft_set_raw_clock(int (*fn) (clockid_t, struct timespec *));
#endif

#endif							/* FASTTIME_CLOCK_DETECT_H */
