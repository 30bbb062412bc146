/*-------------------------------------------------------------------------
 *
 * sql_functions.c
 *	  SQL-callable functions: pg_test_timing's loop run inside the server
 *	  (where users of managed PostgreSQL cannot run pg_test_timing) for
 *	  every clock source, and what fasttime decided and why.
 *
 *	fasttime_histogram	log2 histogram of the deltas, lowest bucket first
 *	fasttime_overhead	cost per read and a verdict; or a profiled tick's
 *	fasttime_status		the cached facts and decisions (measures nothing)
 *	fasttime_drift		TSC against clock_gettime over one interval
 *
 * The measuring functions burn a CPU on purpose (pg_monitor only).  Every
 * clock read goes through ticks.h, as the node wrappers' do.
 *
 * src/sql_functions.c
 *
 *-------------------------------------------------------------------------
 */
#include "compat.h"

#include <math.h>

#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "port/pg_bitutils.h"
#include "storage/latch.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/tuplestore.h"
#include "utils/wait_event.h"

#ifdef FASTTIME_FAULT_INJECTION
#include "fault_injection.h"	/* test/fault/, fault builds only */
#endif
#include "node_timing.h"
#include "profiler.h"
#include "ticker.h"

PG_FUNCTION_INFO_V1(fasttime_histogram);
PG_FUNCTION_INFO_V1(fasttime_overhead);
PG_FUNCTION_INFO_V1(fasttime_status);
PG_FUNCTION_INFO_V1(fasttime_drift);

/* longest measurement one call may ask for, per source, in seconds */
#define FT_MAX_DURATION_S	60.0

/* shortest: below 10 ms the results are noise presented as measurements */
#define FT_MIN_DURATION_S	0.01

/*
 * Deltas below FT_EXACT_NS ns are counted per ns, so the quantiles of any
 * reasonable clock are exact; larger ones by log2 bucket (a power of two,
 * so that no bucket straddles it).
 */
#define FT_EXACT_NS			2048

/*
 * log2 buckets: bucket 0 holds 0 ns, bucket b >= 1 [2^(b-1), 2^b) ns; the
 * last also takes anything larger, keeping every bound within a bigint.
 */
#define FT_LOG2_BUCKETS		63

/* check for cancel every this many reads (a power of two) */
#define FT_INTERRUPT_EVERY	1024

/* width of the histogram's bar column at 100 % */
#define FT_BAR_WIDTH		50

/* the guideline from the pg_test_timing discussion, ns per read */
#define FT_FINE_NS_PER_READ		50.0
#define FT_BAD_NS_PER_READ		500.0

/*
 * fasttime_overhead's source for a profiled tick's cost (not a clock), and
 * the shares of a profiled run's CPU time under which the ticks are fine,
 * and over which bad.
 */
#define FT_TICK_SOURCE			"profile_tick"
#define FT_FINE_TICK_SHARE		0.02
#define FT_BAD_TICK_SHARE		0.10

/* Clock sources, as named in the functions' source argument. */
typedef enum FtSource
{
	FT_SRC_CLOCK_GETTIME = 0,
	FT_SRC_TSC,
	FT_SRC_TSC_ORDERED,
	FT_NUM_SOURCES
} FtSource;

static const char *const ft_source_names[FT_NUM_SOURCES] = {
	"clock_gettime", "tsc", "tsc_ordered"
};

/*
 * The instructions behind the sources: tsc_ordered is RDTSCP, or
 * LFENCE;RDTSC on CPUs without RDTSCP.
 */
typedef enum FtReader
{
	FT_READ_CLOCK_GETTIME,
	FT_READ_TSC,
	FT_READ_RDTSCP,
	FT_READ_LFENCE
} FtReader;

/* What one run of the timing loop over one source saw. */
typedef struct FtTimingRun
{
	uint64		loops;			/* deltas recorded */
	uint64		elapsed_ns;		/* from the first read to the last */
	uint64		min_ns;
	uint64		max_ns;
	uint64		exact[FT_EXACT_NS]; /* count of deltas of exactly i ns */
	uint64		coarse[FT_LOG2_BUCKETS];	/* larger deltas, by log2 bucket */
} FtTimingRun;

/* The log2 bucket of a delta in ns; see FT_LOG2_BUCKETS. */
static inline int
ft_log2_bucket(uint64 ns)
{
	int			b;

	if (ns == 0)
		return 0;
	b = pg_leftmost_one_pos64(ns) + 1;
	return Min(b, FT_LOG2_BUCKETS - 1);
}

