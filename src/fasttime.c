/*-------------------------------------------------------------------------
 *
 * fasttime.c
 *	  Module load, the fasttime.* settings, and the cached clock state.
 *
 * The facts about the machine's clocks are gathered once per process tree:
 * in the postmaster when fasttime is in shared_preload_libraries (every
 * backend and worker inherits them through fork), otherwise on first need
 * in each backend.  A parallel worker never measures: it adopts its
 * leader's facts, which travel in the hidden setting fasttime.leader_facts
 * along with the rest of the leader's GUC state.
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

#include "fasttime.h"

PG_MODULE_MAGIC;

/* serialized facts: tag, size, two hex digits a byte */
#define FT_FACTS_STRLEN (sizeof(FtClockFacts) * 2 + 32)

int			ft_clock_setting = FT_SETTING_AUTO;
FtTickConv	ft_conv;

static FtClockFacts ft_facts;
static FtDecision ft_decisions[4];
static bool ft_decided[4];

static char *ft_status_value = NULL;	/* fasttime.clock_source_status */
static char *ft_leader_facts = NULL;	/* fasttime.leader_facts */
static bool ft_publishing = false;

/* set by the check hook when postgresql.conf asks for an unusable tsc */
static char ft_startup_refusal[sizeof(((FtDecision *) 0)->reason)];

static const struct config_enum_entry clock_source_options[] = {
	{"auto", FT_SETTING_AUTO, false},
	{"tsc", FT_SETTING_TSC, false},
	{"try_tsc", FT_SETTING_TRY_TSC, false},
	{"clock_gettime", FT_SETTING_CLOCK_GETTIME, false},
	{NULL, 0, false}
};

void		_PG_init(void);

/*
 * The facts changed (first detection, or adoption of a leader's): forget
 * cached decisions and recompute the conversion the node wrapper uses.
 */
static void
ft_facts_changed(void)
{
	memset(ft_decided, 0, sizeof(ft_decided));
	if (!ft_conv_init(&ft_conv, ft_facts.tsc_hz))
		memset(&ft_conv, 0, sizeof(ft_conv));
}

/*
 * The facts, detected on first use.  A parallel worker that has not been
 * handed its leader's facts does not calibrate (that is slow, and
 * calibration under the load a parallel query creates is exactly when it
 * goes wrong); it reports the TSC as unusable, which makes it time nodes
 * with clock_gettime -- correct, just not cheaper.
 */
const FtClockFacts *
ft_get_facts(void)
{
	if (!ft_facts.detected)
	{
		if (IsParallelWorker() || InitializingParallelWorker)
		{
			memset(&ft_facts, 0, sizeof(ft_facts));
			snprintf(ft_facts.calibration_note,
					 sizeof(ft_facts.calibration_note),
					 "this parallel worker did not receive its leader's clock facts");
			ft_facts.detected = true;
		}
		else
		{
			int64		start = ft_read_clock_gettime_ns();

			ft_detect_clock_facts(&ft_facts);
			ereport(DEBUG1,
					(errmsg_internal("fasttime: clock facts detected in %.1f ms",
									 (double) (ft_read_clock_gettime_ns() - start) / 1e6)));
		}
		ft_facts_changed();
	}
	return &ft_facts;
}

/* The decision for a setting, computed once per set of facts. */
const FtDecision *
ft_get_decision(FtClockSetting setting)
{
	const FtClockFacts *facts = ft_get_facts();

	Assert(setting >= 0 && setting < lengthof(ft_decisions));
	if (!ft_decided[setting])
	{
		ft_decide(facts, setting, &ft_decisions[setting]);
		ft_decided[setting] = true;
	}
	return &ft_decisions[setting];
}

/*
 * The clock plan nodes are timed with right now.  Asking measures the
 * machine the first time (unless the setting is clock_gettime, which needs
 * no facts): the executor asks only for queries that time their nodes.
 */
FtClockChoice
ft_effective_choice(void)
{
	const FtDecision *d;

	if (ft_clock_setting == FT_SETTING_CLOCK_GETTIME)
		return FT_CHOICE_CLOCK_GETTIME;
	d = ft_get_decision((FtClockSetting) ft_clock_setting);
	if (d->refused || d->choice != FT_CHOICE_TSC)
		return FT_CHOICE_CLOCK_GETTIME;
	/* a usable TSC has a frequency ft_conv_init accepted */
	Assert(ft_conv.mult != 0);
	return FT_CHOICE_TSC;
}

/*
 * Make this backend's facts part of its GUC state, so parallel workers
 * started from it can adopt them.  Cheap when already done; the value can
 * be lost to a transaction rollback, in which case it is simply set again
 * before the next timed query.
 */
void
ft_publish_facts(void)
{
	char		buf[FT_FACTS_STRLEN];

	if (!ft_facts.detected || IsParallelWorker() || IsInParallelMode())
		return;
	if (ft_leader_facts != NULL && ft_leader_facts[0] != '\0')
		return;

	ft_facts_serialize(&ft_facts, buf, sizeof(buf));
	ft_publishing = true;
	PG_TRY();
	{
		SetConfigOption("fasttime.leader_facts", buf,
						PGC_SUSET, PGC_S_OVERRIDE);
	}
	PG_FINALLY();
	{
		ft_publishing = false;
	}
	PG_END_TRY();
}

