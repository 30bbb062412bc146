/*-------------------------------------------------------------------------
 *
 * clock_decide.c
 *	  The clock source decision: facts in, choice and reason out.
 *
 * Pure, so unit tests exercise every branch with made-up facts.  The
 * reasons name the condition that decided, and what to do about it.
 *
 * src/clock_decide.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <string.h>

#include "clock_decide.h"
#include "ticks.h"

/* The counter as messages name it (from the facts, for the unit tests). */
const char *
ft_counter_name(const FtClockFacts *facts)
{
	return facts->is_aarch64 ? "arch counter (CNTVCT_EL0)" : "TSC";
}

/* The kernel clocksource that reads the same counter. */
const char *
ft_counter_clocksource(const FtClockFacts *facts)
{
	return facts->is_aarch64 ? "arch_sys_counter" : "tsc";
}

/*
 * Is the counter usable for timing at all (the bar of "tsc" and
 * "try_tsc")?  It must exist, be invariant, and have a frequency we know
 * and convert exactly: a wrong time is worse than a slow one.  The
 * kernel's opinion is left to auto: a user asking for the TSC may know
 * better than a kernel booted with tsc=unstable.
 */
bool
ft_tsc_usable(const FtClockFacts *facts, char *why, size_t whylen)
{
	FtTickConv	conv;
	const char *cn = ft_counter_name(facts);
	double		min_hz = facts->is_aarch64 ? 1e6 : 6e8;

	if (min_hz < FT_CONV_MIN_HZ)
		min_hz = FT_CONV_MIN_HZ;

	if (!facts->is_x86_64 && !facts->is_aarch64)
		snprintf(why, whylen, "the TSC is only supported on x86-64 CPUs");
	else if (facts->is_aarch64 && !facts->has_tsc)
		snprintf(why, whylen,
				 "the arch counter (CNTVCT_EL0) is not available to this process");
	else if (facts->is_aarch64 && !facts->invariant_tsc)
		snprintf(why, whylen,
				 "the arch counter (CNTVCT_EL0) is not reported as invariant (constant rate in every power state), so its rate may change");
	else if (!facts->has_tsc)
		snprintf(why, whylen, facts->cpuid_tsc ?
				 "the kernel does not list a time-stamp counter among the CPU's flags (CPUID leaf 1 EDX bit 4 is set, but the kernel's view wins)" :
				 "the CPU has no time-stamp counter (CPUID leaf 1 EDX bit 4 is clear)");
	else if (!facts->invariant_tsc)
		snprintf(why, whylen, facts->cpuid_invariant_tsc ?
				 "the kernel does not list the TSC as invariant (its CPU flags lack \"constant_tsc\" or \"nonstop_tsc\" although CPUID 0x80000007 EDX bit 8 is set), so its rate may change with power states" :
				 "the CPU does not report an invariant TSC (CPUID 0x80000007 EDX bit 8 is clear), so its rate may change with power states");
	else if (!facts->calibration_ok)
		snprintf(why, whylen,
				 "the %s frequency could not be calibrated against CLOCK_MONOTONIC_RAW: %s",
				 cn,
				 facts->calibration_note[0] ? facts->calibration_note : "no reason recorded");
	else if (!(facts->tsc_hz > 0))
		snprintf(why, whylen, "the %s frequency is unknown", cn);
	else if (!(facts->tsc_hz >= min_hz) || !ft_conv_init(&conv, facts->tsc_hz))
		snprintf(why, whylen,
				 "a %s frequency of %.0f kHz is outside what fasttime converts to nanoseconds exactly (%.0f MHz to %.0f GHz)",
				 cn, facts->tsc_hz / 1000.0, min_hz / 1e6, FT_CONV_MAX_HZ / 1e9);
	else if (facts->is_aarch64)
	{
		/* the resolution matters here: 1 to 50 ns a tick */
		snprintf(why, whylen, "arch counter (CNTVCT_EL0) at %.0f kHz (%s), %.1f ns a tick",
				 facts->tsc_hz / 1000.0,
				 ft_freq_origin_name(facts->tsc_hz_origin),
				 1e9 / facts->tsc_hz);
		return true;
	}
	else
	{
		snprintf(why, whylen, "invariant TSC at %.0f kHz (%s)",
				 facts->tsc_hz / 1000.0,
				 ft_freq_origin_name(facts->tsc_hz_origin));
		return true;
	}
	return false;
}

/*
 * Decide which clock times plan nodes.
 *
 *	clock_gettime: always the stock clock.
 *	tsc:		   the counter if usable; otherwise refused (the caller errors).
 *	try_tsc:	   the counter if usable; otherwise clock_gettime, saying why.
 *	auto:		   the counter only if usable, the kernel's own clocksource
 *				   (so it passed the kernel's checks), and a read clearly
 *				   cheaper than clock_gettime (a trapping TSC saves nothing).
 */