/* Bounds of log2 bucket b: [lower, upper) ns. */
static inline uint64
ft_bucket_lower(int b)
{
	return b == 0 ? 0 : UINT64CONST(1) << (b - 1);
}

static inline uint64
ft_bucket_upper(int b)
{
	return UINT64CONST(1) << b;
}

/*
 * One read of a clock, as an unsigned count (ns for clock_gettime, ticks
 * for the TSC).  Always inlined with a constant reader, so the switch
 * disappears from the loops below.
 */
static pg_attribute_always_inline uint64
ft_reader_read(FtReader reader)
{
	switch (reader)
	{
		case FT_READ_CLOCK_GETTIME:
			return (uint64) ft_read_clock_gettime_ns();
		case FT_READ_TSC:
			return ft_read_tsc();
		case FT_READ_RDTSCP:
			return ft_read_tsc_rdtscp();
		case FT_READ_LFENCE:
			return ft_read_tsc_lfence();
	}
	return 0;
}

/*
 * Nanoseconds between two reads of a clock.  A TSC delta is converted with
 * the conversion plan nodes are timed with; a negative one (TSCs of two
 * CPUs a few ns apart) counts as 0.
 */
static pg_attribute_always_inline uint64
ft_reader_ns(FtReader reader, uint64 from, uint64 to)
{
	int64		delta = (int64) (to - from);

	if (reader == FT_READ_CLOCK_GETTIME)
		return delta > 0 ? (uint64) delta : 0;
	return ft_ticks_to_ns(&ft_conv, delta);
}

/*
 * pg_test_timing's loop: read the clock and record the distance from the
 * previous read until the clock says the time is up.  The bookkeeping is
 * a few instructions, so what is measured is almost entirely the read.
 * Generated once per reader by ft_run_source.
 */
static pg_attribute_always_inline void
ft_timing_loop(FtReader reader, uint64 limit, FtTimingRun *run)
{
	uint64		start,
				prev,
				cur;
	uint64		loops = 0,
				min_ns = PG_UINT64_MAX,
				max_ns = 0;

	start = prev = ft_reader_read(reader);
	do
	{
		uint64		ns;

		cur = ft_reader_read(reader);
		ns = ft_reader_ns(reader, prev, cur);
		prev = cur;

		if (likely(ns < FT_EXACT_NS))
			run->exact[ns]++;
		else
			run->coarse[ft_log2_bucket(ns)]++;
		if (ns < min_ns)
			min_ns = ns;
		if (ns > max_ns)
			max_ns = ns;

		if (unlikely((++loops & (FT_INTERRUPT_EVERY - 1)) == 0))
			CHECK_FOR_INTERRUPTS();
	} while ((int64) (cur - start) < (int64) limit);

	run->loops = loops;
	run->elapsed_ns = ft_reader_ns(reader, start, cur);
	run->min_ns = min_ns;
	run->max_ns = max_ns;
}

/* Measure one source for duration seconds (palloc'd: a cancel frees it). */
static FtTimingRun *
ft_run_source(FtSource source, double duration)
{
	FtTimingRun *run = palloc0(sizeof(FtTimingRun));
	const FtClockFacts *facts = ft_get_facts();
	uint64		limit_ns = (uint64) (duration * 1e9);
	uint64		limit_ticks = (uint64) (duration * ft_conv.hz);

	switch (source)
	{
		case FT_SRC_CLOCK_GETTIME:
			ft_timing_loop(FT_READ_CLOCK_GETTIME, limit_ns, run);
			break;
		case FT_SRC_TSC:
			ft_timing_loop(FT_READ_TSC, limit_ticks, run);
			break;
		case FT_SRC_TSC_ORDERED:
			if (facts->rdtscp)
				ft_timing_loop(FT_READ_RDTSCP, limit_ticks, run);
			else
				ft_timing_loop(FT_READ_LFENCE, limit_ticks, run);
			break;
		case FT_NUM_SOURCES:
			Assert(false);
			break;
	}
	return run;
}

/*
 * Check a duration argument.  NULL gives no rows, like a strict function
 * (the functions are not STRICT: a NULL source means every source).
 */
