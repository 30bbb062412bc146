/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  Everything that differs between the PostgreSQL versions fasttime
 *	  builds against.  No other file tests PG_VERSION_NUM.
 *
 * BufferUsage and WalUsage change fields between versions, but the node
 * wrappers treat both as arrays of 64-bit lanes, never by field name.
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
 * Variables and functions the wrappers use at every call, declared
 * hidden: nothing outside fasttime's library uses them, so the compiler
 * addresses the variables directly and calls the functions without the
 * PLT, instead of through the GOT.  On PostgreSQL 15, whose modules are
 * built with default visibility, that is one load fewer at each access
 * and a register fewer in the profiled fast path (8 of its instructions);
 * later versions build modules hidden by default, but that option leaves
 * an extern declaration as it is, so it is marked here too.
 */
#if defined(__GNUC__) || defined(__clang__)
#define FT_HIDDEN __attribute__((visibility("hidden")))
#else
#define FT_HIDDEN
#endif

/*
 * A plan node's instrumentation, and the parts the node wrappers touch:
 * from 19 on in the NodeInstrumentation's embedded Instrumentation.
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
 * What the server's own instrumentation times with (19 on:
 * timing_clock_source); before 19 always clock_gettime.
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

/* The same as its variable holds it: a cheap key for the above. */
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

/* Nanoseconds per instr_time tick as the server converts them, or 0. */
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
#define ft_core_timing_clock_source() ((const char *) NULL)
#define ft_core_timing_clock_source_id() (-1)
#define ft_core_tsc_enabled() false
#define ft_core_tsc_frequency_khz() ((int32) 0)
#define ft_core_ns_per_tick() 0.0
#endif

/*
 * The units the node wrappers write instr_time in, for the query running
 * now (node_timing.c makes each query's current around its runs).
 *
 * tsc converts a difference of fasttime's TSC reads, ns a number of
 * nanoseconds, to instr_time ticks: a multiply and a shift each, so the
 * wrappers neither branch nor divide.  Up to 18 instr_time counts
 * nanoseconds (or a timespec): tsc is fasttime's conversion, ns unused.
 * On 19 with the server's TSC clock in effect it counts that very counter:
 * tsc is the identity and ns the inverse of the server's conversion;
 * otherwise tsc is fasttime's conversion and ns the identity.
 */
typedef struct FtInstrUnits
{
	FtTickConv	tsc;			/* fasttime's TSC ticks to instr_time ticks */
	FtTickConv	ns;				/* nanoseconds to instr_time ticks */
	bool		core_ticks;		/* instr_time counts the server's TSC ticks */
	double		core_ns_per_tick;	/* ... converted so by the server, or 0 */
} FtInstrUnits;

extern FT_HIDDEN FtInstrUnits ft_instr_units;

/* Do two queries write their nodes' times alike? */
static inline bool
ft_instr_units_same(const FtInstrUnits *a, const FtInstrUnits *b)
{
	return a->tsc.mult == b->tsc.mult && a->ns.mult == b->ns.mult &&
		a->core_ticks == b->core_ticks;
}

/*
 * The units for a query, given fasttime's TSC conversion (zeroed when the
 * TSC is not usable: then only ns is used).  At ExecutorStart, never per
 * call.
 */
