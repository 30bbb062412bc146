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
 * wal_buffers_full in 18 (and wal_fpi_bytes in 19), but the node wrappers
 * compare and credit both as arrays of 64-bit lanes, never by field name,
 * so they follow each version without help.  What does differ is below: the
 * representation of instr_time (16), planstate_tree_walker becoming a
 * macro with a typed callback (16; our walkers have the right signature
 * for both), the lookup of a setting by name (16), the ExecutorRun hook
 * signature (18) and the EXPLAIN extension API (18).
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

#if PG_VERSION_NUM >= 200000
#error "fasttime has not been ported to PostgreSQL 20 and later"
#endif

#include "ticks.h"

/*
 * A plan node's instrumentation, and the parts of it the node wrappers
 * touch.  Up to 18 everything is in one Instrumentation; from 19 on the
 * timer, buffer and WAL parts are in the NodeInstrumentation's embedded
 * Instrumentation.
 */
#if PG_VERSION_NUM >= 190000
typedef NodeInstrumentation FtNodeInstr;
#define FT_INSTR_BASE(ni)	(&(ni)->instr)
#else
typedef Instrumentation FtNodeInstr;
#define FT_INSTR_BASE(ni)	(ni)
#endif
#define FT_INSTR_NEED_BUFUSAGE(ni)	(FT_INSTR_BASE(ni)->need_bufusage)
#define FT_INSTR_NEED_WALUSAGE(ni)	(FT_INSTR_BASE(ni)->need_walusage)
#define FT_INSTR_BUFUSAGE(ni)		(&FT_INSTR_BASE(ni)->bufusage)
#define FT_INSTR_WALUSAGE(ni)		(&FT_INSTR_BASE(ni)->walusage)

/*
 * What the server's own instrumentation times with (19 on): the setting
 * timing_clock_source, and whether its TSC clock is in effect.  Before 19
 * the server always uses clock_gettime and has no such setting.
 */
#if PG_VERSION_NUM >= 190000
#include "utils/guc.h"

#define FT_HAVE_CORE_CLOCK_SOURCE 1

/* The server's setting timing_clock_source as SHOW gives it. */
static inline const char *
ft_core_timing_clock_source(void)
{
	const char *v = GetConfigOption("timing_clock_source", true, false);

	return v != NULL ? v : "unknown";
}

/*
 * The server's setting timing_clock_source as its variable holds it: a
 * cheap key for what ft_core_timing_clock_source() would say.
 */
static inline int
ft_core_timing_clock_source_id(void)
{
	return timing_clock_source;
}

static inline bool
ft_core_tsc_enabled(void)
{
#if PG_INSTR_TSC_CLOCK
	return timing_tsc_enabled;
#else
	return false;
#endif
}

/* The server's TSC frequency in kHz: -1 not initialized, 0 unusable. */
static inline int32
ft_core_tsc_frequency_khz(void)
{
	return timing_tsc_frequency_khz;
}

/*
 * Nanoseconds per instr_time tick as the server converts them, 0 when
 * instr_time counts nanoseconds.
 */
static inline double
ft_core_ns_per_tick(void)
{
#if PG_INSTR_TICKS_TO_NS
	return ticks_per_ns_scaled == 0 ? 0.0 :
		(double) ticks_per_ns_scaled / (double) (1 << TICKS_TO_NS_SHIFT);
#else
	return 0.0;
#endif
}
#else
#define FT_HAVE_CORE_CLOCK_SOURCE 0
static inline const char *
ft_core_timing_clock_source(void)
{
	return NULL;
}

static inline int
ft_core_timing_clock_source_id(void)
{
	return -1;
}

static inline bool
ft_core_tsc_enabled(void)
{
	return false;
}

static inline int32
ft_core_tsc_frequency_khz(void)
{
	return 0;
}

static inline double
ft_core_ns_per_tick(void)
{
	return 0.0;
}
#endif

/*
 * The units the node wrappers write instr_time in, for the query running
 * now (node_timing.c sets them at ExecutorStart and makes each query's
 * current around its run and finish, so that one plan never mixes units).
 *
 * tsc converts a difference of fasttime's TSC reads, ns a number of
 * nanoseconds (a clock_gettime interval, as profiled timing with the stock
 * clock credits it), to instr_time ticks; both are a multiply and a shift,
 * decided once per query, so the wrappers neither branch nor divide.  Up
 * to 18 instr_time counts nanoseconds (or a timespec, which
 * ft_instr_time_add_ns handles): tsc is fasttime's own conversion and ns
 * is not used.  On 19, when the
 * server's TSC clock is in effect, instr_time counts TSC ticks, the very
 * counter fasttime reads: tsc is the identity (raw tick differences, which
 * the server converts with its own frequency, as for its own nodes) and ns
 * the inverse of the server's ticks_per_ns_scaled.  Otherwise instr_time
 * counts nanoseconds: tsc is fasttime's conversion and ns the identity.
 */