static bool
ft_get_duration(FunctionCallInfo fcinfo, int argno, double *duration)
{
	double		d;

	if (PG_ARGISNULL(argno))
		return false;
	d = PG_GETARG_FLOAT8(argno);
	if (isnan(d) || !(d >= FT_MIN_DURATION_S && d <= FT_MAX_DURATION_S))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("duration must be between %g and %.0f seconds",
						FT_MIN_DURATION_S, FT_MAX_DURATION_S),
				 errdetail("The duration given was %s.", float8out_internal(d)),
				 (d > 0 && d < FT_MIN_DURATION_S) ?
				 errhint("Shorter measurements see too few clock reads to mean anything; the duration is in seconds per clock source, and 1 to 3 seconds is usually enough.") :
				 errhint("The duration is in seconds per clock source; 1 to 3 seconds is usually enough.")));
	*duration = d;
	return true;
}

/*
 * Which sources to measure, into sources[]: the named one, which must be
 * usable here, or with NULL every usable one (the TSC even where auto does
 * not choose it: the point is to compare).  Returns how many.  tick_too:
 * the caller also takes 'profile_tick' (fasttime_overhead), which the
 * error for an unknown name then lists.
 */
static int
ft_get_sources(FunctionCallInfo fcinfo, int argno, FtSource *sources,
			   bool tick_too)
{
	char		why[256];
	char	   *name;
	int			n = 0;

	if (PG_ARGISNULL(argno))
	{
		sources[n++] = FT_SRC_CLOCK_GETTIME;
		if (ft_tsc_usable(ft_get_facts(), why, sizeof(why)))
		{
			sources[n++] = FT_SRC_TSC;
			sources[n++] = FT_SRC_TSC_ORDERED;
		}
		return n;
	}

	name = text_to_cstring(PG_GETARG_TEXT_PP(argno));
	for (int i = 0; i < FT_NUM_SOURCES; i++)
	{
		if (pg_strcasecmp(name, ft_source_names[i]) != 0)
			continue;
		if (i != FT_SRC_CLOCK_GETTIME && !ft_tsc_usable(ft_get_facts(), why, sizeof(why)))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("clock source \"%s\" is not usable on this machine",
							ft_source_names[i]),
					 errdetail("The %s is not usable: %s.",
							   ft_counter_name(ft_get_facts()), why),
					 errhint("Measure \"clock_gettime\" instead, or pass NULL to measure every usable source; fasttime_status() shows the facts behind this.")));
		sources[n++] = (FtSource) i;
		return n;
	}
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown clock source \"%s\"", name),
			 tick_too ?
			 errdetail("Valid sources are \"clock_gettime\", \"tsc\", \"tsc_ordered\" and \"profile_tick\".") :
			 errdetail("Valid sources are \"clock_gettime\", \"tsc\" and \"tsc_ordered\"."),
			 errhint("Pass NULL to measure every source usable on this machine.")));
	return 0;					/* keep compiler quiet */
}

/* Count of deltas in log2 bucket b, exact counts folded in. */
static uint64
ft_bucket_count(const FtTimingRun *run, int b)
{
	uint64		lo = ft_bucket_lower(b),
				hi = ft_bucket_upper(b),
				sum = 0;

	if (lo >= FT_EXACT_NS)
		return run->coarse[b];
	for (uint64 ns = lo; ns < hi; ns++)
		sum += run->exact[ns];
	return sum;
}

/*
 * The smallest delta with at least fraction q of all deltas at or below
 * it: exact below FT_EXACT_NS, above an upper bound less than twice too
 * big (the bucket's top, capped at the largest delta seen).
 */
static uint64
ft_quantile(const FtTimingRun *run, double q)
{
	uint64		rank = (uint64) ceil(q * (double) run->loops);
	uint64		seen = 0;

	if (rank == 0)
		rank = 1;
	for (uint64 ns = 0; ns < FT_EXACT_NS; ns++)
	{
		seen += run->exact[ns];
		if (seen >= rank)
			return ns;
	}
	for (int b = ft_log2_bucket(FT_EXACT_NS); b < FT_LOG2_BUCKETS; b++)
	{
		seen += run->coarse[b];
		if (seen >= rank)
			return Min(ft_bucket_upper(b) - 1, run->max_ns);
	}
	return run->max_ns;
}

