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
/*
 * The rare case: an interval of a second or more.  Saturates at the
 * largest representable time.  Here rather than in a .c file so that this
 * header depends on nothing of fasttime's; out of line in each file that
 * uses it, and marked unused so that files that do not, do not warn.
 */
static pg_attribute_unused() pg_noinline void
ft_instr_time_add_ns_slow(instr_time *t, uint64 ns)
{
#if FT_INSTR_TIME_IS_TIMESPEC
	uint64		sec = ns / NS_PER_SEC_COMPAT;
	long		nsec = (long) (ns % NS_PER_SEC_COMPAT);

	if (sec > (uint64) (PG_INT64_MAX / 2) - (uint64) t->tv_sec)
	{
		t->tv_sec = PG_INT64_MAX / 2;
		t->tv_nsec = 0;
		return;
	}
	t->tv_sec += (time_t) sec;
	t->tv_nsec += nsec;
	if (t->tv_nsec >= NS_PER_SEC_COMPAT)
	{
		t->tv_nsec -= NS_PER_SEC_COMPAT;
		t->tv_sec++;
	}
#else
	if (ns > (uint64) (PG_INT64_MAX - t->ticks))
		t->ticks = PG_INT64_MAX;
	else
		t->ticks += (int64) ns;
#endif
}

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

/* Nanoseconds from start to end, two readings of the stock clock. */
static inline int64
ft_instr_time_diff_ns(instr_time end, instr_time start)
{
#if FT_INSTR_TIME_IS_TIMESPEC
	return (int64) (end.tv_sec - start.tv_sec) * NS_PER_SEC_COMPAT +
		(end.tv_nsec - start.tv_nsec);
#else
	return end.ticks - start.ticks;
#endif
}

/*
 * BufferUsage and WalUsage as arrays of 64-bit lanes.  The node wrappers
 * accumulate usage by subtracting the global counters from a node's totals
 * when a call starts and adding them back when it returns: lane by lane,
 * in two's complement, which gives exactly the sums stock PostgreSQL's
 * BufferUsageAccumDiff and WalUsageAccumDiff compute.  That needs every
 * field to be a 64-bit integer, or (up to 15) a struct timespec of two.
 */
#define FT_BUFUSAGE_LANES (sizeof(BufferUsage) / sizeof(int64))
#define FT_WALUSAGE_LANES (sizeof(WalUsage) / sizeof(int64))
StaticAssertDecl(sizeof(BufferUsage) % sizeof(int64) == 0 &&
				 sizeof(WalUsage) % sizeof(int64) == 0 &&
				 sizeof(time_t) == sizeof(int64) && sizeof(long) == sizeof(int64),
				 "usage counters must be made of 64-bit lanes");

/*
 * Up to 15 the I/O times inside BufferUsage are struct timespec, which
 * stock code keeps normalized (0 <= tv_nsec < 1e9) after every
 * accumulation.  After a lane-wise add, tv_nsec is within one second of
 * that range; one step each way restores the same normalized value stock
 * would hold.  From 16 on the times are plain nanosecond counts.
 */
#if FT_INSTR_TIME_IS_TIMESPEC
static inline void
ft_timespec_normalize(instr_time *t)
{
	if (unlikely((unsigned long) t->tv_nsec >= (unsigned long) NS_PER_SEC_COMPAT))
	{
		while (t->tv_nsec < 0)
		{
			t->tv_nsec += NS_PER_SEC_COMPAT;
			t->tv_sec--;
		}
		while (t->tv_nsec >= NS_PER_SEC_COMPAT)
		{
			t->tv_nsec -= NS_PER_SEC_COMPAT;
			t->tv_sec++;
		}
	}
}

static inline void
ft_bufusage_normalize(BufferUsage *bu)
{
	ft_timespec_normalize(&bu->blk_read_time);
	ft_timespec_normalize(&bu->blk_write_time);
	ft_timespec_normalize(&bu->temp_blk_read_time);
	ft_timespec_normalize(&bu->temp_blk_write_time);
}
#else
#define ft_bufusage_normalize(bu) ((void) 0)
#endif

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
