/*-------------------------------------------------------------------------
 *
 * fasttime.c
 *	  Module load and the fasttime.* settings.
 *
 * The top of fasttime's one-way flow: the settings over the clock state,
 * then the executor hooks and the EXPLAIN option.  Nothing includes it.
 *
 * src/fasttime.c
 *
 *-------------------------------------------------------------------------
 */
#include "compat.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "utils/guc.h"
#include "utils/snapmgr.h"

#include "clock_state.h"
#include "explain_option.h"
#ifdef FASTTIME_FAULT_INJECTION
#include "fault_injection.h"	/* test/fault/, fault builds only */
#endif
#include "node_timing.h"
#include "profiler.h"
#include "ticker.h"
#include "usage.h"

PG_MODULE_MAGIC;

static char *ft_status_value = NULL;	/* fasttime.clock_source_status */

/* set by the check hook when postgresql.conf asks for an unusable tsc */
static char ft_startup_refusal[sizeof(((FtDecision *) 0)->reason)];
static GucSource ft_startup_refusal_source;

/* _PG_init is defining fasttime.clock_source (check_clock_source) */
static bool ft_defining_clock_source = false;

static const struct config_enum_entry clock_source_options[] = {
	{"auto", FT_SETTING_AUTO, false},
	{"tsc", FT_SETTING_TSC, false},
	{"try_tsc", FT_SETTING_TRY_TSC, false},
	{"clock_gettime", FT_SETTING_CLOCK_GETTIME, false},
	{NULL, 0, false}
};

static const struct config_enum_entry node_timing_options[] = {
	{"exact", FT_NODE_TIMING_EXACT, false},
	{"profile", FT_NODE_TIMING_PROFILE, false},
	{NULL, 0, false}
};

static const struct config_enum_entry tick_source_options[] = {
	{"signal", FT_TICK_SOURCE_SIGNAL, false},
	{"worker", FT_TICK_SOURCE_WORKER, false},
	{NULL, 0, false}
};

static const struct config_enum_entry ordered_reads_options[] = {
	{"off", FT_READS_PLAIN, false},
	{"on", FT_READS_BOTH, false},
	{"false", FT_READS_PLAIN, true},
	{"true", FT_READS_BOTH, true},
	{"no", FT_READS_PLAIN, true},
	{"yes", FT_READS_BOTH, true},
	{"0", FT_READS_PLAIN, true},
	{"1", FT_READS_BOTH, true},
	{NULL, 0, false}
};

void		_PG_init(void);

/*
 * fasttime.clock_source: refuse "tsc" where the TSC is not usable, with
 * the failed condition in the DETAIL; every other value is accepted, and
 * reported on by SHOW fasttime.clock_source_status, never by this hook.
 *
 * A check hook runs at every call of a function declared with SET
 * fasttime.clock_source and at every connection of a role with such a
 * setting, so there it must cost and say nothing: detecting the facts
 * calibrates for up to ~100 ms, and a refusal there would fail the
 * function's every call, or warn each new connection, from the day the
 * database moves to a machine whose TSC is unusable.  So "tsc" is refused
 * only where a DBA sets it and expects the answer at once: at server start
 * when preloaded (a bad "tsc" stops the server, as huge_pages = on does),
 * for a SET statement of its own (PGC_S_SESSION with no snapshot), for
 * ALTER SYSTEM (PGC_S_FILE inside a transaction), and at a reload of the
 * configuration file where the facts are known (the postmaster's, when
 * preloaded: the value a restart would refuse is not taken, and the
 * reload logs why).  DDL that stores the value (PGC_S_TEST: CREATE
 * FUNCTION ... SET, ALTER ROLE ... SET, and so a restored dump) draws a
 * NOTICE and stores it, as PostgreSQL's own checks of a tablespace or a
 * search path do there.  A value set before a backend loaded fasttime
 * (postgresql.conf read by a server that does not preload it, then LOAD
 * or CREATE EXTENSION in a transaction) is taken over when _PG_init
 * defines the setting, not set there: accepted too, or every such
 * backend would calibrate and warn.  Elsewhere "tsc" is accepted
 * silently, and where the TSC is unusable plan nodes are timed with
 * clock_gettime, as SHOW fasttime.clock_source_status tells.  Parallel
 * workers accept what their leader checked.
 */