/* A text bar: FT_BAR_WIDTH '#' at 100 %, '.' for rare outliers. */
static char *
ft_bar(uint64 count, double percent)
{
	int			width = (int) rint(percent * FT_BAR_WIDTH / 100.0);
	char	   *bar = palloc(FT_BAR_WIDTH + 2);

	if (width == 0 && count > 0)
		return strcpy(bar, ".");
	memset(bar, '#', width);
	bar[width] = '\0';
	return bar;
}

/* Rows for one measured source; see ft_measure_sources. */
typedef void (*FtEmitRows) (ReturnSetInfo *rsinfo, FtSource source,
							const FtTimingRun *run);

/*
 * The body of fasttime_histogram and fasttime_overhead: check every
 * argument before measuring anything, then measure each source in turn
 * and let emit turn each run into rows.
 */
static void
ft_measure_sources(FunctionCallInfo fcinfo, FtEmitRows emit, bool tick_too)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	FtSource	sources[FT_NUM_SOURCES];
	double		duration;
	int			nsources;

	InitMaterializedSRF(fcinfo, 0);
	if (!ft_get_duration(fcinfo, 0, &duration))
		return;
	nsources = ft_get_sources(fcinfo, 1, sources, tick_too);

	for (int i = 0; i < nsources; i++)
	{
		FtTimingRun *run = ft_run_source(sources[i], duration);

		emit(rsinfo, sources[i], run);
		pfree(run);
	}
}

/*
 * fasttime_histogram's rows for one source: every bucket from 0 to the
 * largest non-empty one, so that sources line up row by row.
 * cumulative_percent is computed from counts, so it ends at exactly 100.
 */
static void
ft_histogram_rows(ReturnSetInfo *rsinfo, FtSource source,
				  const FtTimingRun *run)
{
	int			last = ft_log2_bucket(run->max_ns);
	uint64		cumulative = 0;

	for (int b = 0; b <= last; b++)
	{
		uint64		count = ft_bucket_count(run, b);
		double		percent = (double) count * 100.0 / (double) run->loops;
		Datum		values[7];
		bool		nulls[7] = {0};

		cumulative += count;
		values[0] = CStringGetTextDatum(ft_source_names[source]);
		values[1] = Int64GetDatum((int64) ft_bucket_lower(b));
		values[2] = Int64GetDatum((int64) ft_bucket_upper(b));
		values[3] = Int64GetDatum((int64) count);
		values[4] = Float8GetDatum(percent);
		values[5] = Float8GetDatum((double) cumulative * 100.0 /
								   (double) run->loops);
		values[6] = CStringGetTextDatum(ft_bar(count, percent));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc,
							 values, nulls);
	}
}

/* fasttime_histogram(duration, source): pg_test_timing's histogram. */
Datum
fasttime_histogram(PG_FUNCTION_ARGS)
{
	ft_measure_sources(fcinfo, ft_histogram_rows, false);
	PG_RETURN_VOID();
}

/*
 * The verdict on a clock, by the pg_test_timing discussion's guideline.  A
 * clock whose reads mostly return the same time cannot time anything short.
 */
static char *
ft_verdict(double ns_per_loop, uint64 median_ns)
{
	if (median_ns == 0)
		return pstrdup("bad: most consecutive reads returned the same time, so this clock cannot measure short steps; per-node times would be mostly zero");
	if (ns_per_loop < FT_FINE_NS_PER_READ)
		return psprintf("fine: at %.0f ns a read, timing every plan node (EXPLAIN ANALYZE, auto_explain.log_timing) adds little overhead",
						ns_per_loop);
	if (ns_per_loop <= FT_BAD_NS_PER_READ)
		return psprintf("caution: at %.0f ns a read, EXPLAIN ANALYZE of queries that push many rows through many nodes runs noticeably slower and overstates the cheapest nodes; the timings are still usable",
						ns_per_loop);
	return psprintf("bad: at %.0f ns a read, per-node timing will distort EXPLAIN ANALYZE results; use EXPLAIN (ANALYZE, TIMING OFF) or auto_explain.log_timing = off, or profiled timing (fasttime.node_timing = profile)",
					ns_per_loop);
}

/*
 * fasttime_overhead's row for one source: the cost per loop (as
 * pg_test_timing reports it), the deltas' distribution (ft_quantile) and a
 * verdict in plain words.
 */
