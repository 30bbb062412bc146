/*
 * test_clock.c - standalone unit tests for fasttime's clock logic:
 *
 *	1. the decision (ft_tsc_usable, ft_decide) and the choice of frequency
 *	   (ft_choose_frequency), fed made-up facts;
 *	2. tick -> ns conversion (ft_conv_init, ft_ticks_to_ns) against a
 *	   long double reference;
 *	3. ft_facts_serialize / ft_facts_parse;
 *	4. one real ft_detect_clock_facts() run, checking invariants only.
 *
 * Built from src/clock_decide.c, src/clock_detect.c and src/clock_facts.c
 * as a normal build compiles them, no server needed: see
 * test/unit/Makefile.
 *
 * test/unit/test_clock.c
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock_decide.h"
#include "clock_detect.h"
#include "clock_facts.h"
#include "ticks.h"
#include "tap.h"

/* test_ticks_noint128.c: the conversion as built without __int128 */
extern uint64_t ft_test_ticks_to_ns_noint128(uint64_t mult, int64_t delta);
extern int ft_test_noint128_active(void);

static const FtClockSetting all_settings[] = {
	FT_SETTING_AUTO, FT_SETTING_TSC, FT_SETTING_TRY_TSC, FT_SETTING_CLOCK_GETTIME
};

/*
 * A healthy bare-metal machine: invariant TSC, CPUID 0x15 exact, kernel
 * on tsc, a TSC read much cheaper than clock_gettime.
 */
static void
good_facts(FtClockFacts *f)
{
	memset(f, 0, sizeof(*f));
	f->detected = true;
	f->is_x86_64 = true;
	strcpy(f->cpu_vendor, "GenuineIntel");
	f->has_tsc = true;
	f->invariant_tsc = true;
	f->rdtscp = true;
	f->lfence_serializing = true;
	f->cpuid_15h_hz = 2596138000.0;
	f->calibration_ok = true;
	f->calibrated_hz = 2596138000.0 * (1 + 3e-6);	/* 3 ppm off */
	f->calibration_spread_ppm = 2.0;
	ft_choose_frequency(f);
	strcpy(f->kernel_clocksource, "tsc");
	strcpy(f->kernel_available, "tsc hpet acpi_pm");
	f->ns_per_read_clock_gettime = 20.0;
	f->ns_per_read_tsc = 6.5;
	f->ns_per_read_tsc_ordered = 12.0;
}

/*
 * A healthy aarch64 server: the arch counter at 1 GHz (Armv8.6 fixes
 * CNTFRQ_EL0 at 1 GHz; Graviton3/4, Neoverse V2), confirmed by
 * calibration, the kernel on arch_sys_counter, reads far cheaper than
 * clock_gettime.  1 GHz converts on any build, so this runs everywhere.
 */
static void
arm_good_facts(FtClockFacts *f)
{
	memset(f, 0, sizeof(*f));
	f->detected = true;
	f->is_aarch64 = true;
	strcpy(f->cpu_vendor, "implementer 41");
	f->cpuid_tsc = true;
	f->cpuid_invariant_tsc = true;
	ft_parse_cpu_flags(NULL, f);
	ft_merge_cpu_flags(f);
	f->cntfrq_hz = 1e9;
	f->calibration_ok = true;
	f->calibrated_hz = 1e9 * (1 - 2e-6);	/* 2 ppm off */
	f->calibration_spread_ppm = 1.5;
	ft_choose_frequency(f);
	strcpy(f->kernel_clocksource, "arch_sys_counter");
	strcpy(f->kernel_available, "arch_sys_counter");
	f->ns_per_read_clock_gettime = 25.0;
	f->ns_per_read_tsc = 5.0;
	f->ns_per_read_tsc_ordered = 9.0;
}

static bool
has(const char *s, const char *sub)
{
	return strstr(s, sub) != NULL;
}

/*
 * Check one decision: choice, refused, and that the reason names what
 * decided (needle; NULL = no check).
 */
static void
check_decision(const char *label, const FtClockFacts *f, FtClockSetting s,
			   FtClockChoice want, bool want_refused, const char *needle)
{
	FtDecision	d;

	memset(&d, 0x5a, sizeof(d));	/* ft_decide must set every field */
	ft_decide(f, s, &d);
	ok(d.choice == want && d.refused == want_refused &&
	   memchr(d.reason, '\0', sizeof(d.reason)) != NULL &&
	   d.reason[0] != '\0' &&
	   (needle == NULL || has(d.reason, needle)),
	   "%s, %s: %s%s%s", label, ft_setting_name(s), ft_choice_name(want),
	   want_refused ? " (refused)" : "",
	   needle ? ", reason names the cause" : "");
	if (d.choice != want || d.refused != want_refused ||
		(needle && !has(d.reason, needle)))
		diag("   got %s%s, reason: %s (wanted \"%s\")",
			 ft_choice_name(d.choice), d.refused ? " refused" : "",
			 d.reason, needle ? needle : "");
}

/* tsc/try_tsc/auto all refuse the TSC for a reason naming needle */
static void
check_unusable(const char *label, const FtClockFacts *f, const char *needle)
{
	char		why[256];

	ok(!ft_tsc_usable(f, why, sizeof(why)) && has(why, needle),
	   "%s: ft_tsc_usable is false and says \"%s\"", label, needle);
	check_decision(label, f, FT_SETTING_AUTO, FT_CHOICE_CLOCK_GETTIME, false, needle);
	check_decision(label, f, FT_SETTING_TSC, FT_CHOICE_CLOCK_GETTIME, true, needle);
	check_decision(label, f, FT_SETTING_TRY_TSC, FT_CHOICE_CLOCK_GETTIME, false, needle);
	check_decision(label, f, FT_SETTING_CLOCK_GETTIME, FT_CHOICE_CLOCK_GETTIME, false,
				   "clock_gettime");
}

