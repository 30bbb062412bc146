/*
 * test_fault.c - standalone tests of the fault-injection machinery
 * (test/fault/fault_injection.c built with -DFASTTIME_FAULT_INJECTION
 * -DFT_FAULT_STANDALONE): the node clock's jumps and slowness, and the
 * FASTTIME_FAULT_FACTS degradations and the decisions they lead to.
 *
 * test/unit/test_fault.c
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock_decide.h"
#include "clock_detect.h"
#include "clock_facts.h"
#include "fault_injection.h"
#include "ticks.h"
#include "tap.h"

/* normally fasttime.c's */
FtTickConv	ft_conv;

/* fault_injection.c's settings and state */
extern int	ft_fault_tick_mode;
extern int	ft_fault_tick_at;
extern double ft_fault_tick_amount_ns;
extern void ft_fault_rearm(void);
extern int	ft_fault_publish_facts;

enum
{
	MODE_NONE, MODE_JUMP_BACK, MODE_JUMP_FORWARD, MODE_SLOW
};

static void
arm(int mode, int at, double amount_ns)
{
	ft_fault_tick_mode = mode;
	ft_fault_tick_at = at;
	ft_fault_tick_amount_ns = amount_ns;
	ft_fault_rearm();
}

static void
test_ticks(void)
{
	uint64_t	r[10];
	int64_t		ticks_1ms;

	diag("--- tick faults");
	ft_conv_init(&ft_conv, 2e9);
	ticks_1ms = 2000000;

	arm(MODE_NONE, 1, 0);
	for (int i = 0; i < 10; i++)
		r[i] = ft_fault_read_tsc();
	{
		bool		mono = true;

		for (int i = 1; i < 10; i++)
			if ((int64_t) (r[i] - r[i - 1]) < 0 || r[i] - r[i - 1] > (uint64_t) ticks_1ms)
				mono = false;
		ok(mono, "mode none: plain, monotonic reads");
	}

	/* jump back 1 ms at the 5th read, then stay shifted */
	arm(MODE_JUMP_BACK, 5, 1e6);
	for (int i = 0; i < 10; i++)
		r[i] = ft_fault_read_tsc();
	ok((int64_t) (r[4] - r[3]) < -ticks_1ms / 2 && (int64_t) (r[4] - r[3]) > -2 * ticks_1ms,
	   "jump_back 1 ms at read 5: read 5 is ~1 ms behind read 4 (%lld ticks)",
	   (long long) (int64_t) (r[4] - r[3]));
	ok((int64_t) (r[3] - r[2]) >= 0 && (int64_t) (r[5] - r[4]) >= 0 &&
	   (int64_t) (r[9] - r[5]) >= 0 && r[9] - r[5] < (uint64_t) ticks_1ms,
	   "jump_back: monotonic before and after, the shift stays");
	ok(ft_ticks_to_ns(&ft_conv, (int64_t) (r[4] - r[3])) == 0,
	   "jump_back: a node interval spanning the jump converts to 0 ns");

	/* jump forward 1 hour at the 1st read */
	arm(MODE_JUMP_FORWARD, 1, 3600e9);
	r[0] = ft_read_tsc();
	r[1] = ft_fault_read_tsc();
	r[2] = ft_fault_read_tsc();
	ok((double) (r[1] - r[0]) > 0.99 * 3600 * 2e9 && (double) (r[1] - r[0]) < 1.01 * 3600 * 2e9,
	   "jump_forward 1 h at read 1: read 1 is ~1 h ahead (%.1f s)",
	   (double) ft_ticks_to_ns(&ft_conv, (int64_t) (r[1] - r[0])) / 1e9);
	ok(r[2] >= r[1] && r[2] - r[1] < (uint64_t) ticks_1ms, "jump_forward: the shift stays");

	/* re-arming (any fault setting changed) forgets the shift */
	arm(MODE_NONE, 1, 0);
	r[0] = ft_read_tsc();
	r[1] = ft_fault_read_tsc();
	ok(r[1] - r[0] < (uint64_t) ticks_1ms, "re-arming with mode none removes the shift");

	/* slow: ~1 us per read */
	arm(MODE_SLOW, 1, 0);
	{
		int64_t		t0 = ft_read_clock_gettime_ns();
		double		per;

		for (int i = 0; i < 1000; i++)
			(void) ft_fault_read_tsc();
		per = (double) (ft_read_clock_gettime_ns() - t0) / 1000.0;
		ok(per >= 1000.0 && per < 20000.0, "slow: %.0f ns per read (>= 1000)", per);
	}
	arm(MODE_SLOW, 101, 0);
	{
		int64_t		t0 = ft_read_clock_gettime_ns();
		double		per;

		for (int i = 0; i < 100; i++)
			(void) ft_fault_read_tsc();
		per = (double) (ft_read_clock_gettime_ns() - t0) / 100.0;
		ok(per < 1000.0, "slow from read 101: the first 100 reads are fast (%.0f ns each)", per);
	}
	arm(MODE_NONE, 1, 0);

	/* no frequency known yet: amounts are taken at 1 GHz */
	memset(&ft_conv, 0, sizeof(ft_conv));
	arm(MODE_JUMP_FORWARD, 1, 1e6);
	r[0] = ft_read_tsc();
	r[1] = ft_fault_read_tsc();
	ok(r[1] - r[0] >= 1000000 && r[1] - r[0] < 2000000,
	   "without a known frequency the jump is taken as 1 tick per ns");
	arm(MODE_NONE, 1, 0);
}