static bool
check_clock_source(int *newval, void **extra, GucSource source)
{
	const FtDecision *d;

	if (*newval != FT_SETTING_TSC ||
		IsParallelWorker() || InitializingParallelWorker)
		return true;
	if (ft_defining_clock_source && !process_shared_preload_libraries_in_progress)
		return true;
	if (!process_shared_preload_libraries_in_progress &&
		source != PGC_S_TEST &&
		!(source == PGC_S_SESSION && !ActiveSnapshotSet()) &&
		!(source == PGC_S_FILE && (IsTransactionState() || ft_facts_detected())))
		return true;

	d = ft_get_decision(FT_SETTING_TSC);
	if (!d->refused)
		return true;
	if (source == PGC_S_TEST)
	{
		ereport(NOTICE,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("fasttime.clock_source cannot be \"tsc\" on this machine"),
				 errdetail("%s", ft_sentence(d->reason)),
				 errhint("The setting is stored; where it applies on this machine, plan nodes are timed with clock_gettime, as with \"try_tsc\".")));
		return true;
	}
	if (process_shared_preload_libraries_in_progress)
	{
		strlcpy(ft_startup_refusal, d->reason,
				sizeof(ft_startup_refusal));
		ft_startup_refusal_source = source;
	}
	GUC_check_errcode(ERRCODE_FEATURE_NOT_SUPPORTED);
	GUC_check_errmsg("fasttime.clock_source cannot be \"tsc\" on this machine");
	GUC_check_errdetail("%s", ft_sentence(d->reason));
	GUC_check_errhint("Use \"try_tsc\" to use the %s only where it is usable, or \"auto\".",
					  ft_counter_name(ft_get_facts()));
	return false;
}

/* SHOW fasttime.clock_source_status: what is in effect now. */
static const char *
show_clock_source_status(void)
{
	return ft_choice_name(ft_effective_choice());
}

/*
 * fasttime.leader_facts is written only by fasttime and by parallel worker
 * start-up; a user setting it could make conversions wrong.  A worker
 * accepts any value (its leader may run another build): refusing it would
 * fail the query, and fasttime must never be the reason a query fails.
 */
static bool
check_leader_facts(char **newval, void **extra, GucSource source)
{
	if (*newval == NULL || (*newval)[0] == '\0')
		return true;
	if (!ft_publishing_facts && !InitializingParallelWorker)
	{
		GUC_check_errcode(ERRCODE_CANT_CHANGE_RUNTIME_PARAM);
		GUC_check_errmsg("parameter \"fasttime.leader_facts\" is managed by fasttime and cannot be set");
		return false;
	}
	return true;
}

/* A parallel worker adopts its leader's facts, or says why not at DEBUG1. */
static void
assign_leader_facts(const char *newval, void *extra)
{
	if (!InitializingParallelWorker || newval == NULL || newval[0] == '\0')
		return;
	if (ft_adopt_leader_facts(newval))
		ereport(DEBUG1,
				(errmsg_internal("fasttime: parallel worker adopted its leader's clock facts")));
	else
		ereport(DEBUG1,
				(errmsg_internal("fasttime: parallel worker could not read its leader's clock facts, so its plan nodes are timed with clock_gettime"),
				 errdetail_internal("The leader's fasttime.leader_facts (\"%.16s...\", %zu bytes) comes from another build of fasttime, or is malformed.",
									newval, strlen(newval))));
}

/* fasttime.leader_clock_check: as fasttime.leader_facts. */
static bool
check_leader_clock_check(char **newval, void **extra, GucSource source)
{
	if (*newval == NULL || (*newval)[0] == '\0')
		return true;
	if (!ft_publishing_facts && !InitializingParallelWorker)
	{
		GUC_check_errcode(ERRCODE_CANT_CHANGE_RUNTIME_PARAM);
		GUC_check_errmsg("parameter \"fasttime.leader_clock_check\" is managed by fasttime and cannot be set");
		return false;
	}
	return true;
}

/* A parallel worker takes over what its leader's clock checks found. */
static void
assign_leader_clock_check(const char *newval, void *extra)
{
	if (InitializingParallelWorker)
		ft_adopt_leader_clock_check(newval);
}

/*
 * Where the fasttime.clock_source that stopped the server was set, as an
 * errhint: the file and line PostgreSQL recorded (ALTER SYSTEM's file
 * named as such), or the command line.
 */
static int
ft_hint_where_set(GucSource source)
{
	const char *file = NULL;
	int			line = 0;

	if (source == PGC_S_ARGV)
		return errhint("Set fasttime.clock_source to \"try_tsc\" or \"auto\" on the server's command line.");
	if (source == PGC_S_FILE)
		file = ft_guc_sourcefile("fasttime.clock_source", &line);
	if (file == NULL)
		return errhint("Set fasttime.clock_source to \"try_tsc\" or \"auto\" where it is set.");
	else
	{
		const char *base = strrchr(file, '/');

		if (strcmp(base ? base + 1 : file, PG_AUTOCONF_FILENAME) == 0)
			return errhint("The value was set with ALTER SYSTEM: set fasttime.clock_source to \"try_tsc\" or \"auto\", or remove it, in \"%s\" line %d.",
					file, line);
		return errhint("Set fasttime.clock_source to \"try_tsc\" or \"auto\" in \"%s\" line %d.",
					   file, line);
	}
}

