/*-------------------------------------------------------------------------
 *
 * fault_injection.h
 *	  Test-only faults (builds with -DFASTTIME_FAULT_INJECTION): what the
 *	  rest of fasttime calls of fault_injection.c.  The fault readers of the
 *	  node clock are declared in ticks.h, the hooks into fact gathering in
 *	  clock_facts.h (registered by ft_fault_register).
 *
 * src/fault_injection.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FASTTIME_FAULT_INJECTION_H
#define FASTTIME_FAULT_INJECTION_H

#ifdef FASTTIME_FAULT_INJECTION

#include <stdint.h>

/* hook the fact faults into clock_facts.c; before the facts are gathered */
extern void ft_fault_register(void);

/* _PG_init's first step: ft_fault_register, the fasttime.fault_* settings */
extern void ft_fault_init(void);

/*
 * The node wrappers' clock reads in this process, by position: start
 * plain, start ordered, stop plain, stop ordered.
 */
extern uint64_t ft_fault_wrapper_reads[4];

/*
 * The clock cross-check's stamps of queries in this process: pairs of
 * reads taken, and query starts that reused the last pair (node_timing.c).
 */
extern uint64_t ft_fault_stamps_taken;
extern uint64_t ft_fault_stamps_reused;

/* end-of-query comparisons left to the next one (node_timing.c) */
extern uint64_t ft_fault_checks_deferred;

/*
 * fasttime.fault_switch_in_link: profiled timing's switch comes, once a
 * run, between an exact-phase call's test of its frame's mode and the
 * link of its frame -- where a tick can land -- in the run's first exact
 * call, or in its first call that runs a child the executor times itself.
 */
#define FT_FAULT_SWITCH_NONE		0
#define FT_FAULT_SWITCH_FIRST_CALL	1
#define FT_FAULT_SWITCH_CORE_CALL	2
extern int	ft_fault_switch_in_link;

/*
 * fasttime.fault_fill_timeouts: before profiled timing registers its
 * tick's timeout, take every timeout slot left for extensions, so that
 * its registration finds none (profiler.c must then fall back to exact
 * timing, not end the session).  Called where that registration is made.
 */
extern void ft_fault_fill_timeouts(void (*handler) (void));

/*
 * fasttime.fault_fallback_after: the number of disagreements of the clocks
 * after which a backend gives the TSC up (node_timing.c), instead of the
 * built-in one; 0 keeps that.  Lets a test see many disagreements pass
 * through the rate limit of their LOG lines.
 */
extern int	ft_fault_fallback_after;

#endif							/* FASTTIME_FAULT_INJECTION */

#endif							/* FASTTIME_FAULT_INJECTION_H */