static void
healthy(FtClockFacts *f)
{
	memset(f, 0, sizeof(*f));
	f->detected = true;
	f->is_x86_64 = true;
	f->cpuid_tsc = f->cpuid_invariant_tsc = f->cpuid_rdtscp = true;
	ft_parse_cpu_flags("fpu tsc rdtscp constant_tsc nonstop_tsc", f);
	ft_merge_cpu_flags(f);
	f->calibration_ok = true;
	f->calibrated_hz = 2.5e9;
	f->cpuid_15h_hz = 2.5e9;
	ft_choose_frequency(f);
	strcpy(f->kernel_clocksource, "tsc");
	strcpy(f->kernel_available, "tsc hpet acpi_pm");
	f->ns_per_read_clock_gettime = 20;
	f->ns_per_read_tsc = 7;
}

/* apply FASTTIME_FAULT_FACTS=env to healthy facts; decide for setting */
static void
faulted(const char *env, FtClockFacts *f, FtClockSetting s, FtDecision *d)
{
	healthy(f);
	setenv("FASTTIME_FAULT_FACTS", env, 1);
	ft_facts_faults()->apply_facts(f);
	unsetenv("FASTTIME_FAULT_FACTS");
	ft_decide(f, s, d);
}

static void
test_facts(void)
{
	FtClockFacts f;
	FtDecision	d;
	static const struct
	{
		const char *env;
		const char *needle;		/* in the auto reason */
		bool		tsc_refused;	/* explicit tsc refused */
	}			cases[] = {
		{"no_tsc", "no time-stamp counter", true},
		{"no_invariant", "invariant", true},
		{"no_frequency", "could not be calibrated", true},
		{"not_x86", "x86-64", true},
		{"kernel_hpet", "rejected the TSC", false},
		{"kernel_kvm_clock", "kvm-clock", false},
		{"kernel_unreadable", "could not be read", false},
		{"slow_tsc", "not clearly cheaper", false},
		{"kernel_no_invariant", "the kernel does not list the TSC as invariant", true},
		{"kernel_flags_unreadable,kernel_hpet", "rejected the TSC", false},
		{"machine_b", "kvm-clock", false},
		{"machine_b,cpuid_rdtscp", "kvm-clock", false},
		{"machine_a,slow_tsc", "not clearly cheaper", false},
		{"machine_b,machine_a,kernel_hpet", "rejected the TSC", false},
	};

	diag("--- fact faults (FASTTIME_FAULT_FACTS)");

	healthy(&f);
	unsetenv("FASTTIME_FAULT_FACTS");
	ft_facts_faults()->apply_facts(&f);
	ft_decide(&f, FT_SETTING_AUTO, &d);
	ok(d.choice == FT_CHOICE_TSC, "no FASTTIME_FAULT_FACTS: healthy facts untouched, auto = tsc");

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		faulted(cases[i].env, &f, FT_SETTING_AUTO, &d);
		ok(d.choice == FT_CHOICE_CLOCK_GETTIME && strstr(d.reason, cases[i].needle),
		   "%s: auto = clock_gettime, reason says \"%s\"", cases[i].env, cases[i].needle);
		if (d.choice != FT_CHOICE_CLOCK_GETTIME || !strstr(d.reason, cases[i].needle))
			diag("   reason: %s", d.reason);
		faulted(cases[i].env, &f, FT_SETTING_TSC, &d);
		ok(d.refused == cases[i].tsc_refused,
		   "%s: tsc is %s", cases[i].env, cases[i].tsc_refused ? "refused" : "honoured");
	}

	faulted("no_frequency", &f, FT_SETTING_AUTO, &d);
	ok(f.tsc_hz == 0 && f.cpuid_15h_hz == 0 && strstr(f.calibration_note, "fault injection"),
	   "no_frequency: frequency gone, note says fault injection");

	faulted("freq_off_5pct", &f, FT_SETTING_AUTO, &d);
	ok(f.tsc_hz_origin == FT_FREQ_CALIBRATION && fabs(f.disagreement_ppm - 50000) < 1 &&
	   d.choice == FT_CHOICE_TSC,
	   "freq_off_5pct: calibration used (%.0f ppm apart), TSC still chosen", f.disagreement_ppm);

	faulted("no_invariant,kernel_hpet|slow_tsc", &f, FT_SETTING_AUTO, &d);
	ok(!f.invariant_tsc && strcmp(f.kernel_clocksource, "hpet") == 0 &&
	   f.ns_per_read_tsc == 1000.0, "several tokens, ',' and '|' separated, all applied");

	faulted("bogus_token no_invariant", &f, FT_SETTING_AUTO, &d);
	ok(!f.invariant_tsc, "unknown token ignored (with a message), the others applied");

	/* the two machine kinds CI runs on, and what an emulator claims */
	faulted("machine_a", &f, FT_SETTING_AUTO, &d);
	ok(d.choice == FT_CHOICE_TSC && f.rdtscp && f.invariant_tsc &&
	   strcmp(f.kernel_clocksource, "tsc") == 0 && strstr(f.cpu_flags_note, "agree"),
	   "machine_a: auto = tsc, RDTSCP in both views (%s)", d.reason);
	faulted("machine_b", &f, FT_SETTING_AUTO, &d);
	ok(d.choice == FT_CHOICE_CLOCK_GETTIME && !f.rdtscp && f.invariant_tsc &&
	   strstr(d.reason, "rejected the TSC"),
	   "machine_b: auto = clock_gettime (kvm-clock, TSC rejected), no RDTSCP, TSC invariant");
	faulted("machine_b", &f, FT_SETTING_TSC, &d);
	ok(d.choice == FT_CHOICE_TSC && !d.refused && strstr(d.reason, "kvm-clock"),
	   "machine_b: an explicit tsc is honoured and the reason names kvm-clock");
	faulted("machine_b,cpuid_rdtscp", &f, FT_SETTING_AUTO, &d);
	ok(f.cpuid_rdtscp && !f.kernel_rdtscp && !f.rdtscp &&
	   strstr(f.cpu_flags_note, "CPUID reports RDTSCP but the kernel does not list"),
	   "valgrind on machine_b (CPUID claims RDTSCP, kernel does not): RDTSCP treated as absent");
	faulted("kernel_no_rdtscp", &f, FT_SETTING_AUTO, &d);
	ok(!f.rdtscp && d.choice == FT_CHOICE_TSC,
	   "kernel_no_rdtscp: no RDTSCP, the TSC still chosen (LFENCE;RDTSC orders reads)");

	/* a faked RDTSCP never runs the instruction on a CPU without it */
	ft_fault_no_real_rdtscp = false;
	healthy(&f);
	f.cpuid_rdtscp = false;
	ft_merge_cpu_flags(&f);
	setenv("FASTTIME_FAULT_FACTS", "machine_a", 1);
	ft_facts_faults()->apply_facts(&f);
	unsetenv("FASTTIME_FAULT_FACTS");
	ok(f.rdtscp && ft_fault_no_real_rdtscp,
	   "machine_a on a CPU without RDTSCP: the fact is faked, the reads are not");
	{
		uint64_t	a = ft_read_tsc_rdtscp(),
					b = ft_read_tsc_rdtscp();

		ok(b >= a, "faked RDTSCP reads LFENCE;RDTSC (%llu ticks apart)",
		   (unsigned long long) (b - a));
	}
	ft_fault_no_real_rdtscp = false;

	/* the kernel's CPU flags from a file, as at detection */
	{
		char		path[] = "/tmp/ft-unit-cpuinfo.XXXXXX";
		int			fd = mkstemp(path);
		FILE	   *fp = fd >= 0 ? fdopen(fd, "w") : NULL;

		if (fp != NULL)
		{
			fputs("processor\t: 0\nvendor_id\t: AuthenticAMD\n"
				  "flags\t\t: fpu tsc msr constant_tsc nonstop_tsc tsc_known_freq\n", fp);
			fclose(fp);
			setenv("FASTTIME_FAULT_CPUINFO_FILE", path, 1);
			ft_detect_clock_facts(&f);
			unsetenv("FASTTIME_FAULT_CPUINFO_FILE");
			unlink(path);
#if FT_HAVE_ARCH_COUNTER
			/* aarch64: x86 CPU flags are not the kernel's view of anything */
			ok(!f.kernel_flags_read && !f.rdtscp && f.has_tsc && f.invariant_tsc,
			   "aarch64: detection ignores an x86 flags line in FASTTIME_FAULT_CPUINFO_FILE");
#else
			ok(f.kernel_flags_read && f.kernel_tsc && f.kernel_constant_tsc &&
			   f.kernel_nonstop_tsc && !f.kernel_rdtscp && !f.rdtscp,
			   "detection reads the kernel's flags from FASTTIME_FAULT_CPUINFO_FILE: no rdtscp listed, none used");
#endif
		}
		else
			ok(0, "temporary cpuinfo file");
	}

	/* the hook in ft_detect_clock_facts */
	setenv("FASTTIME_FAULT_FACTS", "no_invariant,kernel_hpet", 1);
	ft_detect_clock_facts(&f);
	unsetenv("FASTTIME_FAULT_FACTS");
	ft_decide(&f, FT_SETTING_TRY_TSC, &d);
	ok(f.detected && !f.invariant_tsc && strcmp(f.kernel_clocksource, "hpet") == 0 &&
	   d.choice == FT_CHOICE_CLOCK_GETTIME,
	   "ft_detect_clock_facts applies FASTTIME_FAULT_FACTS: try_tsc falls back");
}