void
ft_decide(const FtClockFacts *facts, FtClockSetting setting, FtDecision *out)
{
	char		why[256];
	char		kernel_note[160] = "";
	bool		usable;
	bool		arm = facts->is_aarch64;
	const char *cn = ft_counter_name(facts);
	const char *ccs = ft_counter_clocksource(facts);

	memset(out, 0, sizeof(*out));
	out->choice = FT_CHOICE_CLOCK_GETTIME;

	if (setting == FT_SETTING_CLOCK_GETTIME)
	{
		snprintf(out->reason, sizeof(out->reason),
				 "fasttime.clock_source is clock_gettime, the clock stock PostgreSQL reads");
		return;
	}

	usable = ft_tsc_usable(facts, why, sizeof(why));

	/* tsc and try_tsc ignore the kernel's choice, but say so */
	if (facts->kernel_clocksource[0] != '\0' &&
		strcmp(facts->kernel_clocksource, ccs) != 0)
		snprintf(kernel_note, sizeof(kernel_note),
				 "; the kernel itself uses clocksource \"%.64s\", not %s",
				 facts->kernel_clocksource,
				 arm ? "the architected counter" : "the TSC");

	switch (setting)
	{
		case FT_SETTING_TSC:
			if (usable)
			{
				out->choice = FT_CHOICE_TSC;
				snprintf(out->reason, sizeof(out->reason),
						 "fasttime.clock_source is tsc: %s%s", why, kernel_note);
			}
			else
			{
				out->refused = true;
				snprintf(out->reason, sizeof(out->reason),
						 "the %s is not usable: %s", cn, why);
			}
			return;

		case FT_SETTING_TRY_TSC:
			if (usable)
			{
				out->choice = FT_CHOICE_TSC;
				snprintf(out->reason, sizeof(out->reason),
						 "fasttime.clock_source is try_tsc: %s%s", why, kernel_note);
			}
			else
				snprintf(out->reason, sizeof(out->reason),
						 "try_tsc fell back to clock_gettime because the %s is not usable: %s",
						 cn, why);
			return;

		case FT_SETTING_AUTO:
			if (!usable)
			{
				snprintf(out->reason, sizeof(out->reason),
						 "auto chose clock_gettime because the %s is not usable: %s",
						 cn, why);
				return;
			}
			if (facts->kernel_clocksource[0] == '\0')
			{
				snprintf(out->reason, sizeof(out->reason),
						 "auto chose clock_gettime because the kernel's current clocksource could not be read; set fasttime.clock_source = tsc to use the %s anyway",
						 cn);
				return;
			}
			if (strcmp(facts->kernel_clocksource, ccs) != 0)
			{
				if (arm)
					snprintf(out->reason, sizeof(out->reason),
							 "auto chose clock_gettime because the kernel clocksource is \"%s\", not the architected counter (\"arch_sys_counter\")%s; set fasttime.clock_source = tsc to use the arch counter (CNTVCT_EL0) anyway",
							 facts->kernel_clocksource,
							 !ft_list_has_word(facts->kernel_available, ccs) ?
							 ", which the kernel does not offer" : "");
				else
					snprintf(out->reason, sizeof(out->reason),
							 "auto chose clock_gettime because the kernel uses clocksource \"%s\", not \"tsc\"%s; set fasttime.clock_source = tsc to use the TSC anyway",
							 facts->kernel_clocksource,
							 !ft_list_has_word(facts->kernel_available, "tsc") ?
							 " and has rejected the TSC (it is not among the available clocksources)" : "");
				return;
			}
			if (!(facts->ns_per_read_tsc > 0 && facts->ns_per_read_clock_gettime > 0))
			{
				snprintf(out->reason, sizeof(out->reason),
						 "auto chose clock_gettime because the cost of a %s read was not measured",
						 arm ? "CNTVCT_EL0" : "TSC");
				return;
			}
			if (facts->ns_per_read_tsc >
				FT_AUTO_MAX_COST_RATIO * facts->ns_per_read_clock_gettime)
			{
				snprintf(out->reason, sizeof(out->reason),
						 "auto chose clock_gettime because a %s read (%.1f ns) is not clearly cheaper than clock_gettime (%.1f ns); %s",
						 arm ? "CNTVCT_EL0" : "TSC",
						 facts->ns_per_read_tsc,
						 facts->ns_per_read_clock_gettime,
						 arm ? "the counter read may be trapping to the kernel (an erratum workaround) or a hypervisor" :
						 "the TSC may be trapping to a hypervisor");
				return;
			}
			out->choice = FT_CHOICE_TSC;

			/*
			 * The plain read decides (a trapping counter shows there), but
			 * exact timing pays an ordered read by default: quote both, so
			 * the figure is not read as what a node's call costs.  (The
			 * ordered figure is RDTSCP's where the CPU has it, a read of the
			 * same kind as the wrappers' LFENCE;RDTSC.)
			 */
			if (facts->ns_per_read_tsc_ordered > 0)
				snprintf(out->reason, sizeof(out->reason),
						 "auto chose the %s: %s, the kernel clocksource is %s, and a read costs %.1f ns (an ordered read %.1f ns) versus %.1f ns for clock_gettime",
						 cn, why, ccs, facts->ns_per_read_tsc,
						 facts->ns_per_read_tsc_ordered,
						 facts->ns_per_read_clock_gettime);
			else
				snprintf(out->reason, sizeof(out->reason),
						 "auto chose the %s: %s, the kernel clocksource is %s, and a read costs %.1f ns versus %.1f ns for clock_gettime",
						 cn, why, ccs, facts->ns_per_read_tsc,
						 facts->ns_per_read_clock_gettime);
			return;

		case FT_SETTING_CLOCK_GETTIME:
			break;				/* handled above */
	}
}

/* Name of a setting, as spelled in the GUC. */
const char *
ft_setting_name(FtClockSetting setting)
{
	switch (setting)
	{
		case FT_SETTING_AUTO:
			return "auto";
		case FT_SETTING_TSC:
			return "tsc";
		case FT_SETTING_TRY_TSC:
			return "try_tsc";
		case FT_SETTING_CLOCK_GETTIME:
			return "clock_gettime";
	}
	return "unknown";
}

/* Name of a choice, as shown by fasttime.clock_source_status. */
const char *
ft_choice_name(FtClockChoice choice)
{
	return choice == FT_CHOICE_TSC ? "tsc" : "clock_gettime";
}