static void
test_decision(void)
{
	FtClockFacts f;
	FtDecision	d;
	char		why[256];

	diag("--- decision: ft_tsc_usable / ft_decide");

	/* healthy machine */
	good_facts(&f);
	ok(ft_tsc_usable(&f, why, sizeof(why)) && has(why, "invariant TSC"),
	   "healthy: TSC usable (%s)", why);
	check_decision("healthy", &f, FT_SETTING_AUTO, FT_CHOICE_TSC, false, "auto chose the TSC");
	/* both costs quoted: the plain read decides, nodes pay the ordered one */
	check_decision("healthy", &f, FT_SETTING_AUTO, FT_CHOICE_TSC, false,
				   "(an ordered read 12.0 ns)");
	f.ns_per_read_tsc_ordered = 0;
	check_decision("healthy, ordered read unmeasured", &f, FT_SETTING_AUTO,
				   FT_CHOICE_TSC, false, "ns versus");
	ft_decide(&f, FT_SETTING_AUTO, &d);
	ok(!has(d.reason, "ordered"),
	   "healthy, ordered read unmeasured: no ordered figure quoted (%s)", d.reason);
	good_facts(&f);
	check_decision("healthy", &f, FT_SETTING_TSC, FT_CHOICE_TSC, false, "cpuid_15h");
	check_decision("healthy", &f, FT_SETTING_TRY_TSC, FT_CHOICE_TSC, false, "try_tsc");
	check_decision("healthy", &f, FT_SETTING_CLOCK_GETTIME, FT_CHOICE_CLOCK_GETTIME, false,
				   "clock_gettime");

	/* clock_gettime never looks at the facts, even undetected ones */
	memset(&f, 0, sizeof(f));
	check_decision("no facts at all", &f, FT_SETTING_CLOCK_GETTIME,
				   FT_CHOICE_CLOCK_GETTIME, false, "stock PostgreSQL");

	/* no invariant TSC */
	good_facts(&f);
	f.invariant_tsc = false;
	check_unusable("no invariant TSC", &f, "invariant");
	ft_decide(&f, FT_SETTING_TRY_TSC, &d);
	ok(has(d.reason, "fell back"), "no invariant TSC: try_tsc says it fell back");
	ft_decide(&f, FT_SETTING_TSC, &d);
	ok(has(d.reason, "0x80000007"), "no invariant TSC: reason names the CPUID bit");

	/* a frequency the conversion cannot represent exactly */
	good_facts(&f);
	f.tsc_hz = 5e8;
	check_unusable("TSC at 500 MHz", &f, "outside what fasttime converts");

	/* no TSC at all */
	good_facts(&f);
	f.has_tsc = false;
	check_unusable("no TSC", &f, "no time-stamp counter");

	/* not x86 */
	good_facts(&f);
	f.is_x86_64 = false;
	check_unusable("non-x86", &f, "x86-64");

	/* no frequency anywhere and calibration not converging */
	good_facts(&f);
	f.cpuid_15h_hz = f.cpuid_16h_hz = f.hypervisor_hz = 0;
	f.calibration_ok = false;
	f.calibrated_hz = 0;
	strcpy(f.calibration_note,
		   "10 windows in 100 ms did not agree within 10 ppm (7 had wide brackets: the machine may be too busy)");
	ft_choose_frequency(&f);
	ok(f.tsc_hz == 0 && f.tsc_hz_origin == FT_FREQ_NONE &&
	   has(f.frequency_note, "calibration failed"),
	   "no frequency: ft_choose_frequency leaves tsc_hz unknown (%s)", f.frequency_note);
	check_unusable("no frequency", &f, "could not be calibrated");
	ft_decide(&f, FT_SETTING_TSC, &d);
	ok(has(d.reason, "too busy"), "no frequency: reason carries the calibration note");

	/* calibration failed with no note: still a reason */
	f.calibration_note[0] = '\0';
	ft_decide(&f, FT_SETTING_AUTO, &d);
	ok(has(d.reason, "no reason recorded"), "calibration failed without a note: reason still says so");

	/* calibration ok but frequency unknown (inconsistent facts) */
	good_facts(&f);
	f.tsc_hz = 0;
	check_unusable("frequency unknown", &f, "frequency is unknown");

	/* a reported frequency is reported but calibration failed: no TSC */
	good_facts(&f);
	f.calibration_ok = false;
	f.calibrated_hz = 0;
	ft_choose_frequency(&f);
	ok(f.tsc_hz == 0, "CPUID 0x15 reports a frequency but calibration failed: frequency not trusted");
	check_decision("reported but uncalibrated", &f, FT_SETTING_AUTO,
				   FT_CHOICE_CLOCK_GETTIME, false, "calibrated");

	/* kernel clocksources */
	good_facts(&f);
	strcpy(f.kernel_clocksource, "kvm-clock");
	strcpy(f.kernel_available, "kvm-clock tsc hpet acpi_pm");
	check_decision("kernel kvm-clock", &f, FT_SETTING_AUTO, FT_CHOICE_CLOCK_GETTIME, false,
				   "\"kvm-clock\"");
	ft_decide(&f, FT_SETTING_AUTO, &d);
	ok(!has(d.reason, "rejected") && has(d.reason, "set fasttime.clock_source = tsc"),
	   "kernel kvm-clock with tsc available: not called rejected, says how to override");
	check_decision("kernel kvm-clock", &f, FT_SETTING_TSC, FT_CHOICE_TSC, false,
				   "the kernel itself uses clocksource \"kvm-clock\", not the TSC");
	check_decision("kernel kvm-clock", &f, FT_SETTING_TRY_TSC, FT_CHOICE_TSC, false,
				   "the kernel itself uses clocksource \"kvm-clock\", not the TSC");

	/*
	 * The kernel's watchdog switches clocksource at run time: the same facts
	 * with only kernel_clocksource changed (what clock_state.c does when it
	 * re-reads it) turn auto away from the TSC; tsc and try_tsc stay, and
	 * say that the kernel no longer uses it.
	 */
	good_facts(&f);
	check_decision("before the kernel switches", &f, FT_SETTING_AUTO, FT_CHOICE_TSC, false, NULL);
	ft_decide(&f, FT_SETTING_TSC, &d);
	ok(!has(d.reason, "the kernel itself"), "kernel on tsc: tsc's reason does not mention the kernel");
	strcpy(f.kernel_clocksource, "hpet");
	strcpy(f.kernel_available, "hpet acpi_pm");
	check_decision("after the kernel switched to hpet", &f, FT_SETTING_AUTO,
				   FT_CHOICE_CLOCK_GETTIME, false, "rejected the TSC");
	check_decision("after the kernel switched to hpet", &f, FT_SETTING_TSC, FT_CHOICE_TSC,
				   false, "not the TSC");
	check_decision("after the kernel switched to hpet", &f, FT_SETTING_TRY_TSC, FT_CHOICE_TSC,
				   false, "not the TSC");

	good_facts(&f);
	strcpy(f.kernel_clocksource, "hpet");
	strcpy(f.kernel_available, "hpet acpi_pm");
	check_decision("kernel hpet, tsc absent", &f, FT_SETTING_AUTO, FT_CHOICE_CLOCK_GETTIME,
				   false, "\"hpet\"");
	ft_decide(&f, FT_SETTING_AUTO, &d);
	ok(has(d.reason, "rejected the TSC"), "kernel hpet, tsc absent: reason says the kernel rejected the TSC");
	check_decision("kernel hpet, tsc absent", &f, FT_SETTING_TSC, FT_CHOICE_TSC, false, NULL);
	check_decision("kernel hpet, tsc absent", &f, FT_SETTING_TRY_TSC, FT_CHOICE_TSC, false, NULL);
	check_decision("kernel hpet, tsc absent", &f, FT_SETTING_CLOCK_GETTIME,
				   FT_CHOICE_CLOCK_GETTIME, false, NULL);

	good_facts(&f);
	f.kernel_clocksource[0] = '\0';
	f.kernel_available[0] = '\0';
	check_decision("kernel clocksource unreadable", &f, FT_SETTING_AUTO,
				   FT_CHOICE_CLOCK_GETTIME, false, "could not be read");
	check_decision("kernel clocksource unreadable", &f, FT_SETTING_TSC, FT_CHOICE_TSC, false, NULL);

	/* tsc-early is what the kernel shows before it has vetted the TSC */
	good_facts(&f);
	strcpy(f.kernel_clocksource, "hpet");
	strcpy(f.kernel_available, "tsc-early hpet acpi_pm");
	ft_decide(&f, FT_SETTING_AUTO, &d);
	ok(d.choice == FT_CHOICE_CLOCK_GETTIME && has(d.reason, "rejected the TSC"),
	   "kernel hpet, only tsc-early available: reason says the kernel rejected the TSC");

	/* a trapping TSC: a read costs ~1 us */
	good_facts(&f);
	f.ns_per_read_tsc = 1000.0;
	f.ns_per_read_tsc_ordered = 1100.0;
	check_decision("trapping TSC (1 us/read)", &f, FT_SETTING_AUTO, FT_CHOICE_CLOCK_GETTIME,
				   false, "not clearly cheaper");
	ft_decide(&f, FT_SETTING_AUTO, &d);
	ok(has(d.reason, "1000.0 ns") && has(d.reason, "20.0 ns") && has(d.reason, "trapping"),
	   "trapping TSC: reason gives both costs and suggests trapping");
	check_decision("trapping TSC (1 us/read)", &f, FT_SETTING_TSC, FT_CHOICE_TSC, false, NULL);
	check_decision("trapping TSC (1 us/read)", &f, FT_SETTING_TRY_TSC, FT_CHOICE_TSC, false, NULL);
	check_decision("trapping TSC (1 us/read)", &f, FT_SETTING_CLOCK_GETTIME,
				   FT_CHOICE_CLOCK_GETTIME, false, NULL);

	/* the cost-ratio boundary */
	good_facts(&f);
	f.ns_per_read_tsc = FT_AUTO_MAX_COST_RATIO * f.ns_per_read_clock_gettime;
	check_decision("TSC read at exactly the cost ratio", &f, FT_SETTING_AUTO, FT_CHOICE_TSC,
				   false, NULL);
	f.ns_per_read_tsc *= 1.01;
	check_decision("TSC read 1% above the cost ratio", &f, FT_SETTING_AUTO,
				   FT_CHOICE_CLOCK_GETTIME, false, "not clearly cheaper");

	/* costs never measured */
	good_facts(&f);
	f.ns_per_read_tsc = 0;
	check_decision("TSC read cost unmeasured", &f, FT_SETTING_AUTO, FT_CHOICE_CLOCK_GETTIME,
				   false, "not measured");

	/* hypervisor with leaf 0x40000010 */
	good_facts(&f);
	f.hypervisor = true;
	strcpy(f.hypervisor_vendor, "VMwareVMware");
	f.cpuid_15h_hz = 0;
	f.hypervisor_hz = 2096010000.0;		/* leaf reports kHz */
	f.calibrated_hz = 2096010000.0 * (1 - 8e-6);
	ft_choose_frequency(&f);
	ok(f.tsc_hz == 2096010000.0 && f.tsc_hz_origin == FT_FREQ_HYPERVISOR &&
	   has(f.frequency_note, "0x40000010"),
	   "hypervisor leaf 0x40000010 confirmed by calibration: used (%s)", f.frequency_note);
	check_decision("hypervisor leaf", &f, FT_SETTING_AUTO, FT_CHOICE_TSC, false, "hypervisor");

	/* ... a stale hypervisor value (after migration) is not trusted */
	f.calibrated_hz = 2096010000.0 * 1.02;
	ft_choose_frequency(&f);
	ok(f.tsc_hz == f.calibrated_hz && f.tsc_hz_origin == FT_FREQ_CALIBRATION &&
	   fabs(f.disagreement_ppm - 19607.8) < 1.0 && has(f.frequency_note, "using the calibration"),
	   "hypervisor leaf 2 %% off calibration: calibration used, disagreement %.0f ppm",
	   f.disagreement_ppm);

	/* ... stale hypervisor value, but CPUID 0x15 agrees with calibration */
	f.cpuid_15h_hz = f.calibrated_hz * (1 + 1e-6);
	ft_choose_frequency(&f);
	ok(fabs(f.tsc_hz - f.calibrated_hz) / f.calibrated_hz < 20e-6,
	   "stale hypervisor value, CPUID 0x15 agrees: frequency within 20 ppm of calibration");
	ok(f.tsc_hz_origin == FT_FREQ_CPUID_15H,
	   "stale hypervisor value, CPUID 0x15 agrees: the exact CPUID 0x15 value is used (got %s)",
	   ft_freq_origin_name(f.tsc_hz_origin));

	/* CPUID 0x16 off by 5 % from calibration */
	good_facts(&f);
	f.cpuid_15h_hz = 0;
	f.calibrated_hz = 2596138000.0;
	f.cpuid_16h_hz = 2596138000.0 * 1.05;
	ft_choose_frequency(&f);
	ok(f.tsc_hz == f.calibrated_hz && f.tsc_hz_origin == FT_FREQ_CALIBRATION,
	   "CPUID 0x16 5 %% above calibration: calibration used");
	ok(fabs(f.disagreement_ppm - 50000.0) < 1.0,
	   "CPUID 0x16 5 %% above calibration: disagreement_ppm = %.1f", f.disagreement_ppm);
	ok(has(f.frequency_note, "CPUID leaf 0x16") && has(f.frequency_note, "50000 ppm") &&
	   has(f.frequency_note, "using the calibration"),
	   "CPUID 0x16 5 %% off: note names the leaf, the gap and the outcome (%s)", f.frequency_note);
	check_decision("CPUID 0x16 off 5%", &f, FT_SETTING_AUTO, FT_CHOICE_TSC, false, "calibration");

	/*
	 * A reported value is used only when calibration confirms it within
	 * 20 ppm: CPUID 0x16 is a nominal whole-MHz figure, and 53 or 720 ppm
	 * off is 53 or 720 ppm wrong on every time.
	 */
	f.cpuid_16h_hz = 2596000000.0;		/* 53 ppm below */
	ft_choose_frequency(&f);
	ok(f.tsc_hz == f.calibrated_hz && f.tsc_hz_origin == FT_FREQ_CALIBRATION &&
	   has(f.frequency_note, "53 ppm apart") && has(f.frequency_note, "using the calibration"),
	   "CPUID 0x16 53 ppm from calibration: calibration used, note says why (%s)", f.frequency_note);
	f.calibrated_hz = 2596138000.0;
	f.cpuid_16h_hz = 2596138000.0 * (1 + 720e-6);
	ft_choose_frequency(&f);
	ok(f.tsc_hz == f.calibrated_hz && f.tsc_hz_origin == FT_FREQ_CALIBRATION &&
	   fabs(f.disagreement_ppm - 720.0) < 0.5 && has(f.frequency_note, "720 ppm apart"),
	   "CPUID 0x16 720 ppm from calibration: calibration used");
	f.cpuid_16h_hz = 2596138000.0 * (1 - 19e-6);
	ft_choose_frequency(&f);
	ok(f.tsc_hz == f.cpuid_16h_hz && f.tsc_hz_origin == FT_FREQ_CPUID_16H &&
	   has(f.frequency_note, "confirmed"),
	   "CPUID 0x16 19 ppm from calibration: reported value used");
	f.cpuid_16h_hz = 2596138000.0 * (1 + 21e-6);
	ft_choose_frequency(&f);
	ok(f.tsc_hz_origin == FT_FREQ_CALIBRATION,
	   "CPUID 0x16 21 ppm from calibration: calibration used");

	/* the hypervisor's leaf: the same 20 ppm rule */
	good_facts(&f);
	f.cpuid_15h_hz = 0;
	f.calibrated_hz = 2096010000.0;
	f.hypervisor_hz = 2096010000.0 * (1 + 300e-6);
	ft_choose_frequency(&f);
	ok(f.tsc_hz_origin == FT_FREQ_CALIBRATION && has(f.frequency_note, "0x40000010") &&
	   has(f.frequency_note, "more than 20"),
	   "hypervisor leaf 300 ppm from calibration: calibration used (%s)", f.frequency_note);

	/* calibration only */
	good_facts(&f);
	f.cpuid_15h_hz = 0;
	ft_choose_frequency(&f);
	ok(f.tsc_hz == f.calibrated_hz && f.tsc_hz_origin == FT_FREQ_CALIBRATION &&
	   has(f.frequency_note, "neither"),
	   "nothing reported: calibration used and said so");

	/* names */
	ok(strcmp(ft_setting_name(FT_SETTING_TRY_TSC), "try_tsc") == 0 &&
	   strcmp(ft_setting_name(FT_SETTING_CLOCK_GETTIME), "clock_gettime") == 0 &&
	   strcmp(ft_choice_name(FT_CHOICE_TSC), "tsc") == 0 &&
	   strcmp(ft_freq_origin_name(FT_FREQ_HYPERVISOR), "hypervisor") == 0,
	   "setting, choice and origin names");

	/* the longest notes and names still give a terminated reason */
	good_facts(&f);
	memset(f.calibration_note, 'n', sizeof(f.calibration_note) - 1);
	f.calibration_note[sizeof(f.calibration_note) - 1] = '\0';
	f.calibration_ok = false;
	for (size_t i = 0; i < sizeof(all_settings) / sizeof(all_settings[0]); i++)
	{
		ft_decide(&f, all_settings[i], &d);
		ok(memchr(d.reason, '\0', sizeof(d.reason)) != NULL &&
		   (all_settings[i] == FT_SETTING_CLOCK_GETTIME || strlen(d.reason) > 100),
		   "longest calibration note, %s: reason terminated", ft_setting_name(all_settings[i]));
	}
	good_facts(&f);
	memset(f.kernel_clocksource, 'k', sizeof(f.kernel_clocksource) - 1);
	f.kernel_clocksource[sizeof(f.kernel_clocksource) - 1] = '\0';
	ft_decide(&f, FT_SETTING_AUTO, &d);
	ok(memchr(d.reason, '\0', sizeof(d.reason)) != NULL && d.choice == FT_CHOICE_CLOCK_GETTIME,
	   "longest kernel clocksource name: reason terminated");
}

