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

/* define the fasttime.fault_* settings (needs a server) */
extern void ft_fault_define_gucs(void);

/*
 * The node wrappers' clock reads in this process, by position: start
 * plain, start ordered, stop plain, stop ordered.
 */
extern uint64_t ft_fault_wrapper_reads[4];

#endif							/* FASTTIME_FAULT_INJECTION */

#endif							/* FASTTIME_FAULT_INJECTION_H */
