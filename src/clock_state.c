/*-------------------------------------------------------------------------
 *
 * clock_state.c
 *	  This process's view of the clocks: the facts, the decision for each
 *	  setting, and the tick conversion the node wrappers use.
 *
 * The facts are gathered once per process tree: in the postmaster when
 * preloaded (children inherit them), otherwise on first need.  A parallel
 * worker never measures: it adopts its leader's facts, and what its
 * leader's clock checks found, from hidden settings that travel with the
 * leader's GUC state.  The decisions are taken afresh when the kernel
 * switches clocksource (its watchdog may give up on the TSC), and a
 * backend whose TSC keeps disagreeing with clock_gettime gives it up for
 * good (ft_clock_fall_back).  fasttime.c defines the settings over the
 * variables here.
 *
 * src/clock_state.c
 *
 *-------------------------------------------------------------------------
 */
#include "compat.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "utils/guc.h"

#include "clock_detect.h"
#include "clock_state.h"

/* serialized facts: tag, size, two hex digits a byte */
#define FT_FACTS_STRLEN (sizeof(FtClockFacts) * 2 + 32)

int			ft_clock_setting = FT_SETTING_AUTO;
char	   *ft_leader_facts = NULL;
char	   *ft_leader_clock_check = NULL;
bool		ft_publishing_facts = false;
FtTickConv	ft_conv;
bool		ft_clock_fell_back = false;

static FtClockFacts ft_facts;
static FtDecision ft_decisions[4];
static bool ft_decided[4];

/* bumped whenever the cached decisions are forgotten (ft_follow_core) */
static uint64 ft_decisions_generation = 1;

/* how often the kernel's clocksource is read again, at most */
#define FT_KERNEL_RECHECK_NS	1000000000LL

/* CLOCK_MONOTONIC_COARSE of the last read of it; 0 = read at next need */
static int64 ft_kernel_checked_ns = 0;

/* auto has timed a query with the TSC in this process (see recheck) */
static bool ft_auto_used_tsc = false;

/* this process has logged auto giving up the TSC (see recheck) */
static bool ft_kernel_switch_logged = false;

/* why this process fell back to clock_gettime for good; "" if it did not */
static char ft_fallback_reason[512] = "";

/* this backend has reported a disagreement of the clocks */
static bool ft_backend_disagreed = false;

/* fasttime.leader_clock_check's values, besides "" (nothing to report) */
#define FT_CHECK_DISAGREED		"disagreed"
#define FT_CHECK_FELL_BACK		"fell back: "

static const FtDecision *ft_get_decision_nocheck(FtClockSetting setting);

/*
 * The facts changed (first detection, or adoption of a leader's): forget
 * cached decisions and recompute the conversion the node wrapper uses.
 */
static void
ft_facts_changed(void)
{
	memset(ft_decided, 0, sizeof(ft_decided));
	ft_decisions_generation++;
	if (!ft_conv_init(&ft_conv, ft_facts.tsc_hz))
		memset(&ft_conv, 0, sizeof(ft_conv));
}

/* CLOCK_MONOTONIC_COARSE in ns: a few ns a read, ms resolution; 0 on error */
static int64
ft_coarse_now_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) != 0)
		return 0;
	return (int64) ts.tv_sec * FT_NS_PER_SEC + ts.tv_nsec;
}

/* A parallel worker without its leader's facts: no TSC, and a note why. */
static void
ft_facts_not_received(const char *note)
{
	memset(&ft_facts, 0, sizeof(ft_facts));
	strlcpy(ft_facts.calibration_note, note,
			sizeof(ft_facts.calibration_note));
	ft_facts.detected = true;
	ft_facts_changed();
}

/*
 * The facts, detected on first use.  A parallel worker that was not handed
 * its leader's facts does not calibrate (slow, and unreliable under a
 * parallel query's load): its nodes are timed with clock_gettime.
 */
const FtClockFacts *
ft_get_facts(void)
{
	if (!ft_facts.detected)
	{
		if (IsParallelWorker() || InitializingParallelWorker)
			ft_facts_not_received("this parallel worker did not receive its leader's clock facts");
		else
		{
			int64		start = ft_read_clock_gettime_ns();

			ft_detect_clock_facts(&ft_facts);
			ft_kernel_checked_ns = ft_coarse_now_ns();
			ereport(DEBUG1,
					(errmsg_internal("fasttime: clock facts detected in %.1f ms",
									 (double) (ft_read_clock_gettime_ns() - start) / 1e6)));
			ft_facts_changed();
		}
	}
	return &ft_facts;
}