/*
 * A preloading postmaster's start-up: refuse to start on a "tsc" the
 * machine cannot honour (PostgreSQL would only WARN and keep the default),
 * or log the clock plan nodes will be timed with and publish the facts.
 */
static void
ft_server_start(void)
{
	const FtDecision *d;

	if (ft_startup_refusal[0] != '\0')
		ereport(FATAL,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("fasttime.clock_source is \"tsc\" but the %s cannot be used on this machine",
						ft_counter_name(ft_get_facts())),
				 errdetail("%s", ft_sentence(ft_startup_refusal)),
				 ft_hint_where_set(ft_startup_refusal_source)));

	d = ft_get_decision((FtClockSetting) ft_clock_setting);
	if (ft_node_timing == FT_NODE_TIMING_PROFILE)
		ereport(LOG,
				(errmsg("fasttime: fasttime.clock_source = %s, plan nodes are timed with %s, every call for the first %d ms of a run (ordered reads), then on %s",
						ft_setting_name((FtClockSetting) ft_clock_setting),
						ft_choice_name(ft_effective_choice()),
						ft_profile_after_ms,
						ft_tick_source == FT_TICK_SOURCE_WORKER ?
						"the tick worker's ticks" : "timer ticks"),
				 errdetail("%s", ft_sentence(d->reason))));
	else
		ereport(LOG,
				(errmsg("fasttime: fasttime.clock_source = %s, plan nodes are timed with %s, %s",
						ft_setting_name((FtClockSetting) ft_clock_setting),
						ft_choice_name(ft_effective_choice()),
						ft_ordered_reads == FT_READS_BOTH ? "every call, ordered reads" :
						"every call"),
				 errdetail("%s", ft_sentence(d->reason))));
	ft_publish_facts();
}

/*
 * Module load: the settings, then the hooks, then a preloading
 * postmaster's start-up step (its one chance before it forks).
 */
