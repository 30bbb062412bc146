/*-------------------------------------------------------------------------
 *
 * fault_injection.h
 *	  Test-only faults (builds with -DFASTTIME_FAULT_INJECTION): what the
 *	  rest of fasttime calls of fault_injection.c.  The fault readers of the
 *	  node clock are declared in ticks.h, the hooks into fact gathering in
 *	  clock_facts.h (registered by ft_fault_register).  Files in src/
 *	  include it only under #ifdef FASTTIME_FAULT_INJECTION, and only the
 *	  fault build (make FAULT_INJECTION=1) puts test/fault/ on the include
 *	  path.
 *
 * test/fault/fault_injection.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FASTTIME_FAULT_INJECTION_H
#define FASTTIME_FAULT_INJECTION_H

#ifdef FASTTIME_FAULT_INJECTION

#include <stdbool.h>
#include <stdint.h>

/* hook the fact faults into clock_detect.c; before the facts are gathered */
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
 * Ticks of profiled timing delivered where a signal could land but rarely
 * does (profiler.c calls its tick there as the timeout machinery would):
 *
 * fasttime.fault_tick_at_return = 'Node Type' ('': off): right after each
 * exact call of a plan node of that type (as EXPLAIN names it) has left
 * the chain, before its time is settled with the frames below it.
 *
 * fasttime.fault_switch_at_return = 'Node Type' ('': off): the switch to
 * profiled timing comes there, at the run's first such return: no tick
 * switches before it, and the tick delivered there (or, if that one must
 * wait, the next) does.
 *
 * fasttime.fault_lengthen_in_gate_open: a tick that asks for a longer
 * interval lands in ft_prof_gate_open, between its walk of the chain and
 * its opening of the gate, whenever the interval may still lengthen.
 */
extern char *ft_fault_tick_at_return;
extern char *ft_fault_switch_at_return;
extern bool ft_fault_lengthen_in_gate_open;

/*
 * fasttime.fault_switch_in_resume: the switch to profiled timing comes in
 * ft_prof_resume, after the tick that stopped itself in a wait is marked
 * resumed and before the resume re-arms the timeout: where a tick (the
 * backstop's) can land, whose switch asks for the profiled interval.
 */
extern bool ft_fault_switch_in_resume;

/*
 * fasttime.fault_worker_take_late: the backend passes over the tick
 * worker's tick at this many transitions before it takes one, as when
 * its check misses on the flags' line or the worker's store lands late:
 * a sample taken where the backend takes the tick goes to the nodes of
 * later transitions, one taken where the worker read the chain does not.
 */
extern int	ft_fault_worker_take_late;

/*
 * fasttime.fault_tick_at_abort: a tick in fasttime's transaction-abort
 * callback, before it resets the profiler -- where a tick lands after a
 * FATAL error (pg_terminate_backend) has deleted the executor memory of
 * the run under way -- with a LOG line of the runs the profiler still
 * holds there.
 */
extern bool ft_fault_tick_at_abort;

/*
 * fasttime.fault_nested_units: a query run inside a profiled run writes
 * its times in a unit half as long as the run's (its instr_time ticks
 * twice per nanosecond), as a query nested under a different
 * timing_clock_source does on PostgreSQL 19 with the server's TSC clock.
 */
extern bool ft_fault_nested_units;

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

/*
 * fasttime.fault_foreign_wrap = 'Node Type' ('': off): at ExecutorStart,
 * before fasttime puts the plan's nodes on its wrappers, each instrumented
 * node of that type (as EXPLAIN names it: Seq Scan, Index Scan, Sort,
 * Materialize) is put on a wrapper of "another extension" that does what
 * stock's ExecProcNodeInstr does, so fasttime leaves it alone: an
 * extension loaded before fasttime that wraps nodes.  Takes the query
 * (a QueryDesc); called where fasttime's ExecutorStart has run the rest.
 */
extern void ft_fault_wrap_foreign(void *queryDesc);

#endif							/* FASTTIME_FAULT_INJECTION */

#endif							/* FASTTIME_FAULT_INJECTION_H */