/* Has this process its facts already (so that asking costs nothing)? */
bool
ft_facts_detected(void)
{
	return ft_facts.detected;
}

/*
 * Read the kernel's current clocksource again if a second has passed, and
 * take every decision afresh if it changed.  An unreadable clocksource
 * keeps the last value, so a transient failure cannot flip the choice.
 * The change is logged at LOG only by a process where auto stops (or
 * resumes) using the TSC it used, so that the server log is not flooded.
 */
static void
ft_recheck_kernel_clocksource(void)
{
	char		current[sizeof(ft_facts.kernel_clocksource)];
	char		available[sizeof(ft_facts.kernel_available)];
	char		previous[sizeof(ft_facts.kernel_clocksource)];
	FtDecision	before;
	const FtDecision *after;
	int64		now;
	bool		stopped,
				resumed;

	/* nothing to compare against: a worker without facts, or no kernel */
	if (!ft_facts.detected || ft_facts.kernel_clocksource[0] == '\0')
		return;
	now = ft_coarse_now_ns();
	if (now == 0 ||
		(ft_kernel_checked_ns != 0 && now - ft_kernel_checked_ns < FT_KERNEL_RECHECK_NS))
		return;
	ft_kernel_checked_ns = now;

	if (!ft_read_kernel_clocksource(current, sizeof(current),
									available, sizeof(available)) ||
		strcmp(current, ft_facts.kernel_clocksource) == 0)
		return;

	ft_decide(&ft_facts, FT_SETTING_AUTO, &before);
	strlcpy(previous, ft_facts.kernel_clocksource, sizeof(previous));
	strlcpy(ft_facts.kernel_clocksource, current,
			sizeof(ft_facts.kernel_clocksource));
	strlcpy(ft_facts.kernel_available, available,
			sizeof(ft_facts.kernel_available));
	memset(ft_decided, 0, sizeof(ft_decided));
	ft_decisions_generation++;
	after = ft_get_decision_nocheck(FT_SETTING_AUTO);

	stopped = before.choice == FT_CHOICE_TSC && after->choice != FT_CHOICE_TSC;
	resumed = before.choice != FT_CHOICE_TSC && after->choice == FT_CHOICE_TSC;
	ereport((stopped && ft_auto_used_tsc) || (resumed && ft_kernel_switch_logged) ?
			LOG : DEBUG1,
			(errmsg("fasttime: the kernel's clocksource changed from \"%s\" to \"%s\"%s%s%s",
					previous, current,
					stopped ? ", so fasttime.clock_source = auto no longer times plan nodes with the " :
					resumed ? ", so fasttime.clock_source = auto times plan nodes with the " : "",
					stopped || resumed ? ft_counter_name(&ft_facts) : "",
					resumed ? " again" : ""),
			 errdetail("%s", ft_sentence(after->reason))));
	if (stopped && ft_auto_used_tsc)
		ft_kernel_switch_logged = true;
	if (stopped)
		ft_auto_used_tsc = false;
}

/* The decision for a setting, once per set of facts, not looking again. */
static const FtDecision *
ft_get_decision_nocheck(FtClockSetting setting)
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
 * A decision next to the server's own clock (19 on: timing_clock_source).
 * auto uses the TSC only where the server's TSC clock is in effect; tsc
 * and try_tsc use it regardless, writing nanoseconds.  The reason names
 * the unit node times are written in.  Kept until the decisions or the
 * server's clock change: formatting it costs more than the rest of a
 * one-row query's set-up.  Before 19 the decision is returned as it is.
 */