static inline void
ft_instr_units_choose(FtInstrUnits *u, const FtTickConv *fasttime_tsc)
{
	double		ns_per_tick = ft_core_ns_per_tick();
	double		ticks_per_ns = ns_per_tick > 0 ? 1.0 / ns_per_tick : 1.0;

	u->core_ticks = ft_core_tsc_enabled() && ns_per_tick > 0;
	u->core_ns_per_tick = u->core_ticks ? ns_per_tick : 0.0;
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

/* from 16 on instr_time counts nanoseconds except on Windows (refused) */
#define NS_PER_SEC_COMPAT 1000000000L

/* instr_time: struct timespec up to 15, nanoseconds in .ticks from 16 */
#define FT_INSTR_TIME_IS_TIMESPEC (PG_VERSION_NUM < 160000)

#if PG_VERSION_NUM >= 160000 && defined(WIN32)
#error "fasttime does not support Windows"
#endif

/*
 * Adding to an instr_time accumulator.  Up to 15 it is a struct timespec,
 * kept normalized (0 <= tv_nsec < 1e9) as stock's macros keep it, since
 * nodes that time themselves add to the same counter.  A call shorter than
 * a second costs an add and a compare; a longer one takes this out-of-line
 * path, whose division is noise next to the second spent, and which
 * saturates rather than overflow on an absurd interval (a TSC that jumped
 * by centuries).  Marked unused for the files that do not use it.
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

/* Add a number in the unit of instr_time (nanoseconds up to 18). */
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

/*
 * Add a difference of two of fasttime's TSC reads, converted to the unit
 * of instr_time for the query running now (see FtInstrUnits).
 */
static inline void
ft_instr_time_add_ticks(instr_time *t, int64 delta)
{
	ft_instr_time_add_units(t, ft_ticks_to_ns(&ft_instr_units.tsc, delta));
}

/*
 * The clock of the clock_gettime timers (from 19 on the system clock, in
 * nanoseconds, whatever the server's clock), and the addition of an
 * interval between two readings in the unit of instr_time.
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

/*
 * BufferUsage and WalUsage as arrays of 64-bit lanes (usage.h), whose
 * two's complement differences are stock's field by field sums: every
 * field must be a 64-bit integer, or (up to 15) a struct timespec of two.
 */
#define FT_BUFUSAGE_LANES (sizeof(BufferUsage) / sizeof(int64))
#define FT_WALUSAGE_LANES (sizeof(WalUsage) / sizeof(int64))
StaticAssertDecl(sizeof(BufferUsage) % sizeof(int64) == 0 &&
				 sizeof(WalUsage) % sizeof(int64) == 0 &&
				 sizeof(time_t) == sizeof(int64) && sizeof(long) == sizeof(int64),
				 "usage counters must be made of 64-bit lanes");

/*
 * Up to 15 BufferUsage's I/O times are struct timespec, which stock keeps
 * normalized.  After a lane-wise add of a difference of two normalized
 * values, tv_nsec is within a second of range; the loops restore the
 * normalized form, which is unique, so the order of the adds is moot.
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

/* Record the current cycle's first-tuple time, as InstrStopNode does. */
static inline void
ft_instr_set_firsttuple(FtNodeInstr *instr)
{
#if PG_VERSION_NUM >= 190000
	instr->firsttuple = instr->counter;
#else
	instr->firsttuple = INSTR_TIME_GET_DOUBLE(instr->counter);
#endif
}

/* ExecutorRun hook signature: 18 dropped execute_once. */
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
 * The file and line a setting's value came from (pg_settings' sourcefile
 * and sourceline), or NULL; 15 has no find_option.
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

/* 18 lets extensions add EXPLAIN options (explain_option.c). */
#if PG_VERSION_NUM >= 180000
#define FT_HAVE_EXPLAIN_EXTENSIONS 1
#else
#define FT_HAVE_EXPLAIN_EXTENSIONS 0
#endif

/* 19 asks for a check of an EXPLAIN option's value (a boolean here). */
#if PG_VERSION_NUM >= 190000
#define FT_REGISTER_EXPLAIN_OPTION(name, handler) \
	RegisterExtensionExplainOption(name, handler, GUCCheckBooleanExplainOption)
#else
#define FT_REGISTER_EXPLAIN_OPTION(name, handler) \
	RegisterExtensionExplainOption(name, handler)
#endif

/*
 * Expression steps 18 split or added (usage_derive.c), as lists of case
 * labels.
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
 * instrumentation auto_explain allocates, read as auto_explain reads it;
 * false when there is none.  19 renamed it and keeps its total current.
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

/* this backend's PGPROC number (the tick worker's slot) */
#include "storage/proc.h"
#if PG_VERSION_NUM >= 170000
#define FT_MY_PROC_NUMBER() ((int) MyProcNumber)
#else
#define FT_MY_PROC_NUMBER() (MyProc->pgprocno)
#endif

#endif							/* FASTTIME_COMPAT_H */