/* ---------------------------------------------------------------------- */

static const double freqs[] = {
	1e9, 1.5e9, 2e9, 2.5e9, 3e9, 3.7e9, 4e9, 4.5e9, 5e9,
	2096.010e6, 2596.138e6, 2899.999e6, 3192.614e6
};

static long double
ref_ns(int64_t ticks, double hz)
{
	return (long double) ticks * 1e9L / (long double) hz;
}

/*
 * The same decision for aarch64 facts: the arch counter (CNTVCT_EL0) is
 * the counter, CNTFRQ_EL0 the reported frequency, arch_sys_counter the
 * kernel clocksource auto requires.
 */
static void
test_decision_aarch64(void)
{
	FtClockFacts f;
	FtDecision	d;
	char		why[256];

	diag("--- decision on aarch64 facts: the arch counter");

	arm_good_facts(&f);
	ok(f.has_tsc && f.invariant_tsc && !f.rdtscp &&
	   has(f.cpu_flags_note, "aarch64"),
	   "aarch64: counter present and invariant by architecture, no RDTSCP (%s)",
	   f.cpu_flags_note);
	ok(f.tsc_hz == 1e9 && f.tsc_hz_origin == FT_FREQ_CNTFRQ &&
	   strcmp(ft_freq_origin_name(f.tsc_hz_origin), "cntfrq_el0") == 0 &&
	   has(f.frequency_note, "CNTFRQ_EL0 reports 1000000 kHz, confirmed"),
	   "aarch64: CNTFRQ_EL0 confirmed by calibration is used (%s)", f.frequency_note);
	ok(ft_tsc_usable(&f, why, sizeof(why)) &&
	   has(why, "arch counter (CNTVCT_EL0) at 1000000 kHz (cntfrq_el0), 1.0 ns a tick"),
	   "aarch64: counter usable, reason names it, its origin and resolution (%s)", why);
	ok(strcmp(ft_counter_name(&f), "arch counter (CNTVCT_EL0)") == 0 &&
	   strcmp(ft_counter_clocksource(&f), "arch_sys_counter") == 0,
	   "aarch64: counter named CNTVCT_EL0, kernel clocksource arch_sys_counter");
	check_decision("aarch64 healthy", &f, FT_SETTING_AUTO, FT_CHOICE_TSC, false,
				   "auto chose the arch counter (CNTVCT_EL0)");
	check_decision("aarch64 healthy", &f, FT_SETTING_AUTO, FT_CHOICE_TSC, false,
				   "the kernel clocksource is arch_sys_counter");
	check_decision("aarch64 healthy", &f, FT_SETTING_TSC, FT_CHOICE_TSC, false,
				   "fasttime.clock_source is tsc: arch counter");
	check_decision("aarch64 healthy", &f, FT_SETTING_TRY_TSC, FT_CHOICE_TSC, false,
				   "cntfrq_el0");
	ft_decide(&f, FT_SETTING_TSC, &d);
	ok(!has(d.reason, "TSC") && !has(d.reason, "not the architected counter"),
	   "aarch64 healthy: no TSC named, no kernel note (%s)", d.reason);

	/* CNTFRQ_EL0 misprogrammed: calibration wins, the note says so */
	arm_good_facts(&f);
	f.cntfrq_hz = 1e9 * (1 + 100e-6);
	ft_choose_frequency(&f);
	ok(f.tsc_hz == f.calibrated_hz && f.tsc_hz_origin == FT_FREQ_CALIBRATION &&
	   has(f.frequency_note, "CNTFRQ_EL0 reports") &&
	   has(f.frequency_note, "using the calibration"),
	   "aarch64: CNTFRQ_EL0 102 ppm off: calibrated frequency used (%s)",
	   f.frequency_note);
	check_decision("aarch64 CNTFRQ_EL0 off", &f, FT_SETTING_AUTO, FT_CHOICE_TSC, false,
				   "(calibration)");

	/* no CNTFRQ_EL0 at all */
	arm_good_facts(&f);
	f.cntfrq_hz = 0;
	ft_choose_frequency(&f);
	ok(f.tsc_hz_origin == FT_FREQ_CALIBRATION &&
	   has(f.frequency_note, "CNTFRQ_EL0 reports no counter frequency"),
	   "aarch64: CNTFRQ_EL0 zero: calibrated (%s)", f.frequency_note);

	/*
	 * qemu-user emulation, or any kernel not on the arch counter: auto
	 * keeps clock_gettime, tsc and try_tsc use the counter and say so
	 */
	arm_good_facts(&f);
	strcpy(f.kernel_clocksource, "tsc");
	strcpy(f.kernel_available, "tsc hpet acpi_pm");
	check_decision("aarch64, kernel clocksource tsc", &f, FT_SETTING_AUTO,
				   FT_CHOICE_CLOCK_GETTIME, false,
				   "the kernel clocksource is \"tsc\", not the architected counter (\"arch_sys_counter\"), which the kernel does not offer");
	check_decision("aarch64, kernel clocksource tsc", &f, FT_SETTING_AUTO,
				   FT_CHOICE_CLOCK_GETTIME, false,
				   "set fasttime.clock_source = tsc to use the arch counter (CNTVCT_EL0) anyway");
	check_decision("aarch64, kernel clocksource tsc", &f, FT_SETTING_TSC,
				   FT_CHOICE_TSC, false,
				   "the kernel itself uses clocksource \"tsc\", not the architected counter");
	check_decision("aarch64, kernel clocksource tsc", &f, FT_SETTING_TRY_TSC,
				   FT_CHOICE_TSC, false, "not the architected counter");
	strcpy(f.kernel_available, "arch_sys_counter jiffies");
	strcpy(f.kernel_clocksource, "jiffies");
	ft_decide(&f, FT_SETTING_AUTO, &d);
	ok(d.choice == FT_CHOICE_CLOCK_GETTIME && !has(d.reason, "does not offer"),
	   "aarch64, kernel on jiffies with arch_sys_counter available: clock_gettime, not called absent (%s)",
	   d.reason);
	f.kernel_clocksource[0] = '\0';
	check_decision("aarch64, kernel clocksource unreadable", &f, FT_SETTING_AUTO,
				   FT_CHOICE_CLOCK_GETTIME, false, "to use the arch counter (CNTVCT_EL0) anyway");

	/* a trapping counter read (erratum workaround) */
	arm_good_facts(&f);
	f.ns_per_read_tsc = 400.0;
	check_decision("aarch64, trapping read", &f, FT_SETTING_AUTO,
				   FT_CHOICE_CLOCK_GETTIME, false,
				   "a CNTVCT_EL0 read (400.0 ns) is not clearly cheaper");

	/* not invariant, no counter (fault-injection facts) */
	arm_good_facts(&f);
	f.cpuid_invariant_tsc = false;
	ft_merge_cpu_flags(&f);
	check_unusable("aarch64, not invariant", &f, "invariant");
	ft_decide(&f, FT_SETTING_TSC, &d);
	ok(has(d.reason, "the arch counter (CNTVCT_EL0) is not usable: "),
	   "aarch64, not invariant: refusal names the arch counter (%s)", d.reason);
	arm_good_facts(&f);
	f.cpuid_tsc = false;
	ft_merge_cpu_flags(&f);
	check_unusable("aarch64, no counter", &f, "not available");

	/* calibration failed */
	arm_good_facts(&f);
	f.calibration_ok = false;
	strcpy(f.calibration_note, "12 windows in 160 ms did not agree within 10 ppm");
	ft_choose_frequency(&f);
	check_unusable("aarch64, calibration failed", &f,
				   "the arch counter (CNTVCT_EL0) frequency could not be calibrated");

	/*
	 * A 25 MHz counter (Ampere Altra): converted on an aarch64 build, which
	 * saturates what would overflow; an x86-64 build's conversion stops at
	 * 600 MHz, and says so
	 */
	arm_good_facts(&f);
	f.cntfrq_hz = 25e6;
	f.calibrated_hz = 25e6 * (1 + 1e-6);
	ft_choose_frequency(&f);
#if FT_HAVE_ARCH_COUNTER
	ok(ft_tsc_usable(&f, why, sizeof(why)) && has(why, "40.0 ns a tick"),
	   "aarch64 build, 25 MHz counter: usable, 40 ns a tick (%s)", why);
#else
	check_unusable("x86-64 build, 25 MHz arch counter", &f,
				   "outside what fasttime converts to nanoseconds exactly (600 MHz to 100 GHz)");
#endif
	f.tsc_hz = 5e5;
	check_unusable("aarch64, 500 kHz counter", &f, "outside what fasttime converts");

	/* the kernel's CPU flags have no say on aarch64 */
	arm_good_facts(&f);
	ft_parse_cpu_flags("fpu tsc rdtscp constant_tsc nonstop_tsc", &f);
	ft_merge_cpu_flags(&f);
	ok(!f.rdtscp && f.invariant_tsc && f.has_tsc,
	   "aarch64: x86 CPU flags (a qemu-user host's /proc/cpuinfo) change nothing");

	/* x86 facts keep their TSC wording */
	good_facts(&f);
	ok(strcmp(ft_counter_name(&f), "TSC") == 0 &&
	   strcmp(ft_counter_clocksource(&f), "tsc") == 0,
	   "x86-64: counter named TSC, kernel clocksource tsc");
}

