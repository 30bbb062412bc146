/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  Everything that differs between the PostgreSQL versions fasttime
 *	  builds against.  No other file tests PG_VERSION_NUM.
 *
 * What was compared, 15 against 17 and 18 (headers, and 18's executor
 * sources): struct Instrumentation is identical; InstrStartNode,
 * InstrStopNode (tuple count, first-tuple time, async_mode rule),
 * InstrEndLoop, ExecProcNodeFirst and ExecProcNodeInstr behave the same.
 * BufferUsage renamed its block I/O times in 17 and WalUsage gained
 * wal_buffers_full in 18, but the node wrapper accumulates both through
 * the server's own BufferUsageAccumDiff and WalUsageAccumDiff, so it
 * follows each version without help.  What does differ is below: the
 * representation of instr_time (16), planstate_tree_walker becoming a
 * macro with a typed callback (16; our walkers have the right signature
 * for both), the ExecutorRun hook signature (18) and the EXPLAIN extension
 * API (18).
 *
 * src/compat.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FASTTIME_COMPAT_H
#define FASTTIME_COMPAT_H

#include "postgres.h"

#include "executor/executor.h"
#include "executor/instrument.h"
#include "portability/instr_time.h"

#if PG_VERSION_NUM < 150000
#error "fasttime requires PostgreSQL 15 or later"
#endif

#if PG_VERSION_NUM >= 190000
#error "fasttime is not needed on PostgreSQL 19 and later: the server times plan nodes with the TSC itself; see its setting timing_clock_source"
#endif

/*
 * From 16 on, instr_time counts nanoseconds everywhere except on Windows,
 * where it counts QueryPerformanceCounter ticks; ft_instr_time_add_ns below
 * relies on nanoseconds.
 */
#define NS_PER_SEC_COMPAT 1000000000L

/* instr_time: struct timespec up to 15, nanoseconds in .ticks from 16 */
#define FT_INSTR_TIME_IS_TIMESPEC (PG_VERSION_NUM < 160000)

#if PG_VERSION_NUM >= 160000 && defined(WIN32)
#error "fasttime does not support Windows"
#endif

/*
 * Add a number of nanoseconds to an instr_time accumulator.
 *
 * Up to PostgreSQL 15, instr_time is a struct timespec, kept normalized
 * (0 <= tv_nsec < 1e9) by the stock macros; we keep it so, since the stock
 * INSTR_TIME_ACCUM_DIFF that Hash and BitmapIndexScan nodes still run on the
 * same counter normalizes with loops.  From 16 on it is a plain count of
 * nanoseconds.
 *
 * The common case, a node call shorter than a second, costs an add and a
 * compare.  A call of a second or more takes the out-of-line path, where a
 * division is noise next to the second already spent; it also saturates
 * rather than overflow on an absurd interval (a TSC that jumped by
 * centuries), which a loop or a plain add would not survive.
 */
extern void ft_instr_time_add_ns_slow(instr_time *t, uint64 ns);

static inline void
ft_instr_time_add_ns(instr_time *t, uint64 ns)
{
	if (unlikely(ns >= (uint64) NS_PER_SEC_COMPAT))
	{
		ft_instr_time_add_ns_slow(t, ns);
		return;
	}
#if FT_INSTR_TIME_IS_TIMESPEC
	t->tv_nsec += (long) ns;
	if (t->tv_nsec >= NS_PER_SEC_COMPAT)
	{
		t->tv_nsec -= NS_PER_SEC_COMPAT;
		t->tv_sec++;
	}
#else
	t->ticks += (int64) ns;
#endif
}

/* Set an instr_time accumulator to a number of nanoseconds. */
static inline void
ft_instr_time_set_ns(instr_time *t, uint64 ns)
{
#if FT_INSTR_TIME_IS_TIMESPEC
	t->tv_sec = (time_t) (ns / 1000000000);
	t->tv_nsec = (long) (ns % 1000000000);
#else
	t->ticks = (int64) ns;
#endif
}

/*
 * Record the time of the current cycle's first tuple, as stock
 * InstrStopNode does.
 */
static inline void
ft_instr_set_firsttuple(Instrumentation *instr)
{
	instr->firsttuple = INSTR_TIME_GET_DOUBLE(instr->counter);
}

/*
 * ExecutorRun hook signature: PostgreSQL 18 dropped execute_once.
 */
#if PG_VERSION_NUM < 180000
#define FT_EXECUTORRUN_ARGS \
	QueryDesc *queryDesc, ScanDirection direction, uint64 count, bool execute_once
#define FT_EXECUTORRUN_CALL(fn) fn(queryDesc, direction, count, execute_once)
#else
#define FT_EXECUTORRUN_ARGS \
	QueryDesc *queryDesc, ScanDirection direction, uint64 count
#define FT_EXECUTORRUN_CALL(fn) fn(queryDesc, direction, count)
#endif

/*
 * PostgreSQL 18 lets extensions add EXPLAIN options
 * (RegisterExtensionExplainOption, explain_per_plan_hook; see
 * contrib/pg_overexplain); fasttime uses that for EXPLAIN (ANALYZE,
 * CLOCK_SOURCE).  Earlier versions have no such API.
 */
#if PG_VERSION_NUM >= 180000
#define FT_HAVE_EXPLAIN_EXTENSIONS 1
#else
#define FT_HAVE_EXPLAIN_EXTENSIONS 0
#endif

#endif							/* FASTTIME_COMPAT_H */
