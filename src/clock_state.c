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

#include "clock_state.h"

/* serialized facts: tag, size, two hex digits a byte */
#define FT_FACTS_STRLEN (sizeof(FtClockFacts) * 2 + 32)

int			ft_clock_setting = FT_SETTING_AUTO;
char	   *ft_leader_facts = NULL;
bool		ft_publishing_facts = false;
FtTickConv	ft_conv;

static FtClockFacts ft_facts;
static FtDecision ft_decisions[4];
static bool ft_decided[4];

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
 * A parallel worker adopts the facts its leader published.  Returns false,
 * changing nothing, when they cannot be parsed.
 */
bool
ft_adopt_leader_facts(const char *serialized)
{
	FtClockFacts tmp;

	if (!ft_facts_parse(serialized, &tmp))
		return false;
	ft_facts = tmp;
	ft_facts_changed();
	return true;
}