static const FtDecision *
ft_follow_core(FtClockSetting setting, const FtDecision *d)
{
	static FtDecision followed[lengthof(ft_decisions)];
	static struct
	{
		uint64		generation; /* of the decisions; 0: nothing kept */
		int			core_id;
		bool		core_tsc;
		const FtDecision *result;
	}			kept[lengthof(ft_decisions)];
	FtDecision *f;
	const char *core_setting;
	bool		core_tsc;
	int			core_id;

	if (!FT_HAVE_CORE_CLOCK_SOURCE || setting == FT_SETTING_CLOCK_GETTIME ||
		d->refused)
		return d;
	core_tsc = ft_core_tsc_enabled();
	core_id = ft_core_timing_clock_source_id();
	if (kept[setting].generation == ft_decisions_generation &&
		kept[setting].core_id == core_id && kept[setting].core_tsc == core_tsc)
		return kept[setting].result;
	kept[setting].generation = ft_decisions_generation;
	kept[setting].core_id = core_id;
	kept[setting].core_tsc = core_tsc;
	kept[setting].result = d;
	if (d->choice != FT_CHOICE_TSC)
		return d;
	core_setting = ft_core_timing_clock_source();
	f = &followed[setting];
	*f = *d;
	kept[setting].result = f;
	if (setting == FT_SETTING_AUTO && !core_tsc)
	{
		f->choice = FT_CHOICE_CLOCK_GETTIME;
		snprintf(f->reason, sizeof(f->reason),
				 "auto chose clock_gettime because the server's own timing uses the system clock (timing_clock_source = %s) and auto follows it; set fasttime.clock_source = tsc to time plan nodes with the TSC anyway",
				 core_setting);
	}
	else if (core_tsc)
		snprintf(f->reason, sizeof(f->reason),
				 "%s; the server's TSC clock is in effect (timing_clock_source = %s), so node times are written as TSC ticks, which the server converts",
				 d->reason, core_setting);
	else
		snprintf(f->reason, sizeof(f->reason),
				 "%s; the server's own timing uses the system clock (timing_clock_source = %s), so node times are written as nanoseconds",
				 d->reason, core_setting);
	return f;
}

/* The decision for a setting, after looking at the kernel again. */
const FtDecision *
ft_get_decision(FtClockSetting setting)
{
	(void) ft_get_facts();
	ft_recheck_kernel_clocksource();
	return ft_follow_core(setting, ft_get_decision_nocheck(setting));
}

/*
 * The clock plan nodes are timed with right now (measuring the machine the
 * first time, unless the setting is clock_gettime).  A process that fell
 * back answers clock_gettime, making sure its workers will know.
 */
FtClockChoice
ft_effective_choice(void)
{
	const FtDecision *d;

	if (ft_clock_setting == FT_SETTING_CLOCK_GETTIME)
		return FT_CHOICE_CLOCK_GETTIME;
	if (unlikely(ft_clock_fell_back))
	{
		ft_publish_clock_check();
		return FT_CHOICE_CLOCK_GETTIME;
	}
	d = ft_get_decision((FtClockSetting) ft_clock_setting);
	if (d->refused || d->choice != FT_CHOICE_TSC)
		return FT_CHOICE_CLOCK_GETTIME;
	/* a usable TSC has a frequency ft_conv_init accepted */
	Assert(ft_conv.mult != 0);
	/* not in the postmaster (its start-up line asks): children inherit it */
	if (ft_clock_setting == FT_SETTING_AUTO && IsUnderPostmaster)
		ft_auto_used_tsc = true;
	return FT_CHOICE_TSC;
}

/*
 * This backend gives the TSC up for good, whatever fasttime.clock_source
 * says; why (a phrase) is logged once at LOG, kept for fasttime_status()
 * and EXPLAIN, and handed to the parallel workers, which never call this.
 */
void
ft_clock_fall_back(const char *why)
{
	if (ft_fallback_reason[0] != '\0')
		return;
	Assert(!IsParallelWorker());
	snprintf(ft_fallback_reason, sizeof(ft_fallback_reason),
			 "this backend fell back to clock_gettime for the rest of its life: %s",
			 why);
	ft_clock_fell_back = true;
	ereport(LOG,
			(errmsg("this backend times plan nodes with clock_gettime from now on, whatever fasttime.clock_source says"),
			 errdetail("%s", ft_sentence(why)),
			 errhint("Node times already shown stay as measured; new sessions use the %s again. If its disagreement with clock_gettime persists (a virtual machine that was live-migrated, for instance), set fasttime.clock_source = clock_gettime, or restart the server so that its frequency is measured again.",
					 ft_counter_name(&ft_facts)),
			 errhidestmt(true)));
	ft_publish_clock_check();
}

/* Why this process fell back to clock_gettime for good, or NULL. */
const char *
ft_clock_fallback_reason(void)
{
	return ft_fallback_reason[0] != '\0' ? ft_fallback_reason : NULL;
}

/*
 * A query's clock check found the clocks disagreeing: the parallel workers
 * are to know, so as to report theirs to the server log only.
 */
void
ft_clock_disagreed(void)
{
	if (IsParallelWorker() || InitializingParallelWorker)
		return;
	ft_backend_disagreed = true;
	ft_publish_clock_check();
}

/* Has this backend (a worker's leader) reported a disagreement already? */
bool
ft_clock_backend_disagreed(void)
{
	return ft_backend_disagreed;
}