void
_PG_init(void)
{
#ifdef FASTTIME_FAULT_INJECTION
	ft_fault_init();			/* fault builds: before any fact is gathered */
#endif
	ft_defining_clock_source = true;
	DefineCustomEnumVariable("fasttime.clock_source",
							 "Clock used to time plan nodes (EXPLAIN ANALYZE, auto_explain).",
							 "auto uses the TSC only where it is usable, the kernel uses it too, and it is cheaper; "
							 "tsc requires it; try_tsc uses it where usable; clock_gettime is stock PostgreSQL.",
							 &ft_clock_setting,
							 FT_SETTING_AUTO,
							 clock_source_options,
							 PGC_SUSET,
							 0,
							 check_clock_source,
							 NULL,
							 NULL);
	ft_defining_clock_source = false;

	DefineCustomStringVariable("fasttime.clock_source_status",
							   "Shows the clock plan nodes are timed with: tsc or clock_gettime.",
							   "From PostgreSQL 19 on, auto follows the server's own clock "
							   "(timing_clock_source): tsc only where the server's TSC clock is in "
							   "effect; fasttime_status() shows both (core_timing_clock_source, "
							   "core_tsc_enabled, node_time_unit).",
							   &ft_status_value,
							   "clock_gettime",
							   PGC_INTERNAL,
							   GUC_NOT_IN_SAMPLE | GUC_DISALLOW_IN_FILE,
							   NULL,
							   NULL,
							   show_clock_source_status);

	DefineCustomStringVariable("fasttime.leader_facts",
							   "Clock facts handed from a parallel leader to its workers (internal).",
							   NULL,
							   &ft_leader_facts,
							   "",
							   PGC_SUSET,
							   GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE |
							   GUC_NO_RESET_ALL | GUC_DISALLOW_IN_FILE |
							   GUC_SUPERUSER_ONLY,
							   check_leader_facts,
							   assign_leader_facts,
							   NULL);

	DefineCustomStringVariable("fasttime.leader_clock_check",
							   "What a parallel leader's clock checks found, for its workers (internal).",
							   NULL,
							   &ft_leader_clock_check,
							   "",
							   PGC_SUSET,
							   GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE |
							   GUC_NO_RESET_ALL | GUC_DISALLOW_IN_FILE |
							   GUC_SUPERUSER_ONLY,
							   check_leader_clock_check,
							   assign_leader_clock_check,
							   NULL);

	DefineCustomEnumVariable("fasttime.ordered_reads",
							 "Whether the TSC reads of exact node timing wait for earlier work.",
							 "on orders both reads of a call (LFENCE;RDTSC), so that the latency "
							 "of a call's cache misses stays on the node that made them; off "
							 "reads without waiting, and that latency can land on the parent.  "
							 "Profiled timing's exact calls always read in order.",
							 &ft_ordered_reads,
							 FT_READS_BOTH,
							 ordered_reads_options,
							 PGC_SUSET,
							 0,
							 NULL,
							 NULL,
							 NULL);

	DefineCustomEnumVariable("fasttime.node_timing",
							 "How plan node times are taken: exact (every call timed) or profile (time credited to the executing node on timer ticks).",
							 "profile starts every run exact and switches to ticks after "
							 "fasttime.profile_after milliseconds: no clock read per node call, "
							 "and a tick every fasttime.profile_interval milliseconds (lengthening "
							 "to fasttime.profile_interval_max in long runs) credits the "
							 "measured time since the previous one to the nodes executing.  Rows, "
							 "loops, buffers and WAL are exact either way.",
							 &ft_node_timing,
							 FT_NODE_TIMING_PROFILE,
							 node_timing_options,
							 PGC_SUSET,
							 0,
							 NULL,
							 NULL,
							 NULL);

	DefineCustomIntVariable("fasttime.profile_interval",
							"Milliseconds between the ticks of profiled node timing.",
							"A tick is a timer signal in the backend, whose cost on this "
							"machine fasttime_overhead(source => 'profile_tick') measures, or "
							"with the tick worker a wake-up of the worker; a longer interval "
							"takes fewer ticks and gives a larger statistical error on nodes "
							"that hold a small share of the time.",
							&ft_profile_interval_ms,
							1,
							1,
							1000,
							PGC_SUSET,
							GUC_UNIT_MS,
							NULL,
							NULL,
							NULL);

	DefineCustomIntVariable("fasttime.profile_interval_max",
							"Longest interval profiled node timing's ticks lengthen to, in milliseconds.",
							"After 250 ticks at one interval the interval doubles, up to this; "
							"set it to fasttime.profile_interval (or below) for ticks at a fixed "
							"interval.",
							&ft_profile_interval_max_ms,
							4,
							1,
							1000,
							PGC_SUSET,
							GUC_UNIT_MS,
							NULL,
							NULL,
							NULL);

	DefineCustomEnumVariable("fasttime.tick_source",
							 "What ticks profiled node timing after its exact prefix: timer signals, or the tick worker.",
							 "signal: a timer signal in the backend every interval.  worker: one "
							 "background worker ticks every profiling backend, which then takes no "
							 "signal; it is started only where fasttime is in "
							 "shared_preload_libraries and this is worker at server start, and "
							 "without it backends use signals.  The exact prefix's few ticks are "
							 "signals either way.",
							 &ft_tick_source,
							 FT_TICK_SOURCE_SIGNAL,
							 tick_source_options,
							 PGC_SUSET,
							 0,
							 NULL,
							 NULL,
							 NULL);

	DefineCustomIntVariable("fasttime.profile_after",
							"Milliseconds of exact node timing before profiled timing takes over.",
							"Runs shorter than this keep exact node times, and a plan whose "
							"estimated node calls are too few for profiled timing to pay is "
							"timed exactly throughout; 0 profiles every plan from the first "
							"tick.",
							&ft_profile_after_ms,
							20,
							0,
							3600000,
							PGC_SUSET,
							GUC_UNIT_MS,
							NULL,
							NULL,
							NULL);

	DefineCustomBoolVariable("fasttime.derived_usage",
							 "Takes a plan node's buffer and WAL usage from its parent's where the two are provably equal.",
							 "Where a node's parent does no buffer or WAL work of its own "
							 "(an Aggregate of count, sum, avg, min or max over numbers), the "
							 "node's usage is its parent's: its calls then skip the per-call "
							 "compares, and its totals are copied from the parent's when the "
							 "run ends.  The numbers are the same either way; off compares at "
							 "every call of every node.",
							 &ft_derived_usage,
							 true,
							 PGC_SUSET,
							 0,
							 NULL,
							 NULL,
							 NULL);

	MarkGUCPrefixReserved("fasttime");

	ft_install_executor_hooks();
	ft_register_explain_option();
	/* the worker only where the server starts with it (ticker.c) */
	ft_ticker_init(ft_tick_source == FT_TICK_SOURCE_WORKER);

	if (process_shared_preload_libraries_in_progress)
		ft_server_start();
}