static void
test_conversion(void)
{
	FtTickConv c;
	int64_t		ticks[40];
	int			nticks = 0;
	int			bad_ppm = 0,
				bad_abs = 0,
				bad_ppb = 0,
				npoints = 0;
	double		worst_ppm = 0;

	diag("--- tick -> ns conversion");

	for (int e = 0; e <= 9; e++)
		ticks[nticks++] = (int64_t) 1 << e;		/* small: 1..512 */
	ticks[nticks++] = 3;
	ticks[nticks++] = 1000;
	ticks[nticks++] = 123457;
	for (int e = 30; e <= 62; e += 10)
	{
		int			ee = e > 62 ? 62 : e;

		ticks[nticks++] = ((int64_t) 1 << ee) - 1;
		ticks[nticks++] = (int64_t) 1 << ee;
		ticks[nticks++] = ((int64_t) 1 << ee) + 12345;
	}
	ticks[nticks++] = ((int64_t) 1 << 62) - 1;
	ticks[nticks++] = (int64_t) 1 << 62;
	ticks[nticks++] = ((int64_t) 1 << 62) + ((int64_t) 1 << 61);
	ticks[nticks++] = INT64_MAX;

	for (size_t fi = 0; fi < sizeof(freqs) / sizeof(freqs[0]); fi++)
	{
		if (!ft_conv_init(&c, freqs[fi]))
		{
			ok(0, "ft_conv_init(%.3f MHz) accepted", freqs[fi] / 1e6);
			continue;
		}
		for (int ti = 0; ti < nticks; ti++)
		{
			uint64_t	got = ft_ticks_to_ns(&c, ticks[ti]);
			long double ref = ref_ns(ticks[ti], freqs[fi]);
			long double err = fabsl((long double) got - ref);
			double		ppm = ref > 0 ? (double) (err / ref * 1e6L) : 0;

			npoints++;
			if (ppm > worst_ppm && ref > 1e6L)
				worst_ppm = ppm;
			/* < 1 ppm, or at most 1 ns for small values */
			if (!(err <= 1.0L || ppm < 1.0))
			{
				bad_ppm++;
				diag("   %.3f MHz, %lld ticks: got %llu, want %.3Lf (%.3f ppm)",
					 freqs[fi] / 1e6, (long long) ticks[ti],
					 (unsigned long long) got, ref, ppm);
			}
			/* truncation: never more than 1 ns plus the multiplier's rounding */
			if (ref < 1e9L && err > 1.0L)
				bad_abs++;
			/* what ticks.h promises: under 1 ppb (plus the final 1 ns) */
			if (err > 1.0L + ref * 1e-9L)
				bad_ppb++;
		}
	}
	ok(bad_ppm == 0, "%d points (13 frequencies x %d tick counts up to 2^63-1): error < 1 ppm",
	   npoints, nticks);
	ok(bad_abs == 0, "values below 1 s: error <= 1 ns absolute");
	ok(bad_ppb == 0, "all points: error <= 1 ppb + 1 ns (worst above 1 ms: %.4f ppm)", worst_ppm);

	/* no overflow: monotone in ticks at the top of the range, 1-5 GHz */
	{
		int			nonmono = 0;

		for (size_t fi = 0; fi < sizeof(freqs) / sizeof(freqs[0]); fi++)
		{
			uint64_t	prev = 0;

			ft_conv_init(&c, freqs[fi]);
			for (int e = 0; e <= 62; e++)
			{
				uint64_t	v = ft_ticks_to_ns(&c, (int64_t) 1 << e);

				if (v < prev)
					nonmono++;
				prev = v;
			}
			if (ft_ticks_to_ns(&c, INT64_MAX) < prev)
				nonmono++;
		}
		ok(nonmono == 0, "no overflow: ns grows with ticks up to 2^63-1 at 1-5 GHz");
	}

	/* exact small cases */
	ft_conv_init(&c, 1e9);
	ok(ft_ticks_to_ns(&c, 1) == 1 && ft_ticks_to_ns(&c, 1000000007) == 1000000007,
	   "1 GHz: 1 tick = 1 ns, 1000000007 ticks = 1000000007 ns");
	ft_conv_init(&c, 2596.138e6);
	ok(ft_ticks_to_ns(&c, 2596138000LL) >= 999999999 &&
	   ft_ticks_to_ns(&c, 2596138000LL) <= 1000000000,
	   "2596.138 MHz: one second of ticks is 1 s (%llu ns)",
	   (unsigned long long) ft_ticks_to_ns(&c, 2596138000LL));

	/* negative and zero deltas */
	ok(ft_ticks_to_ns(&c, 0) == 0 && ft_ticks_to_ns(&c, -1) == 0 &&
	   ft_ticks_to_ns(&c, -123456789) == 0 && ft_ticks_to_ns(&c, INT64_MIN) == 0,
	   "zero and negative deltas (-1, -123456789, INT64_MIN) give 0");

	/* invalid frequencies */
	{
		const double bad[] = {0, -1, -2.5e9, 999999.0, 1.000001e11, 1e300,
		NAN, INFINITY, -INFINITY};
		int			accepted = 0;

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		{
			memset(&c, 0x77, sizeof(c));
			if (ft_conv_init(&c, bad[i]) || c.mult != 0 || c.hz != 0)
			{
				accepted++;
				diag("   ft_conv_init(%g) accepted or left garbage", bad[i]);
			}
		}
		ok(accepted == 0, "invalid frequencies (0, negative, < 1 MHz, > 100 GHz, NaN, inf) rejected, conv zeroed");
		ok(ft_conv_init(&c, FT_CONV_MIN_HZ) && ft_conv_init(&c, 1e11),
		   "range limits %.0f MHz and 100 GHz accepted", FT_CONV_MIN_HZ / 1e6);
#if FT_HAVE_ARCH_COUNTER
		ok(ft_conv_init(&c, 1e8) && ft_ticks_to_ns(&c, INT64_MAX) == UINT64_MAX &&
		   ft_ticks_to_ns(&c, 100000000) == 1000000000,
		   "aarch64 build: 100 MHz accepted, 2^63-1 ticks saturate, 1e8 ticks = 1 s");
		ok(ft_conv_init(&c, 25e6) && ft_ticks_to_ns(&c, 25) == 1000 &&
		   ft_ticks_to_ns(&c, 1) == 40,
		   "aarch64 build: 25 MHz counter, 1 tick = 40 ns, 25 ticks = 1 us");
#else
		ok(!ft_conv_init(&c, 5e8), "500 MHz refused: 2^63 ticks would overflow 64-bit ns");
#endif
	}

	/* slow frequencies the range admits */
	{
		int			wrapped = 0;

		for (double hz = 1e6; hz < 5e8; hz *= 3)
		{
			uint64_t	got;
			long double ref;

			if (!ft_conv_init(&c, hz))
				continue;		/* refusing such a frequency is fine */
			got = ft_ticks_to_ns(&c, INT64_MAX);
			ref = ref_ns(INT64_MAX, hz);
			if (!(got == UINT64_MAX || fabsl((long double) got - ref) / ref < 1e-6L))
			{
				wrapped++;
				diag("   %.0f Hz: 2^63-1 ticks gave %llu ns, want %.4Le", hz,
					 (unsigned long long) got, ref);
			}
		}
		ok(wrapped == 0, "accepted frequencies below 500 MHz: 2^63-1 ticks is exact or saturates, never wraps");
	}

	/*
	 * Rounded, not truncated: every point is within half a nanosecond plus
	 * the multiplier's own rounding (at most half a unit of 2^-32 ns per
	 * tick), at every length.
	 */
	{
		int			beyond = 0;

		for (size_t fi = 0; fi < sizeof(freqs) / sizeof(freqs[0]); fi++)
		{
			ft_conv_init(&c, freqs[fi]);
			for (int ti = 0; ti < nticks; ti++)
			{
				long double ref = ref_ns(ticks[ti], freqs[fi]);
				long double err = fabsl((long double) ft_ticks_to_ns(&c, ticks[ti]) - ref);
				long double bound = 0.5L + (long double) ticks[ti] / 8589934592.0L +
					ref * 1e-15L;

				if (err > bound)
				{
					beyond++;
					diag("   %.3f MHz, %lld ticks: error %.3Lf ns > %.3Lf", freqs[fi] / 1e6,
						 (long long) ticks[ti], err, bound);
				}
			}
		}
		ok(beyond == 0, "all points: error <= 0.5 ns + ticks x 2^-33 ns (rounded to nearest)");
	}

	/* the same conversion built without __int128 */
	if (ft_test_noint128_active())
	{
		int			differ = 0;
		const double slow[] = {6e8, 7.5e8, 9.99e8, 1e11};

		for (size_t fi = 0; fi < sizeof(freqs) / sizeof(freqs[0]) + 4; fi++)
		{
			double		hz = fi < sizeof(freqs) / sizeof(freqs[0]) ? freqs[fi] :
				slow[fi - sizeof(freqs) / sizeof(freqs[0])];

			ft_conv_init(&c, hz);
			for (int ti = 0; ti < nticks; ti++)
				if (ft_test_ticks_to_ns_noint128(c.mult, ticks[ti]) !=
					ft_ticks_to_ns(&c, ticks[ti]))
				{
					differ++;
					diag("   %.0f Hz, %lld ticks: fallback %llu, 128-bit %llu", hz,
						 (long long) ticks[ti],
						 (unsigned long long) ft_test_ticks_to_ns_noint128(c.mult, ticks[ti]),
						 (unsigned long long) ft_ticks_to_ns(&c, ticks[ti]));
				}
			if (ft_test_ticks_to_ns_noint128(c.mult, -5) != 0 ||
				ft_test_ticks_to_ns_noint128(c.mult, 0) != 0)
				differ++;
		}
		ok(differ == 0, "the non-__int128 fallback agrees with the 128-bit path at 600 MHz-100 GHz, up to 2^63-1 ticks");
	}
	else
		ok(1, "# SKIP could not build the non-__int128 fallback");
}