/*
 * Set one of the hidden settings parallel workers adopt, as an override
 * that no rollback or RESET undoes; only fasttime may set them.
 */
static void
publish_setting(const char *name, const char *value)
{
	ft_publishing_facts = true;
	PG_TRY();
	{
		SetConfigOption(name, value, PGC_SUSET, PGC_S_OVERRIDE);
	}
	PG_FINALLY();
	{
		ft_publishing_facts = false;
	}
	PG_END_TRY();
}

/*
 * Put what the parallel workers must know of this backend's clock checks
 * (it fell back, or it reported a disagreement) into
 * fasttime.leader_clock_check.  Where no setting may be changed now, the
 * next query's start does it.
 */
void
ft_publish_clock_check(void)
{
	char		buf[sizeof(ft_fallback_reason) + sizeof(FT_CHECK_FELL_BACK)];
	const char *current = ft_leader_clock_check ? ft_leader_clock_check : "";

	if (ft_fallback_reason[0] != '\0')
		snprintf(buf, sizeof(buf), "%s%s", FT_CHECK_FELL_BACK, ft_fallback_reason);
	else if (ft_backend_disagreed)
		strlcpy(buf, FT_CHECK_DISAGREED, sizeof(buf));
	else
		buf[0] = '\0';
	if (strcmp(current, buf) == 0)
		return;
	if (!IsUnderPostmaster || IsParallelWorker() || InitializingParallelWorker ||
		IsInParallelMode() || !IsTransactionState())
		return;

	publish_setting("fasttime.leader_clock_check", buf);
}

/*
 * A parallel worker takes over what its leader published of its clock
 * checks; a value this build does not know is ignored.
 */
void
ft_adopt_leader_clock_check(const char *value)
{
	size_t		prefix = strlen(FT_CHECK_FELL_BACK);

	if (value == NULL)
		return;
	if (strncmp(value, FT_CHECK_FELL_BACK, prefix) == 0)
	{
		ft_backend_disagreed = true;
		/* the leader's reason, as it reads there */
		strlcpy(ft_fallback_reason, value + prefix, sizeof(ft_fallback_reason));
		ft_clock_fell_back = ft_fallback_reason[0] != '\0';
	}
	else if (strcmp(value, FT_CHECK_DISAGREED) == 0)
		ft_backend_disagreed = true;
}

/*
 * Make this backend's facts (and any clock check not yet published) part
 * of its GUC state for its parallel workers; cheap when done already.
 */
void
ft_publish_facts(void)
{
	char		buf[FT_FACTS_STRLEN];

	if (unlikely(ft_backend_disagreed))
		ft_publish_clock_check();

	/* already published: the common case, tested first */
	if (ft_leader_facts != NULL && ft_leader_facts[0] != '\0')
		return;
	if (!ft_facts.detected || IsParallelWorker() || IsInParallelMode())
		return;

	ft_facts_serialize(&ft_facts, buf, sizeof(buf));
#ifdef FASTTIME_FAULT_INJECTION
	if (ft_facts_faults() && ft_facts_faults()->mangle_published)
		ft_facts_faults()->mangle_published(buf, sizeof(buf));
#endif
	publish_setting("fasttime.leader_facts", buf);
}


/*
 * A parallel worker adopts the facts its leader published.  False when
 * they cannot be parsed (another build's: clock_facts.c); facts it has
 * are then kept, or else it times with clock_gettime.  Either way the
 * query goes on.
 */
bool
ft_adopt_leader_facts(const char *serialized)
{
	FtClockFacts tmp;

	if (!ft_facts_parse(serialized, &tmp))
	{
		if (!ft_facts.detected)
			ft_facts_not_received("this parallel worker could not read its leader's clock facts: they come from another build of fasttime");
		return false;
	}
	ft_facts = tmp;
	ft_facts_changed();
	/* the leader's view of the kernel may be older than a second */
	ft_kernel_checked_ns = 0;
	return true;
}

/*
 * A reason (a phrase, as EXPLAIN prints it) as a sentence for errdetail:
 * first letter capitalized, a period at the end.
 */
char *
ft_sentence(const char *text)
{
	size_t		len = strlen(text);
	char	   *s = palloc(len + 2);

	memcpy(s, text, len + 1);
	if (len > 0 && s[0] >= 'a' && s[0] <= 'z')
		s[0] = s[0] - 'a' + 'A';
	if (len == 0 || s[len - 1] != '.')
	{
		s[len] = '.';
		s[len + 1] = '\0';
	}
	return s;
}