/*
 * fasttime.clock_source: refuse "tsc" where the TSC is not usable, with
 * the failed condition in the DETAIL.  Only "tsc" can be refused, and only
 * an interactive "try_tsc" reports its fallback, so nothing else needs the
 * facts: loading the library (which checks the default, auto) does not
 * measure anything.  Parallel workers accept whatever their leader had,
 * since the leader already checked it.
 */
static bool
check_clock_source(int *newval, void **extra, GucSource source)
{
	const FtDecision *d;

	if (InitializingParallelWorker)
		return true;

	if (*newval == FT_SETTING_TSC)
	{
		d = ft_get_decision(FT_SETTING_TSC);
		if (d->refused)
		{
			if (process_shared_preload_libraries_in_progress)
				strlcpy(ft_startup_refusal, d->reason,
						sizeof(ft_startup_refusal));
			GUC_check_errcode(ERRCODE_FEATURE_NOT_SUPPORTED);
			GUC_check_errmsg("fasttime.clock_source cannot be \"tsc\" on this machine");
			GUC_check_errdetail("%s.", d->reason);
			GUC_check_errhint("Use \"try_tsc\" to use the TSC only where it is usable, or \"auto\".");
			return false;
		}
	}
	else if (*newval == FT_SETTING_TRY_TSC && source >= PGC_S_INTERACTIVE)
	{
		d = ft_get_decision(FT_SETTING_TRY_TSC);
		if (d->choice != FT_CHOICE_TSC)
			ereport(NOTICE,
					(errmsg("fasttime.clock_source \"try_tsc\" falls back to clock_gettime"),
					 errdetail("%s.", d->reason)));
	}
	return true;
}

/* SHOW fasttime.clock_source_status: what is in effect now. */
static const char *
show_clock_source_status(void)
{
	return ft_choice_name(ft_effective_choice());
}

/*
 * fasttime.leader_facts is written only by fasttime itself (when
 * publishing) and by parallel worker start-up (restoring the leader's GUC
 * state); a user setting it could make conversions wrong.
 */
static bool
check_leader_facts(char **newval, void **extra, GucSource source)
{
	FtClockFacts tmp;

	if (*newval == NULL || (*newval)[0] == '\0')
		return true;
	if (!ft_publishing && !InitializingParallelWorker)
	{
		GUC_check_errcode(ERRCODE_CANT_CHANGE_RUNTIME_PARAM);
		GUC_check_errmsg("parameter \"fasttime.leader_facts\" is managed by fasttime and cannot be set");
		return false;
	}
	if (!ft_facts_parse(*newval, &tmp))
	{
		GUC_check_errdetail("The clock facts are malformed or come from a different build of fasttime.");
		return false;
	}
	return true;
}

/* A parallel worker adopts the facts its leader published. */
static void
assign_leader_facts(const char *newval, void *extra)
{
	FtClockFacts tmp;

	if (!InitializingParallelWorker || newval == NULL || newval[0] == '\0')
		return;
	if (ft_facts_parse(newval, &tmp))
	{
		ft_facts = tmp;
		ft_facts_changed();
		ereport(DEBUG1,
				(errmsg_internal("fasttime: parallel worker adopted its leader's clock facts")));
	}
}

/*
 * Module load.  In the postmaster, gather the facts before defining the
 * settings, so that postgresql.conf's fasttime.clock_source is checked
 * against them, and refuse to start on a "tsc" the machine cannot honour,
 * as the server does for huge_pages = on.
 */
void
_PG_init(void)
{
	if (process_shared_preload_libraries_in_progress)
		(void) ft_get_facts();

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

	DefineCustomStringVariable("fasttime.clock_source_status",
							   "Shows the clock plan nodes are timed with: tsc or clock_gettime.",
							   NULL,
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
							   GUC_NO_RESET_ALL | GUC_DISALLOW_IN_FILE,
							   check_leader_facts,
							   assign_leader_facts,
							   NULL);

#ifdef FASTTIME_FAULT_INJECTION
	ft_fault_define_gucs();
#endif
	MarkGUCPrefixReserved("fasttime");

	if (ft_startup_refusal[0] != '\0')
		ereport(FATAL,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("fasttime.clock_source is \"tsc\" but the TSC cannot be used on this machine"),
				 errdetail("%s.", ft_startup_refusal),
				 errhint("Set fasttime.clock_source to \"try_tsc\" or \"auto\" in postgresql.conf.")));

	if (process_shared_preload_libraries_in_progress)
	{
		const FtDecision *d = ft_get_decision((FtClockSetting) ft_clock_setting);

		ereport(LOG,
				(errmsg("fasttime: fasttime.clock_source = %s, plan nodes are timed with %s",
						ft_setting_name((FtClockSetting) ft_clock_setting),
						ft_choice_name(ft_effective_choice())),
				 errdetail("%s.", d->reason)));
		ft_publish_facts();
	}

	ft_install_executor_hooks();
	ft_register_explain_option();
}