/*
 * xorshift64*: a fixed, portable stream of pseudo-random numbers, so the
 * bias test sees the same deltas everywhere.
 */
static uint64_t
next_random(uint64_t *state)
{
	uint64_t	x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 2685821657736338717ULL;
}

/*
 * The node wrapper converts each call of each node on its own and sums
 * the results, so a conversion that is off by a fraction of a nanosecond
 * on average (truncation: -0.5 ns) adds up to percents on nodes that cost
 * tens of nanoseconds a call.  Mean error over 10^6 random short deltas
 * (10-3000 ticks) must be within +-0.05 ns, for the 128-bit path and the
 * fallback.
 */
static void
test_conversion_bias(void)
{
	static const double bias_freqs[] = {
		6e8, 1e9, 2.2e9, 2596.138e6, 2.9e9, 3.7e9, 5e9
	};

	diag("--- tick -> ns conversion: no bias on short intervals");
	for (size_t fi = 0; fi < sizeof(bias_freqs) / sizeof(bias_freqs[0]); fi++)
	{
		FtTickConv	c;
		uint64_t	state = 0x9e3779b97f4a7c15ULL + fi;
		long double sum = 0,
					sum_fb = 0;
		const int	n = 1000000;

		ft_conv_init(&c, bias_freqs[fi]);
		for (int i = 0; i < n; i++)
		{
			int64_t		d = 10 + (int64_t) (next_random(&state) % 2991);
			long double ref = ref_ns(d, bias_freqs[fi]);

			sum += (long double) ft_ticks_to_ns(&c, d) - ref;
			sum_fb += (long double) ft_test_ticks_to_ns_noint128(c.mult, d) - ref;
		}
		ok(fabsl(sum / n) <= 0.05L,
		   "%.3f MHz: mean error over 10^6 deltas of 10-3000 ticks is %+.4f ns (within +-0.05)",
		   bias_freqs[fi] / 1e6, (double) (sum / n));
		ok(!ft_test_noint128_active() || fabsl(sum_fb / n) <= 0.05L,
		   "%.3f MHz, non-__int128 fallback: mean error %+.4f ns (within +-0.05)",
		   bias_freqs[fi] / 1e6, (double) (sum_fb / n));
	}
}