/* CLOCK_MONOTONIC_RAW that fails, and one that stands still */
static int
failing_clock(clockid_t id, struct timespec *ts)
{
	errno = EINVAL;
	return -1;
}

static int
stuck_clock(clockid_t id, struct timespec *ts)
{
	ts->tv_sec = 1000;
	ts->tv_nsec = 0;
	return 0;
}

/*
 * CLOCK_MONOTONIC_RAW read with up to 100 us of noise for its first
 * noisy_ms after the first read (a busy moment), then true; noisy_ms < 0:
 * noisy throughout.
 */
static int	noisy_ms;
static int64_t noisy_until;
static unsigned noisy_seed = 42;

static int
noisy_clock(clockid_t id, struct timespec *ts)
{
	int64_t		ns;

	if (clock_gettime(id, ts) != 0)
		return -1;
	ns = (int64_t) ts->tv_sec * 1000000000 + ts->tv_nsec;
	if (noisy_until == 0)
		noisy_until = ns + (int64_t) noisy_ms * 1000000;
	if (noisy_ms < 0 || ns < noisy_until)
	{
		ns += rand_r(&noisy_seed) % 100000;
		ts->tv_sec = ns / 1000000000;
		ts->tv_nsec = ns % 1000000000;
	}
	return 0;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Calibration spins on CLOCK_MONOTONIC_RAW; if that clock fails or stops,
 * detection must still end, promptly, with calibration failed and a note
 * saying why (and so the TSC unusable).
 */
static void
test_calibration_bounded(void)
{
	FtClockFacts f;
	double		t0;
	char		why[256];

	diag("--- calibration with a broken CLOCK_MONOTONIC_RAW");
	unsetenv("FASTTIME_FAULT_FACTS");
	ft_set_raw_clock(failing_clock);
	t0 = now_s();
	ft_detect_clock_facts(&f);
	ok(now_s() - t0 < 5.0 && !f.calibration_ok &&
	   (!f.has_tsc || strstr(f.calibration_note, "cannot be read") != NULL) &&
	   !ft_tsc_usable(&f, why, sizeof(why)),
	   "failing clock: detection ends in %.3f s, calibration failed (%s)",
	   now_s() - t0, f.calibration_note);

	ft_set_raw_clock(stuck_clock);
	t0 = now_s();
	ft_detect_clock_facts(&f);
	ok(now_s() - t0 < 5.0 && !f.calibration_ok &&
	   (!f.has_tsc || strstr(f.calibration_note, "did not advance") != NULL) &&
	   !ft_tsc_usable(&f, why, sizeof(why)),
	   "clock standing still: detection ends in %.3f s, calibration failed (%s)",
	   now_s() - t0, f.calibration_note);
	ft_set_raw_clock(NULL);
}

/*
 * A busy moment during calibration (windows that cannot agree for 120 ms,
 * longer than one attempt's 100 ms on x86-64) is waited out: a later
 * attempt calibrates.  A clock noisy throughout fails, in bounded time,
 * saying every attempt failed.
 */
static void
test_calibration_retried(void)
{
	FtClockFacts f;
	double		t0;

	diag("--- calibration through a busy moment");
	unsetenv("FASTTIME_FAULT_FACTS");
	noisy_ms = 120;
	noisy_until = 0;
	ft_set_raw_clock(noisy_clock);
	t0 = now_s();
	ft_detect_clock_facts(&f);
	ok(!f.has_tsc || (f.calibration_ok && f.calibration_note[0] == '\0'),
	   "noisy for 120 ms: calibrated in %.3f s (%.0f kHz, spread %.2f ppm)%s%s",
	   now_s() - t0, f.calibrated_hz / 1000.0, f.calibration_spread_ppm,
	   f.calibration_ok ? "" : ": ", f.calibration_note);

	noisy_ms = -1;
	noisy_until = 0;
	t0 = now_s();
	ft_detect_clock_facts(&f);
	ok(!f.has_tsc || (!f.calibration_ok && now_s() - t0 < 5.0 &&
					  strstr(f.calibration_note, "nor did those of the attempts before") != NULL),
	   "noisy throughout: calibration failed in %.3f s (%s)",
	   now_s() - t0, f.calibration_note);
	ft_set_raw_clock(NULL);
}

/*
 * FASTTIME_FAULT_CLOCKSOURCE_FILE replaces sysfs for the kernel's
 * clocksource, so a test can switch it at run time.
 */
static void
test_clocksource_file(void)
{
	char		path[] = "/tmp/ft-unit-cs-XXXXXX";
	int			fd = mkstemp(path);
	FILE	   *fp;
	char		cur[64],
				avail[256];

	diag("--- FASTTIME_FAULT_CLOCKSOURCE_FILE");
	if (fd < 0)
	{
		ok(0, "mkstemp");
		return;
	}
	close(fd);
	setenv("FASTTIME_FAULT_CLOCKSOURCE_FILE", path, 1);
	fp = fopen(path, "w");
	fputs("tsc\ntsc hpet acpi_pm\n", fp);
	fclose(fp);
	ok(ft_read_kernel_clocksource(cur, sizeof(cur), avail, sizeof(avail)) &&
	   strcmp(cur, "tsc") == 0 && strcmp(avail, "tsc hpet acpi_pm") == 0,
	   "file: current tsc, available \"tsc hpet acpi_pm\"");
	fp = fopen(path, "w");
	fputs("hpet\nhpet acpi_pm\n", fp);
	fclose(fp);
	ok(ft_read_kernel_clocksource(cur, sizeof(cur), avail, sizeof(avail)) &&
	   strcmp(cur, "hpet") == 0 && strcmp(avail, "hpet acpi_pm") == 0,
	   "rewritten file: current hpet");
	unlink(path);
	ok(!ft_read_kernel_clocksource(cur, sizeof(cur), avail, sizeof(avail)) &&
	   cur[0] == '\0',
	   "missing file: unreadable");
	unsetenv("FASTTIME_FAULT_CLOCKSOURCE_FILE");
}

/* fasttime.fault_publish_facts: what a leader of another build would send */
static void
test_publish_mangling(void)
{
	FtClockFacts f,
				g;
	char		buf[2 * sizeof(FtClockFacts) + 64];
	const char *what[] = {"foreign_layout", "old_format", "garbage"};

	diag("--- fasttime.fault_publish_facts");
	memset(&f, 0, sizeof(f));
	f.detected = true;
	for (int mode = 1; mode <= 3; mode++)
	{
		ft_facts_serialize(&f, buf, sizeof(buf));
		ft_fault_publish_facts = mode;
		ft_facts_faults()->mangle_published(buf, sizeof(buf));
		ok(!ft_facts_parse(buf, &g), "%s: this build cannot parse it (%.16s...)",
		   what[mode - 1], buf);
	}
	ft_fault_publish_facts = 0;
	ft_facts_serialize(&f, buf, sizeof(buf));
	ft_facts_faults()->mangle_published(buf, sizeof(buf));
	ok(ft_facts_parse(buf, &g), "none: unchanged, parses");
}

int
main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	ft_fault_register();
	test_ticks();
	test_facts();
	test_calibration_bounded();
	test_calibration_retried();
	test_clocksource_file();
	test_publish_mangling();
	return tap_done();
}
