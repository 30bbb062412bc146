/*-------------------------------------------------------------------------
 *
 * clock_state.c
 *	  This process's view of the clocks: the facts, the decision for each
 *	  setting, and the tick conversion the node wrappers use.
 *
 * The facts about the machine's clocks are gathered once per process tree:
 * in the postmaster when fasttime is in shared_preload_libraries (every
 * backend and worker inherits them through fork), otherwise on first need
 * in each backend.  A parallel worker never measures: it adopts its
 * leader's facts, which travel in the hidden setting fasttime.leader_facts
 * along with the rest of the leader's GUC state.
 *
 * The kernel's verdict on the TSC can change while the server runs: its
 * watchdog may mark the TSC unstable and switch to another clocksource.
 * The decisions are therefore not final: at most once a second, when a
 * decision is asked for, the kernel's current clocksource is read again,
 * and a change makes every decision be taken afresh (auto then stops using
 * the TSC as soon as the kernel does).
 *
 * A backend whose TSC keeps disagreeing with clock_gettime over its
 * queries (node_timing.c compares them) gives the TSC up for the rest of
 * its life, whatever fasttime.clock_source says: ft_clock_fall_back.  Its
 * parallel workers learn that, and whether it has seen a disagreement at
 * all, from the hidden setting fasttime.leader_clock_check, as they learn
 * its facts.
 *
 * The settings file (fasttime.c) defines the GUCs over the variables
 * declared here; nothing here depends on it.
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

/*
 * Why this process times plan nodes with clock_gettime whatever the
 * setting (ft_clock_fall_back); empty while it does not.
 */
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

/*
 * A parallel worker without its leader's facts: no TSC (so its nodes are
 * timed with clock_gettime, correct and merely not cheaper), and a note
 * saying why, shown by fasttime_status().
 */
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

/*
 * Whether this process has its facts already, so that asking for them
 * costs nothing: the check of fasttime.clock_source must not calibrate
 * where it runs on every call of a function.
 */
bool
ft_facts_detected(void)
{
	return ft_facts.detected;
}

/*
 * Read the kernel's current clocksource again if a second has passed
 * since the last read, and take every decision afresh if it changed.
 * Called whenever a decision is asked for, which is at the start of each
 * query that times its nodes (and by fasttime_status() and SHOW): the
 * clock check is a vDSO read of CLOCK_MONOTONIC_COARSE, a few ns; the
 * sysfs read behind it a few microseconds, once a second at most.
 *
 * A clocksource that cannot be read this time keeps the last known value:
 * a transient failure (out of file descriptors) must not flip the choice
 * back and forth.  The change is logged once, at LOG, by a process in
 * which auto had timed queries with the TSC and now stops (or starts
 * again); elsewhere (a new backend, a parallel worker whose leader's facts
 * are older) at DEBUG1, so that the server log is not flooded.
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

/*
 * The decision for a setting, computed once per set of facts, without
 * looking at the kernel again.
 */
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
 * A decision as it stands next to the server's own clock (PostgreSQL 19
 * on, which can time with the TSC itself: timing_clock_source).  auto
 * follows the server's resolved choice: it times plan nodes with the TSC
 * only where the server's TSC clock is in effect and fasttime's own facts
 * accept the TSC, and with clock_gettime otherwise.  tsc and try_tsc use
 * fasttime's TSC even where the server does not (no RDTSCP, a kvm-clock
 * machine), and then write nanoseconds.  The reason says which unit plan
 * node times are written in.  Asked at the start of every query that
 * times its nodes, so the answer is kept until the decisions are taken
 * afresh or the server's setting or its TSC clock changes (any SET can
 * change them): the GUC lookup and the formatting of the reason cost
 * about 150 ns a query, more than the rest of fasttime's set-up of a
 * one-row lookup.  Before 19 the decision is returned as it is.
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

/*
 * The decision for a setting, after looking at the kernel's clocksource
 * again if a second has passed.
 */
const FtDecision *
ft_get_decision(FtClockSetting setting)
{
	const FtClockFacts *facts = ft_get_facts();

	ft_recheck_kernel_clocksource();
	Assert(setting >= 0 && setting < lengthof(ft_decisions));
	if (!ft_decided[setting])
	{
		ft_decide(facts, setting, &ft_decisions[setting]);
		ft_decided[setting] = true;
	}
	return ft_follow_core(setting, &ft_decisions[setting]);
}