typedef struct FtInstrUnits
{
	FtTickConv	tsc;			/* fasttime's TSC ticks to instr_time ticks */
	FtTickConv	ns;				/* nanoseconds to instr_time ticks */
	bool		core_ticks;		/* instr_time counts the server's TSC ticks */
} FtInstrUnits;

extern FtInstrUnits ft_instr_units;

/* Do two queries write their nodes' times alike? */
static inline bool
ft_instr_units_same(const FtInstrUnits *a, const FtInstrUnits *b)
{
	return a->tsc.mult == b->tsc.mult && a->ns.mult == b->ns.mult &&
		a->core_ticks == b->core_ticks;
}

/*
 * The units for a query whose nodes fasttime times, given fasttime's own
 * TSC conversion (zeroed when the TSC is not usable; then only the ns
 * conversion may be used, and on 19 with the server's TSC clock in effect
 * that one is still right).  Done at ExecutorStart, never per call.
 */
static inline void
ft_instr_units_choose(FtInstrUnits *u, const FtTickConv *fasttime_tsc)
{
	double		ns_per_tick = ft_core_ns_per_tick();
	double		ticks_per_ns = ns_per_tick > 0 ? 1.0 / ns_per_tick : 1.0;

	u->core_ticks = ft_core_tsc_enabled() && ns_per_tick > 0;
	ft_conv_init(&u->ns, 1e9);	/* the identity: 2^FT_CONV_SHIFT */
	u->ns.mult = (uint64) (4294967296.0 * ticks_per_ns + 0.5);
	if (u->core_ticks)
		ft_conv_init(&u->tsc, 1e9);
	else
	{
		u->tsc = *fasttime_tsc;
		u->tsc.mult = (uint64) ((double) fasttime_tsc->mult * ticks_per_ns + 0.5);
	}
}

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
pg_attribute_unused() static pg_noinline void
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

/*
 * Add a number of instr_time ticks (already in the unit of instr_time:
 * nanoseconds up to 18) to an accumulator.
 */
static inline void
ft_instr_time_add_units(instr_time *t, uint64 units)
{
	if (unlikely(units >= (uint64) NS_PER_SEC_COMPAT))
	{
		ft_instr_time_add_ns_slow(t, units);
		return;
	}
#if FT_INSTR_TIME_IS_TIMESPEC
	t->tv_nsec += (long) units;
	if (t->tv_nsec >= NS_PER_SEC_COMPAT)
	{
		t->tv_nsec -= NS_PER_SEC_COMPAT;
		t->tv_sec++;
	}
#else
	t->ticks += (int64) units;
#endif
}

static inline void
ft_instr_time_add_ns(instr_time *t, uint64 ns)
{
#if PG_VERSION_NUM >= 190000
	ft_instr_time_add_units(t, ft_ticks_to_ns(&ft_instr_units.ns,
											  (int64) Min(ns, (uint64) PG_INT64_MAX)));
#else
	ft_instr_time_add_units(t, ns);
#endif
}

/*
 * Add a difference of two of fasttime's TSC reads, converted to the unit
 * of instr_time for the query running now (see FtInstrUnits).
 */
