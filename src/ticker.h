/*-------------------------------------------------------------------------
 *
 * ticker.h
 *	  The tick worker: ticks for profiled node timing without a signal in
 *	  the profiling backend.
 *
 * A timer signal costs the backend it interrupts its delivery and return
 * (20-50 us of CPU on a kvm-clock guest, a few points of a profiled
 * query).  Where fasttime is preloaded, one background worker instead
 * wakes at each backend's interval and writes the backend's tick flags
 * (FtTickFlags, in shared memory): the next call starting or returning in
 * the backend finds them as it finds a tick that stopped in a wait, and
 * credits the time since the last tick, in main code (profiler.c), to the
 * call the worker found on top of the backend's chain at the tick (the
 * backend keeps that top in its slot).  The sample is a signal's: the
 * call under way at the tick's instant, however many transitions later
 * the backend takes it (where the backend can vouch for that call's
 * frame; else the chain's top where it takes the tick).  A backend the worker finds waiting
 * (a wait event reported) is parked, no longer woken, until its next
 * transition unparks it.
 *
 * src/ticker.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FASTTIME_TICKER_H
#define FASTTIME_TICKER_H

#include <signal.h>

#include "compat.h"
#include "prof_frame.h"

/*
 * What every profiled call of a backend tests (profiler.h: the gate and
 * the suspension).  A backend's own until it first profiles; in its slot
 * of the worker's shared memory from then on, where the worker writes
 * them.  The worker sets suspended and shuts the gate in one 8-byte store
 * (ticker.c).
 */
typedef struct FtTickFlags
{
	volatile uint8 gate;		/* FT_FRAME_PROFILED: the fast path's gate */
	volatile sig_atomic_t suspended;	/* the next transition calls the
										 * profiler (ft_prof_resume) */
} FtTickFlags;

/* a call's frame on the backend's chain (usage.h), opaque here */
struct FtUsageFrame;

/*
 * _PG_init of a preloading postmaster: shared memory and the worker, if
 * the server starts with fasttime.tick_source = worker
 */
extern void ft_ticker_init(bool start_worker);

/* this backend's flags in its slot, if the worker can tick it (else NULL) */
extern FtTickFlags *ft_ticker_attach(void);

/*
 * Where this backend keeps its chain's top once it has a slot (NULL
 * before): the worker reads it at each tick.
 */
extern struct FtUsageFrame *volatile *ft_ticker_chain_top_at(void);

/*
 * The chain's top the worker found at its last tick of this backend: the
 * call under way at the tick's instant (NULL: none, or no slot).
 */
extern struct FtUsageFrame *ft_ticker_tick_top(void);

/* is the worker running now, to tick this backend's next run? */
extern bool ft_ticker_running(void);

/* tick this backend every ms from now (false: no worker) */
extern bool ft_ticker_start(int ms);
extern void ft_ticker_set_interval(int ms);
extern void ft_ticker_stop(void);

/* how long ago the worker's last tick of this backend was, ns */
extern int64 ft_ticker_tick_ago(void);

/*
 * Did the worker park this backend (finding it waiting, at its last
 * tick)?  If so, unpark it and wake the worker.
 */
extern bool ft_ticker_unpark(void);

/* is this backend parked (the signal handler may ask) */
extern bool ft_ticker_parked(void);

/* the ticks the worker made for this backend (fasttime_status) */
extern uint64 ft_ticker_ticks(void);

/* "running", "starting" or "not started" (fasttime_status) */
extern const char *ft_ticker_state(void);

/* was the worker registered at server start (it may be restarting)? */
extern bool ft_ticker_started(void);

extern PGDLLEXPORT void ft_ticker_main(Datum arg);

#endif							/* FASTTIME_TICKER_H */