static void
ft_overhead_row(ReturnSetInfo *rsinfo, FtSource source,
				const FtTimingRun *run)
{
	double		ns_per_loop = (double) run->elapsed_ns / (double) run->loops;
	uint64		median_ns = ft_quantile(run, 0.5);
	Datum		values[8];
	bool		nulls[8] = {0};

	values[0] = CStringGetTextDatum(ft_source_names[source]);
	values[1] = Int64GetDatum((int64) run->loops);
	values[2] = Float8GetDatum(ns_per_loop);
	values[3] = Int64GetDatum((int64) run->min_ns);
	values[4] = Int64GetDatum((int64) median_ns);
	values[5] = Int64GetDatum((int64) ft_quantile(run, 0.99));
	values[6] = Int64GetDatum((int64) run->max_ns);
	values[7] = CStringGetTextDatum(ft_verdict(ns_per_loop, median_ns));
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/* The verdict on profiled ticks: their share of a profiled run's CPU time. */
static char *
ft_tick_verdict(double cost_ns)
{
	double		share = cost_ns / (ft_profile_interval_ms * 1e6);
	const char *grade = share < FT_FINE_TICK_SHARE ? "fine" :
		share <= FT_BAD_TICK_SHARE ? "caution" : "bad";
	const char *advice = share < FT_FINE_TICK_SHARE ? "" :
		"; a longer fasttime.profile_interval takes fewer ticks";

	if (ft_profile_interval_max_ms > ft_profile_interval_ms)
		return psprintf("%s: a tick of profiled timing costs %.0f ns of CPU time, %.1f %% of a profiled run at fasttime.profile_interval = %d ms (less once the ticks lengthen toward fasttime.profile_interval_max = %d ms)%s",
						grade, cost_ns, 100.0 * share,
						ft_profile_interval_ms, ft_profile_interval_max_ms,
						advice);
	return psprintf("%s: a tick of profiled timing costs %.0f ns of CPU time, %.1f %% of a profiled run at fasttime.profile_interval = %d ms%s",
					grade, cost_ns, 100.0 * share,
					ft_profile_interval_ms, advice);
}

/*
 * fasttime_overhead's row for source 'profile_tick': the CPU time one tick
 * of profiled timing costs, measured once per backend whatever the
 * duration (ft_prof_tick_cost_ns) and never inside a profiled run.  Only
 * ns_per_loop and median_ns have a value.
 */
static void
ft_tick_row(ReturnSetInfo *rsinfo)
{
	Datum		values[8];
	bool		nulls[8];
	double		cost_ns;

	for (int i = 0; i < 8; i++)
		nulls[i] = true;
	values[0] = CStringGetTextDatum(FT_TICK_SOURCE);
	nulls[0] = false;
	(void) ft_prof_tick_cost_ns();
	if (!ft_prof_tick_cost_known(&cost_ns))
		values[7] = CStringGetTextDatum("unknown: a tick's cost cannot be measured while profiled timing runs in this backend");
	else if (cost_ns <= 0 && !ft_prof_available())
		values[7] = CStringGetTextDatum("unknown: profiled timing has no timeout slot for its tick in this backend, so it times plan nodes exactly");
	else if (cost_ns <= 0)
		values[7] = CStringGetTextDatum("unknown: the measurement found no cost of a tick (no tick landed, or its cost was lost in the noise)");
	else
	{
		values[2] = Float8GetDatum(cost_ns);
		nulls[2] = false;
		values[4] = Int64GetDatum((int64) rint(cost_ns));
		nulls[4] = false;
		values[7] = CStringGetTextDatum(ft_tick_verdict(cost_ns));
	}
	nulls[7] = false;
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * fasttime_overhead(duration, source): pg_test_timing's headline, a row per
 * source; 'profile_tick' asks what profiled ticks cost (the duration is
 * checked, but does not apply).
 */
Datum
fasttime_overhead(PG_FUNCTION_ARGS)
{
	double		duration;

	if (!PG_ARGISNULL(1) &&
		pg_strcasecmp(text_to_cstring(PG_GETARG_TEXT_PP(1)), FT_TICK_SOURCE) == 0)
	{
		InitMaterializedSRF(fcinfo, 0);
		if (ft_get_duration(fcinfo, 0, &duration))
			ft_tick_row((ReturnSetInfo *) fcinfo->resultinfo);
		PG_RETURN_VOID();
	}
	ft_measure_sources(fcinfo, ft_overhead_row, true);
	PG_RETURN_VOID();
}

/* One name/value row of fasttime_status; a NULL value means "unknown". */
static void
ft_status_row(ReturnSetInfo *rsinfo, const char *name, const char *value)
{
	Datum		values[2];
	bool		nulls[2] = {0};

	values[0] = CStringGetTextDatum(name);
	if (value != NULL && value[0] != '\0')
		values[1] = CStringGetTextDatum(value);
	else
		nulls[1] = true;
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/* A number as status text, NULL when it is 0 (not known). */
static char *
ft_status_num(double v, const char *fmt)
{
	return v > 0 ? psprintf(fmt, v) : NULL;
}

static const char *
ft_status_bool(bool b)
{
	return b ? "true" : "false";
}

/*
 * fasttime_status(): everything fasttime knows and decided, one fact a
 * row, for a DBA without a shell.  It measures nothing (the facts are
 * cached), so it is safe for PUBLIC.
 */
Datum
fasttime_status(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	const FtClockFacts *f = ft_get_facts();
	FtClockSetting setting = (FtClockSetting) ft_clock_setting;
	char		why[256];
	bool		usable = ft_tsc_usable(f, why, sizeof(why));
	double		tick_cost_ns;

	InitMaterializedSRF(fcinfo, 0);

	ft_status_row(rsinfo, "setting", ft_setting_name(setting));
	ft_status_row(rsinfo, "setting_reason", ft_get_decision(setting)->reason);
	ft_status_row(rsinfo, "effective_source",
				  ft_choice_name(ft_effective_choice()));
	ft_status_row(rsinfo, "auto_reason",
				  ft_get_decision(FT_SETTING_AUTO)->reason);
	if (FT_HAVE_CORE_CLOCK_SOURCE)
	{
		FtInstrUnits units;

		/* the server's own clock (19 on), which auto follows */
		ft_instr_units_choose(&units, &ft_conv);
		ft_status_row(rsinfo, "core_timing_clock_source",
					  ft_core_timing_clock_source());
		ft_status_row(rsinfo, "core_tsc_enabled",
					  ft_status_bool(ft_core_tsc_enabled()));
		ft_status_row(rsinfo, "core_tsc_frequency_khz",
					  ft_status_num((double) ft_core_tsc_frequency_khz(), "%.0f"));
		ft_status_row(rsinfo, "node_time_unit",
					  units.core_ticks ? "tsc_ticks" : "nanoseconds");
	}
	ft_status_row(rsinfo, "tsc_usable", ft_status_bool(usable));
	ft_status_row(rsinfo, "tsc_usable_reason", why);
	ft_status_row(rsinfo, "tsc_frequency_khz",
				  ft_status_num(f->tsc_hz / 1000.0, "%.0f"));
	ft_status_row(rsinfo, "tsc_frequency_origin",
				  ft_freq_origin_name(f->tsc_hz_origin));
	ft_status_row(rsinfo, "frequency_note", f->frequency_note);
	ft_status_row(rsinfo, "calibrated_frequency_khz",
				  f->calibration_ok ?
				  ft_status_num(f->calibrated_hz / 1000.0, "%.0f") : NULL);
	ft_status_row(rsinfo, "calibration_spread_ppm",
				  f->calibration_ok ?
				  psprintf("%.2f", f->calibration_spread_ppm) : NULL);
	ft_status_row(rsinfo, "calibration_note", f->calibration_note);
	ft_status_row(rsinfo, "frequency_disagreement_ppm",
				  f->calibration_ok ?
				  psprintf("%.1f", f->disagreement_ppm) : NULL);
	ft_status_row(rsinfo, "cpuid_15h_frequency_khz",
				  ft_status_num(f->cpuid_15h_hz / 1000.0, "%.0f"));
	ft_status_row(rsinfo, "cpuid_16h_frequency_khz",
				  ft_status_num(f->cpuid_16h_hz / 1000.0, "%.0f"));
	ft_status_row(rsinfo, "hypervisor_frequency_khz",
				  ft_status_num(f->hypervisor_hz / 1000.0, "%.0f"));
	ft_status_row(rsinfo, "cpu_vendor", f->cpu_vendor);
	ft_status_row(rsinfo, "invariant_tsc", ft_status_bool(f->invariant_tsc));
	ft_status_row(rsinfo, "rdtscp", ft_status_bool(f->rdtscp));
	ft_status_row(rsinfo, "cpuid_invariant_tsc",
				  ft_status_bool(f->cpuid_invariant_tsc));
	ft_status_row(rsinfo, "cpuid_rdtscp", ft_status_bool(f->cpuid_rdtscp));
	ft_status_row(rsinfo, "kernel_cpu_flags_read",
				  ft_status_bool(f->kernel_flags_read));
	ft_status_row(rsinfo, "kernel_invariant_tsc",
				  !f->kernel_flags_read ? NULL :
				  ft_status_bool(f->kernel_constant_tsc && f->kernel_nonstop_tsc));
	ft_status_row(rsinfo, "kernel_rdtscp",
				  !f->kernel_flags_read ? NULL : ft_status_bool(f->kernel_rdtscp));
	ft_status_row(rsinfo, "cpu_flags_note", f->cpu_flags_note);
	ft_status_row(rsinfo, "lfence_serializing",
				  ft_status_bool(f->lfence_serializing));
	ft_status_row(rsinfo, "tsc_ordered_read",
				  !f->has_tsc ? NULL : f->is_aarch64 ? "isb;mrs cntvct_el0" :
				  f->rdtscp ? "rdtscp" : "lfence;rdtsc");
	ft_status_row(rsinfo, "hypervisor",
				  !f->hypervisor ? "none" :
				  f->hypervisor_vendor[0] ? f->hypervisor_vendor : "unknown");
	ft_status_row(rsinfo, "kernel_clocksource", f->kernel_clocksource);
	ft_status_row(rsinfo, "kernel_available_clocksources",
				  f->kernel_available);
	ft_status_row(rsinfo, "ns_per_read_clock_gettime",
				  ft_status_num(f->ns_per_read_clock_gettime, "%.1f"));
	ft_status_row(rsinfo, "ns_per_read_tsc",
				  ft_status_num(f->ns_per_read_tsc, "%.1f"));
	ft_status_row(rsinfo, "ns_per_read_tsc_ordered",
				  ft_status_num(f->ns_per_read_tsc_ordered, "%.1f"));
	ft_status_row(rsinfo, "tsc_timed_queries",
				  psprintf(INT64_FORMAT, ft_node_timing_stats.queries));
	ft_status_row(rsinfo, "tsc_timed_nodes_last_query",
				  psprintf("%d", ft_node_timing_stats.last_query_nodes));
	ft_status_row(rsinfo, "usage_derived_nodes_last_query",
				  psprintf("%d", ft_node_timing_stats.last_query_derived));
	ft_status_row(rsinfo, "tsc_disagreements",
				  psprintf(INT64_FORMAT, ft_node_timing_stats.disagreements));
	ft_status_row(rsinfo, "tsc_fallback", ft_clock_fallback_reason());
	ft_status_row(rsinfo, "ordered_reads",
				  ft_read_order_name((FtReadOrder) ft_ordered_reads));
	ft_status_row(rsinfo, "node_timing",
				  ft_node_timing == FT_NODE_TIMING_PROFILE ? "profile" : "exact");
	ft_status_row(rsinfo, "profile_interval_ms", psprintf("%d", ft_profile_interval_ms));
	ft_status_row(rsinfo, "profile_interval_max_ms",
				  psprintf("%d", Max(ft_profile_interval_ms, ft_profile_interval_max_ms)));
	ft_status_row(rsinfo, "profile_after_ms", psprintf("%d", ft_profile_after_ms));
	ft_status_row(rsinfo, "profile_ticks", psprintf(UINT64_FORMAT, ft_prof_backend_ticks()));
	ft_status_row(rsinfo, "profile_declined_queries",
				  psprintf(INT64_FORMAT, ft_node_timing_stats.prof_declined));
	ft_status_row(rsinfo, "small_plans_left_stock",
				  psprintf(INT64_FORMAT, ft_node_timing_stats.small_plans));
	ft_status_row(rsinfo, "profile_ticks_waited",
				  psprintf(UINT64_FORMAT, ft_prof_backend_deferred()));
	ft_status_row(rsinfo, "tick_worker", ft_ticker_state());
	ft_status_row(rsinfo, "profile_worker_ticks",
				  psprintf(UINT64_FORMAT, ft_ticker_ticks()));
	/* a measurement that failed is kept as 0: NULL, as before it ran */
	ft_status_row(rsinfo, "profile_tick_cost_ns",
				  ft_prof_tick_cost_known(&tick_cost_ns) ?
				  ft_status_num(tick_cost_ns, "%.0f") : NULL);
	ft_status_row(rsinfo, "wrapper_vector_code", ft_wrappers_isa());
	ft_status_row(rsinfo, "wrapper_vector_reason", ft_wrappers_isa_reason());
#ifdef FASTTIME_FAULT_INJECTION
	ft_status_row(rsinfo, "fault_wrapper_start_reads_plain",
				  psprintf(UINT64_FORMAT, ft_fault_wrapper_reads[0]));
	ft_status_row(rsinfo, "fault_wrapper_start_reads_ordered",
				  psprintf(UINT64_FORMAT, ft_fault_wrapper_reads[1]));
	ft_status_row(rsinfo, "fault_wrapper_stop_reads_plain",
				  psprintf(UINT64_FORMAT, ft_fault_wrapper_reads[2]));
	ft_status_row(rsinfo, "fault_wrapper_stop_reads_ordered",
				  psprintf(UINT64_FORMAT, ft_fault_wrapper_reads[3]));
	ft_status_row(rsinfo, "fault_clock_stamps_taken",
				  psprintf(UINT64_FORMAT, ft_fault_stamps_taken));
	ft_status_row(rsinfo, "fault_clock_stamps_reused",
				  psprintf(UINT64_FORMAT, ft_fault_stamps_reused));
	ft_status_row(rsinfo, "fault_clock_checks_deferred",
				  psprintf(UINT64_FORMAT, ft_fault_checks_deferred));
#endif
	ft_status_row(rsinfo, "open_query_notes",
				  psprintf("%d", ft_open_query_notes()));
	PG_RETURN_VOID();
}

/* CLOCK_MONOTONIC_RAW in ns: the kernel's clock without NTP's slewing */
static int64
ft_read_monotonic_raw_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC_RAW, &ts) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_SYSTEM_ERROR),
				 errmsg("could not read CLOCK_MONOTONIC_RAW: %m")));
	return (int64) ts.tv_sec * FT_NS_PER_SEC + ts.tv_nsec;
}