static inline void
ft_instr_time_add_ticks(instr_time *t, int64 delta)
{
	ft_instr_time_add_units(t, ft_ticks_to_ns(&ft_instr_units.tsc, delta));
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
 * The stock clock of the clock_gettime timers: up to 18 the server's own
 * clock (clock_gettime, in instr_time); from 19 on the system clock in
 * nanoseconds, which is the server's clock only when its TSC clock is not
 * in effect.  ft_instr_time_accum_clock adds the interval between two
 * readings in the unit of instr_time.
 */
#if PG_VERSION_NUM >= 190000
#define FT_INSTR_CLOCK_NOW(t)	((t) = pg_get_ticks_system())
#else
#define FT_INSTR_CLOCK_NOW(t)	INSTR_TIME_SET_CURRENT(t)
#endif

static inline void
ft_instr_time_accum_clock(instr_time *acc, instr_time end, instr_time start)
{
#if PG_VERSION_NUM >= 190000
	acc->ticks += (int64) ft_ticks_to_ns(&ft_instr_units.ns, end.ticks - start.ticks);
#else
	INSTR_TIME_ACCUM_DIFF(*acc, end, start);
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
 * compare the global counters with their values at the previous
 * transition lane by lane, and credit the difference to the calls under
 * way lane by lane, in two's complement (usage.h, usage.c), which gives
 * exactly the sums stock PostgreSQL's BufferUsageAccumDiff and
 * WalUsageAccumDiff compute.  That needs every field to be a 64-bit
 * integer, or (up to 15) a struct timespec of two.
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
 * accumulation.  After a lane-wise add of a difference of two normalized
 * values, tv_nsec is within one second of that range; one step each way
 * restores the same normalized value stock would hold (the normalized
 * form of a number of nanoseconds is unique, so the order of the adds does
 * not matter).  From 16 on the times are plain nanosecond counts.
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
 * InstrStopNode does: seconds in a double up to 18, the counter itself
 * from 19 on.
 */
static inline void
ft_instr_set_firsttuple(FtNodeInstr *instr)
{
#if PG_VERSION_NUM >= 190000
	instr->firsttuple = instr->counter;
#else
	instr->firsttuple = INSTR_TIME_GET_DOUBLE(instr->counter);
#endif
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
 * The file and line a setting's value came from, as PostgreSQL recorded
 * them when it read the configuration files (pg_settings' sourcefile and
 * sourceline), or NULL.  16 finds a setting by name (find_option); 15
 * exports only the array of every setting.
 */
#include "utils/guc_tables.h"

static inline const char *
ft_guc_sourcefile(const char *name, int *sourceline)
{
	struct config_generic *record = NULL;

#if PG_VERSION_NUM >= 160000
	record = find_option(name, false, true, DEBUG1);
#else
	struct config_generic **vars = get_guc_variables();

	for (int i = 0; i < GetNumConfigOptions() && record == NULL; i++)
		if (pg_strcasecmp(vars[i]->name, name) == 0)
			record = vars[i];
#endif
	if (record == NULL || record->sourcefile == NULL)
		return NULL;
	*sourceline = record->sourceline;
	return record->sourcefile;
}

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

/*
 * 19 lets EXPLAIN options be given defaults through a setting and asks
 * for a check of their values there; CLOCK_SOURCE is a boolean.
 */
#if PG_VERSION_NUM >= 190000
#define FT_REGISTER_EXPLAIN_OPTION(name, handler) \
	RegisterExtensionExplainOption(name, handler, GUCCheckBooleanExplainOption)
#else
#define FT_REGISTER_EXPLAIN_OPTION(name, handler) \
	RegisterExtensionExplainOption(name, handler)
#endif

/*
 * Expression steps whose names changed (usage_derive.c reads a node's
 * compiled expressions): 18 split EEOP_DONE in two and added one- and
 * two-argument strict function calls and a one-argument strict input
 * check for aggregates.  Each macro is a list of case labels.
 */
#if PG_VERSION_NUM >= 180000
#define FT_CASE_EEOP_DONE \
	case EEOP_DONE_RETURN: \
	case EEOP_DONE_NO_RETURN:
#define FT_CASE_EEOP_FUNCEXPR_STRICT_N \
	case EEOP_FUNCEXPR_STRICT_1: \
	case EEOP_FUNCEXPR_STRICT_2:
#define FT_CASE_EEOP_AGG_STRICT_INPUT_CHECK_N \
	case EEOP_AGG_STRICT_INPUT_CHECK_ARGS_1:
#else
#define FT_CASE_EEOP_DONE \
	case EEOP_DONE:
#define FT_CASE_EEOP_FUNCEXPR_STRICT_N
#define FT_CASE_EEOP_AGG_STRICT_INPUT_CHECK_N
#endif


/*
 * The query's elapsed time so far in ms, by the query-level
 * instrumentation auto_explain and pg_stat_statements allocate, read as
 * auto_explain reads it (before or after its ExecutorEnd ended the loop);
 * false when the query has none.  19 renamed it (query_instr) and keeps
 * its total current at every stop.
 */
static inline bool
ft_query_elapsed_ms(const QueryDesc *qd, double *ms)
{
#if PG_VERSION_NUM >= 190000
	if (qd->query_instr == NULL)
		return false;
	*ms = INSTR_TIME_GET_MILLISEC(qd->query_instr->total);
#else
	if (qd->totaltime == NULL)
		return false;
	*ms = 1000.0 * (INSTR_TIME_GET_DOUBLE(qd->totaltime->counter) +
					qd->totaltime->total);
#endif
	return true;
}

#endif							/* FASTTIME_COMPAT_H */