/* ---------------------------------------------------------------------- */

static void
test_serialize(void)
{
	FtClockFacts f,
				g,
				sentinel;
	char		buf[2 * sizeof(FtClockFacts) + 64];
	char		bad[sizeof(buf)];
	size_t		len;

	diag("--- ft_facts_serialize / ft_facts_parse");
	good_facts(&f);
	f.hypervisor = true;
	strcpy(f.hypervisor_vendor, "KVMKVMKVM");
	strcpy(f.frequency_note, "a note with \"quotes\", commas, and UTF-8 \xc3\xa9");

	ft_facts_serialize(&f, buf, sizeof(buf));
	len = strlen(buf);
	{
		char		tag[16];

		snprintf(tag, sizeof(tag), "ft2:%08x:", (unsigned) ft_facts_layout_hash());
		ok(strncmp(buf, tag, 13) == 0 && len == 4 + 9 + 2 * sizeof(f),
		   "serialized: tag ft2, layout hash, %zu hex digits", 2 * sizeof(f));
	}
	memset(&g, 0, sizeof(g));
	ok(ft_facts_parse(buf, &g) && memcmp(&f, &g, sizeof(f)) == 0,
	   "round trip reproduces the structure byte for byte");

	/* every rejection must leave the target untouched */
	memset(&sentinel, 0x3c, sizeof(sentinel));
#define REJECT(str, what) \
	do { \
		FtClockFacts t_ = sentinel; \
		bool r_ = ft_facts_parse((str), &t_); \
		ok(!r_ && memcmp(&t_, &sentinel, sizeof(t_)) == 0, "rejected: %s", (what)); \
	} while (0)

	REJECT(NULL, "NULL");
	REJECT("", "empty string");
	REJECT("ft2:", "tag only");
	strcpy(bad, buf);
	bad[2] = '3';
	REJECT(bad, "wrong tag (ft3:)");
	strcpy(bad, buf);
	bad[0] = 'F';
	REJECT(bad, "wrong tag (FT2:)");

	/*
	 * What the previous format (tag ft1 and the structure's size) sent: a
	 * build that only compared sizes took any same-sized image for its own.
	 */
	strcpy(bad, buf);
	snprintf(bad, 14, "ft1:%08zx", sizeof(f));
	bad[12] = ':';
	REJECT(bad, "the old format (ft1:<size>:), same size and bytes");

	/* another build's layout: same tag and length, another hash */
	strcpy(bad, buf);
	bad[4] = bad[4] == '0' ? '1' : '0';
	REJECT(bad, "another layout hash, same length");
	strcpy(bad, buf);
	snprintf(bad + 4, 9, "%08x", (unsigned) ft_facts_layout_hash() ^ 0x80000000u);
	bad[12] = ':';
	REJECT(bad, "another layout hash (top bit)");

	/* the hash is stable within a build and not trivially zero */
	ok(ft_facts_layout_hash() == ft_facts_layout_hash() && ft_facts_layout_hash() != 0 &&
	   ft_facts_layout_hash() != 2166136261u,
	   "layout hash %08x: stable and covers the fields", (unsigned) ft_facts_layout_hash());
	strcpy(bad, buf);
	bad[12] = '-';
	REJECT(bad, "no ':' after the size");
	strcpy(bad, buf);
	bad[len - 2] = '\0';
	REJECT(bad, "one byte short");
	strcpy(bad, buf);
	strcat(bad, "00");
	REJECT(bad, "one byte too many");
	strcpy(bad, buf);
	bad[len - 1] = '\0';
	REJECT(bad, "odd number of hex digits");
	strcpy(bad, buf);
	bad[20] = 'g';
	REJECT(bad, "bad hex digit 'g'");
	strcpy(bad, buf);
	bad[len - 1] = 'A';
	REJECT(bad, "upper-case hex digit (not what serialize writes)");
	strcpy(bad, buf);
	bad[30] = ' ';
	REJECT(bad, "space inside the hex");

	/* well-formed images of bad structures */
	{
		FtClockFacts h = f;
		char		img[sizeof(buf)];

		h.detected = false;
		ft_facts_serialize(&h, img, sizeof(img));
		REJECT(img, "image with detected = false");

#define UNTERMINATED(field) \
		do { \
			h = f; \
			memset(h.field, 'x', sizeof(h.field)); \
			ft_facts_serialize(&h, img, sizeof(img)); \
			REJECT(img, "unterminated " #field); \
		} while (0)
		UNTERMINATED(cpu_vendor);
		UNTERMINATED(hypervisor_vendor);
		UNTERMINATED(calibration_note);
		UNTERMINATED(frequency_note);
		UNTERMINATED(kernel_clocksource);
		UNTERMINATED(kernel_available);
	}

	/* a buffer too small gives an empty string, never a truncated image */
	memset(bad, 'z', sizeof(bad));
	ft_facts_serialize(&f, bad, len);	/* one short (no room for NUL) */
	ok(bad[0] == '\0', "serialize into a buffer one byte short: empty string");
	ft_facts_serialize(&f, bad, len + 1);
	ok(strcmp(bad, buf) == 0, "serialize into a buffer of exactly the size: complete");
	ft_facts_serialize(&f, bad, 0);
	ok(1, "serialize into a zero-length buffer: no write");
}

/* ---------------------------------------------------------------------- */

/*
 * CPUID's view of the TSC features against the kernel's (/proc/cpuinfo):
 * a feature counts only when both report it, and the note says which view
 * decided.
 */
static void
test_cpu_flags(void)
{
	FtClockFacts f;
	FtDecision	d;
	char		why[256];

	diag("--- CPUID and the kernel's CPU flags");
	memset(&f, 0, sizeof(f));
	ft_parse_cpu_flags(" fpu vme tsc msr rdtscp lm constant_tsc nonstop_tsc tsc_known_freq\n", &f);
	ok(f.kernel_flags_read && f.kernel_tsc && f.kernel_rdtscp &&
	   f.kernel_constant_tsc && f.kernel_nonstop_tsc, "flags line parsed");
	ft_parse_cpu_flags("fpu tsc_known_freq tsc_adjust constant_tsc_x rdtscp_x", &f);
	ok(f.kernel_flags_read && !f.kernel_tsc && !f.kernel_rdtscp &&
	   !f.kernel_constant_tsc, "whole words only: tsc_known_freq is not tsc");
	ft_parse_cpu_flags(NULL, &f);
	ok(!f.kernel_flags_read && !f.kernel_tsc, "unreadable flags: nothing listed");

	/* both views agree */
	good_facts(&f);
	f.cpuid_tsc = f.cpuid_invariant_tsc = f.cpuid_rdtscp = true;
	ft_parse_cpu_flags("tsc rdtscp constant_tsc nonstop_tsc", &f);
	ft_merge_cpu_flags(&f);
	ok(f.has_tsc && f.invariant_tsc && f.rdtscp && has(f.cpu_flags_note, "agree"),
	   "CPUID yes, kernel yes: present (%s)", f.cpu_flags_note);

	/* CPUID yes, kernel no: an emulator's or hypervisor's claim */
	ft_parse_cpu_flags("tsc constant_tsc nonstop_tsc", &f);
	ft_merge_cpu_flags(&f);
	ok(!f.rdtscp && f.invariant_tsc &&
	   has(f.cpu_flags_note, "CPUID reports RDTSCP but the kernel does not list \"rdtscp\"") &&
	   has(f.cpu_flags_note, "LFENCE;RDTSC"),
	   "RDTSCP: CPUID yes, kernel no: absent, note says the kernel decided");
	ft_decide(&f, FT_SETTING_AUTO, &d);
	ok(d.choice == FT_CHOICE_TSC, "RDTSCP absent does not make the TSC unusable");

	/* CPUID no, kernel yes */
	f.cpuid_rdtscp = false;
	ft_parse_cpu_flags("tsc rdtscp constant_tsc nonstop_tsc", &f);
	ft_merge_cpu_flags(&f);
	ok(!f.rdtscp && has(f.cpu_flags_note, "the kernel lists \"rdtscp\" but CPUID does not"),
	   "RDTSCP: CPUID no, kernel yes: absent, note says CPUID decided");

	/* invariant: CPUID yes, kernel lacks nonstop_tsc */
	f.cpuid_rdtscp = true;
	ft_parse_cpu_flags("tsc rdtscp constant_tsc", &f);
	ft_merge_cpu_flags(&f);
	ok(!f.invariant_tsc && f.rdtscp && !ft_tsc_usable(&f, why, sizeof(why)) &&
	   has(why, "the kernel does not list the TSC as invariant"),
	   "invariant: CPUID yes, kernel no: not invariant, TSC unusable (%s)", why);
	ft_decide(&f, FT_SETTING_TSC, &d);
	ok(d.refused, "invariant: CPUID yes, kernel no: tsc refused");

	/* invariant: CPUID no, kernel yes */
	f.cpuid_invariant_tsc = false;
	ft_parse_cpu_flags("tsc rdtscp constant_tsc nonstop_tsc", &f);
	ft_merge_cpu_flags(&f);
	ok(!f.invariant_tsc && !ft_tsc_usable(&f, why, sizeof(why)) &&
	   has(why, "0x80000007 EDX bit 8 is clear") &&
	   has(f.cpu_flags_note, "CPUID does not report an invariant TSC"),
	   "invariant: CPUID no, kernel yes: not invariant, CPUID named");

	/* TSC itself: CPUID yes, kernel no */
	f.cpuid_invariant_tsc = true;
	ft_parse_cpu_flags("rdtscp constant_tsc nonstop_tsc", &f);
	ft_merge_cpu_flags(&f);
	ok(!f.has_tsc && !f.invariant_tsc && !ft_tsc_usable(&f, why, sizeof(why)) &&
	   has(why, "the kernel does not list a time-stamp counter"),
	   "TSC: CPUID yes, kernel no: no TSC (%s)", why);

	/* the kernel's flags cannot be read: CPUID alone */
	ft_parse_cpu_flags(NULL, &f);
	ft_merge_cpu_flags(&f);
	ok(f.has_tsc && f.invariant_tsc && f.rdtscp &&
	   has(f.cpu_flags_note, "could not be read: CPUID alone decided"),
	   "kernel flags unreadable: CPUID's view stands");
}

/* ---------------------------------------------------------------------- */

static void
test_real_detection(void)
{
	FtClockFacts f;
	FtDecision	d[4];
	char		why[256];
	bool		usable;
	struct timespec t0,
				t1;
	double		secs;

	diag("--- real ft_detect_clock_facts() on this machine (invariants only)");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ft_detect_clock_facts(&f);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;

	diag("   x86_64=%d aarch64=%d vendor=%s tsc=%d invariant=%d rdtscp=%d hypervisor=%d (%s)",
		 f.is_x86_64, f.is_aarch64, f.cpu_vendor, f.has_tsc, f.invariant_tsc, f.rdtscp,
		 f.hypervisor, f.hypervisor_vendor);
	diag("   15h=%.0f 16h=%.0f hv=%.0f cntfrq=%.0f calibrated=%.0f ok=%d spread=%.2f ppm note=%s",
		 f.cpuid_15h_hz, f.cpuid_16h_hz, f.hypervisor_hz, f.cntfrq_hz, f.calibrated_hz,
		 f.calibration_ok, f.calibration_spread_ppm, f.calibration_note);
	diag("   tsc_hz=%.0f (%s): %s", f.tsc_hz, ft_freq_origin_name(f.tsc_hz_origin),
		 f.frequency_note);
	diag("   kernel=%s available=%s; ns/read cg=%.1f tsc=%.1f ordered=%.1f; detection %.3f s",
		 f.kernel_clocksource, f.kernel_available, f.ns_per_read_clock_gettime,
		 f.ns_per_read_tsc, f.ns_per_read_tsc_ordered, secs);

	ok(f.detected, "detected is set");
	ok(secs < 2.0, "detection took %.3f s (< 2 s)", secs);
	ok(f.ns_per_read_clock_gettime > 0, "clock_gettime read cost measured");
	ok(!f.calibration_ok ||
	   (f.calibrated_hz > 0 && f.tsc_hz > 0 && f.calibration_spread_ppm <= 10.0 &&
		fabs(f.tsc_hz - f.calibrated_hz) / f.calibrated_hz <= 20e-6 * (1 + 1e-9)),
	   "calibration_ok implies a frequency within 20 ppm of calibration, spread <= 10 ppm");
	ok(f.calibration_ok || (f.tsc_hz == 0 && f.calibration_note[0] != '\0'),
	   "calibration failed implies no frequency and a note");
	ok(f.tsc_hz == 0 || f.tsc_hz_origin != FT_FREQ_NONE, "a frequency has an origin");
	ok(!f.has_tsc || f.is_x86_64 || f.is_aarch64, "has_tsc implies x86-64 or aarch64");
#if FT_HAVE_ARCH_COUNTER
	ok(f.is_aarch64 && !f.is_x86_64 && f.has_tsc && f.invariant_tsc && !f.rdtscp &&
	   f.cntfrq_hz > 0,
	   "aarch64 build: arch counter facts, CNTFRQ_EL0 = %.0f kHz", f.cntfrq_hz / 1000.0);
#endif
	ok(!f.rdtscp || (f.cpuid_rdtscp && (!f.kernel_flags_read || f.kernel_rdtscp)),
	   "RDTSCP only where CPUID reports it and the kernel, if readable, lists it");
	ok(!(f.is_x86_64 || f.is_aarch64) || f.cpu_flags_note[0] != '\0', "the CPU flags note says which view decided: %s",
	   f.cpu_flags_note);

	usable = ft_tsc_usable(&f, why, sizeof(why));
	for (int i = 0; i < 4; i++)
		ft_decide(&f, all_settings[i], &d[i]);
	ok(d[3].choice == FT_CHOICE_CLOCK_GETTIME && !d[3].refused,
	   "clock_gettime setting: clock_gettime");
	ok(d[1].refused == !usable && (d[1].choice == FT_CHOICE_TSC) == usable,
	   "tsc setting: refused exactly when the TSC is unusable");
	ok((d[2].choice == FT_CHOICE_TSC) == usable && !d[2].refused,
	   "try_tsc setting: TSC exactly when usable, never refused");
	ok(d[0].choice != FT_CHOICE_TSC || usable, "auto chooses the TSC only when usable");
	diag("   auto: %s", d[0].reason);

	/* serialized real facts parse back */
	{
		char		buf[2 * sizeof(FtClockFacts) + 64];
		FtClockFacts g;

		ft_facts_serialize(&f, buf, sizeof(buf));
		ok(ft_facts_parse(buf, &g) && memcmp(&f, &g, sizeof(f)) == 0,
		   "real facts survive the serialize/parse round trip");
	}

	/* the frequency converts a measured interval correctly */
	if (usable)
	{
		FtTickConv c;
		int64_t		n0,
					n1;
		uint64_t	t0r,
					t1r;
		double		tsc_ns,
					wall_ns;

		ft_conv_init(&c, f.tsc_hz);
		n0 = ft_read_clock_gettime_ns();
		t0r = ft_read_tsc();
		do
			n1 = ft_read_clock_gettime_ns();
		while (n1 - n0 < 50000000);
		t1r = ft_read_tsc();
		tsc_ns = (double) ft_ticks_to_ns(&c, (int64_t) (t1r - t0r));
		wall_ns = (double) (n1 - n0);
		ok(fabs(tsc_ns - wall_ns) / wall_ns < 0.005,
		   "%.3f ms by clock_gettime = %.3f ms by the TSC (within 0.5 %%)",
		   wall_ns / 1e6, tsc_ns / 1e6);
	}
	else
		ok(1, "# SKIP the TSC is not usable here: %s", why);
}

int
main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_decision();
	test_decision_aarch64();
	test_conversion();
	test_conversion_bias();
	test_serialize();
	test_cpu_flags();
	if (getenv("FT_UNIT_NO_DETECT") == NULL)
		test_real_detection();
	return tap_done();
}