/*
 * fasttime_drift(duration): one interval by the TSC (converted as node
 * times are), by clock_gettime (CLOCK_MONOTONIC, which NTP slews) and by
 * CLOCK_MONOTONIC_RAW (which the calibration used): drift_raw_ppm checks
 * the conversion, drift_ppm compares with stock timing now.  The backend
 * sleeps on its latch meanwhile, free to migrate between CPUs.
 */
Datum
fasttime_drift(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char		why[256];
	double		duration;
	uint64		tsc0,
				tsc1,
				tsc_ns;
	int64		ns0,
				ns1,
				raw0,
				raw1,
				wall_ns,
				raw_ns;
	Datum		values[5];
	bool		nulls[5] = {0};

	InitMaterializedSRF(fcinfo, 0);
	if (!ft_get_duration(fcinfo, 0, &duration))
		PG_RETURN_VOID();
	if (!ft_tsc_usable(ft_get_facts(), why, sizeof(why)))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot compare the %s with clock_gettime on this machine",
						ft_counter_name(ft_get_facts())),
				 errdetail("The %s is not usable: %s.",
						   ft_counter_name(ft_get_facts()), why),
				 errhint("fasttime_status() shows the facts behind this.")));

	raw0 = ft_read_monotonic_raw_ns();
	tsc0 = ft_read_tsc();
	ns0 = ft_read_clock_gettime_ns();
	for (;;)
	{
		int64		left_ns = (int64) (duration * 1e9) -
			(ft_read_clock_gettime_ns() - ns0);

		if (left_ns <= 0)
			break;
		(void) WaitLatch(MyLatch,
						 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 Max(left_ns / 1000000, 1),
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
	raw1 = ft_read_monotonic_raw_ns();
	tsc1 = ft_read_tsc();
	ns1 = ft_read_clock_gettime_ns();

	tsc_ns = ft_ticks_to_ns(&ft_conv, (int64) (tsc1 - tsc0));
	wall_ns = ns1 - ns0;
	raw_ns = raw1 - raw0;
	values[0] = Int64GetDatum((int64) tsc_ns);
	values[1] = Int64GetDatum(wall_ns);
	values[2] = Float8GetDatum(((double) tsc_ns - (double) wall_ns) * 1e6 /
							   (double) wall_ns);
	values[3] = Int64GetDatum(raw_ns);
	values[4] = Float8GetDatum(((double) tsc_ns - (double) raw_ns) * 1e6 /
							   (double) raw_ns);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	PG_RETURN_VOID();
}