/*
 * The clock plan nodes are timed with right now.  Asking measures the
 * machine the first time (unless the setting is clock_gettime, which needs
 * no facts): the executor asks only for queries that time their nodes.
 * A process that fell back (ft_clock_fall_back) answers clock_gettime
 * without looking at anything else, and makes sure its parallel workers
 * will know (it may have fallen back where no setting could be changed).
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
 * This backend gives the TSC up for good: from now on plan nodes are
 * timed with clock_gettime, whatever fasttime.clock_source says, and
 * fasttime_status(), SHOW fasttime.clock_source_status and EXPLAIN
 * (CLOCK_SOURCE) say why.  Nothing already measured changes.  It is
 * logged once, at LOG (it is the server's business, not the client's),
 * and handed to the parallel workers; a worker never calls this: it falls
 * back only because its leader did (ft_adopt_leader_clock_check),
 * silently.  The first reason stays.  why is a phrase, as the decisions'
 * reasons are.
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

/*
 * Why this process fell back to clock_gettime for good, or NULL if it did
 * not: for fasttime_status() and EXPLAIN (CLOCK_SOURCE).
 */
const char *
ft_clock_fallback_reason(void)
{
	return ft_fallback_reason[0] != '\0' ? ft_fallback_reason : NULL;
}

/*
 * The clock check of a query of this backend found the clocks disagreeing
 * (node_timing.c): its parallel workers are to know, so as to report
 * theirs to the server log only (ft_clock_backend_disagreed).
 */
void
ft_clock_disagreed(void)
{
	if (IsParallelWorker() || InitializingParallelWorker)
		return;
	ft_backend_disagreed = true;
	ft_publish_clock_check();
}

/*
 * Has this backend reported a disagreement of the clocks already?  In a
 * parallel worker: had its leader, when the worker started?
 */
bool
ft_clock_backend_disagreed(void)
{
	return ft_backend_disagreed;
}

/*
 * Put what this backend's parallel workers must know of its clock checks
 * into fasttime.leader_clock_check, which travels to them with the rest of
 * its GUC state: whether it fell back to clock_gettime (then they time
 * their nodes with clock_gettime too, or the fallback would stop at the
 * Gather), or else whether it has reported a disagreement (then a
 * worker's is no news to the client).  Set as an override, which makes it
 * the setting's reset value and outlives a rollback of the transaction
 * (a user can neither set nor reset it away).  Called when that changes;
 * where no setting may be changed then (a query nested in a parallel
 * query, say), it is done when the next query starts.  Cheap when the
 * value is in place.
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

	ft_publishing_facts = true;
	PG_TRY();
	{
		SetConfigOption("fasttime.leader_clock_check", buf,
						PGC_SUSET, PGC_S_OVERRIDE);
	}
	PG_FINALLY();
	{
		ft_publishing_facts = false;
	}
	PG_END_TRY();
}

/*
 * A parallel worker takes over what its leader published of its clock
 * checks (ft_publish_clock_check).  A value this build does not know is
 * ignored: the worker then reports and times as a fresh backend would.
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
 * Make this backend's facts part of its GUC state, so parallel workers
 * started from it can adopt them.  Cheap when already done; the value can
 * be lost to a transaction rollback, in which case it is simply set again
 * before the next timed query.  What its workers must know of its clock
 * checks, if it could not be published when it changed, is published
 * here too.
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
	ft_publishing_facts = true;
	PG_TRY();
	{
		SetConfigOption("fasttime.leader_facts", buf,
						PGC_SUSET, PGC_S_OVERRIDE);
	}
	PG_FINALLY();
	{
		ft_publishing_facts = false;
	}
	PG_END_TRY();
}


/*
 * A parallel worker adopts the facts its leader published.  Returns false
 * when they cannot be parsed (malformed, or written by a build of fasttime
 * with another layout of the facts: a worker loads fasttime.so from disk,
 * which an upgrade may have replaced since its leader loaded it).  Facts
 * this process already has (inherited from a preloading postmaster) are
 * then kept; otherwise the worker has none, and times its nodes with
 * clock_gettime.  Either way the query goes on.
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
 * A message text as a sentence for errdetail: first letter capitalized,
 * a period at the end.  The decisions' reasons are phrases (they also
 * follow "Timing Source: clock_gettime (" in EXPLAIN); PostgreSQL's
 * message style wants the DETAIL as full sentences.
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
