/*-------------------------------------------------------------------------
 *
 * clock_detect.c
 *	  Detecting this machine's clocks: asking the CPU (CPUID), the kernel
 *	  (/proc/cpuinfo's flags, its clocksource in sysfs) and the clocks
 *	  themselves (calibration against CLOCK_MONOTONIC_RAW, the cost of a
 *	  read).  On aarch64 the counter is CNTVCT_EL0, with no CPUID.
 *
 * Everything here touches the machine (what follows from the answers is
 * clock_facts.c's).  It is slow (CPUID traps on virtual machines,
 * calibration spins) and runs once per process tree; it uses no server
 * facilities, so the standalone unit tests run it too.
 *
 * src/clock_detect.c
 *
 *-------------------------------------------------------------------------
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#ifdef __linux__
#include <sched.h>
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock_detect.h"
#include "clock_facts.h"
#include "ticks.h"

#if FT_HAVE_TSC
#include <cpuid.h>
#endif

#define CLOCKSOURCE_DIR "/sys/devices/system/clocksource/clocksource0/"

/* calibration parameters; see ft_calibrate_tsc */
#define CAL_WINDOW_NS		10000000LL	/* 10 ms per window */
#define CAL_BUDGET_NS		100000000LL /* 100 ms in all */
/*
 * A slow counter (aarch64's 19.2 to 62.5 MHz) ticks too few times in 10 ms
 * for windows to agree within CAL_AGREE_PPM: its windows stretch to
 * CAL_MIN_WINDOW_TICKS, at most CAL_MAX_WINDOW_NS, and the budget with them.
 */
#define CAL_MIN_WINDOW_TICKS 1000000.0
#define CAL_MAX_WINDOW_NS	50000000LL	/* 50 ms */
#define CAL_AGREE_WINDOWS	3
#define CAL_ATTEMPTS		3	/* each of CAL_BUDGET_NS, while none agree */
#define CAL_AGREE_PPM		10.0
#define CAL_BRACKET_TRIES	32
#define CAL_BRACKET_SLACK	64	/* ticks a bracket may exceed 2x narrowest */
/*
 * Bounds independent of CLOCK_MONOTONIC_RAW, so that a clock that fails or
 * stops cannot keep calibration spinning: ticks per window, and windows.
 */
#define CAL_SPIN_MAX_TICKS	2000000000ULL
#define CAL_MAX_WINDOWS		64
/* a slow counter's bound: half a second at its reported frequency */
#define CAL_SPIN_MAX_S		0.5

/*
 * A coarse counter (two ordered reads in a row often equal: a 25 MHz arch
 * counter, qemu's) pairs each clock read with the moment the counter steps
 * rather than a bracket's midpoint, uncertain by a whole step, and gets
 * CAL_MAX_WINDOW_NS windows.  CAL_EDGE_SPINS bounds the wait for a step.
 */
#define CAL_COARSE_PROBES	16
#define CAL_EDGE_SPINS		1000000

#ifdef FASTTIME_FAULT_INJECTION
/* the fault build's hooks into detection, once registered (clock_facts.h) */
#define facts_faults (ft_facts_faults())

/* the clock calibration reads; a fault build's unit tests replace it */
static int	(*raw_clock) (clockid_t, struct timespec *) = clock_gettime;

/* Replace the clock calibration reads: unit tests of broken clocks. */
void
ft_set_raw_clock(int (*fn) (clockid_t, struct timespec *))
{
	raw_clock = fn != NULL ? fn : clock_gettime;
}
#else
#define raw_clock clock_gettime
#endif

/* CLOCK_MONOTONIC_RAW in ns, or -1 if it cannot be read */
static int64_t
raw_ns(void)
{
	struct timespec ts;

	if (raw_clock(CLOCK_MONOTONIC_RAW, &ts) != 0)
		return -1;
	return (int64_t) ts.tv_sec * FT_NS_PER_SEC + ts.tv_nsec;
}

/* qsort's order for doubles: the median read cost, the windows' spread */
static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return (x > y) - (x < y);
}

#if FT_HAVE_TSC

/* Read the CPUID leaves that matter; each read may trap, so read once. */
static void
read_cpuid_facts(FtClockFacts *f)
{
	unsigned int a,
				b,
				c,
				d;
	unsigned int max_std,
				max_ext;

	__cpuid(0, max_std, b, c, d);
	memcpy(f->cpu_vendor, &b, 4);
	memcpy(f->cpu_vendor + 4, &d, 4);
	memcpy(f->cpu_vendor + 8, &c, 4);
	f->cpu_vendor[12] = '\0';

	if (max_std >= 1)
	{
		__cpuid(1, a, b, c, d);
		f->cpuid_tsc = (d >> 4) & 1;
		f->hypervisor = (c >> 31) & 1;
	}
	if (max_std >= 0x15)
	{
		__cpuid_count(0x15, 0, a, b, c, d);
		/* eax = denominator, ebx = numerator, ecx = crystal Hz */
		if (a != 0 && b != 0 && c != 0)
			f->cpuid_15h_hz = (double) c * (double) b / (double) a;
	}
	if (max_std >= 0x16)
	{
		__cpuid_count(0x16, 0, a, b, c, d);
		if ((a & 0xffff) != 0)
			f->cpuid_16h_hz = (double) (a & 0xffff) * 1e6;
	}

	__cpuid(0x80000000, max_ext, b, c, d);
	if (max_ext >= 0x80000001)
	{
		__cpuid(0x80000001, a, b, c, d);
		f->cpuid_rdtscp = (d >> 27) & 1;
	}
	if (max_ext >= 0x80000007)
	{
		__cpuid(0x80000007, a, b, c, d);
		f->cpuid_invariant_tsc = (d >> 8) & 1;
	}
	if (strcmp(f->cpu_vendor, "GenuineIntel") == 0)
		f->lfence_serializing = true;
	else if ((strcmp(f->cpu_vendor, "AuthenticAMD") == 0 ||
			  strcmp(f->cpu_vendor, "HygonGenuine") == 0) &&
			 max_ext >= 0x80000021)
	{
		__cpuid(0x80000021, a, b, c, d);
		f->lfence_serializing = (a >> 2) & 1;
	}

	if (f->hypervisor)
	{
		unsigned int max_hv;

		__cpuid(0x40000000, max_hv, b, c, d);
		memcpy(f->hypervisor_vendor, &b, 4);
		memcpy(f->hypervisor_vendor + 4, &c, 4);
		memcpy(f->hypervisor_vendor + 8, &d, 4);
		f->hypervisor_vendor[12] = '\0';
		/* leaf 0x40000010: EAX = TSC frequency in kHz (VMware, some KVM) */
		if (max_hv >= 0x40000010 && max_hv < 0x40010000)
		{
			__cpuid(0x40000010, a, b, c, d);
			if (a != 0)
				f->hypervisor_hz = (double) a * 1000.0;
		}
	}
}

#endif							/* FT_HAVE_TSC */

#if FT_HAVE_COUNTER

/*
 * The ordered read calibration uses: RDTSCP if present, else LFENCE;RDTSC
 * (on aarch64, ISB;MRS).
 */
static inline uint64_t
ordered_read(bool rdtscp)
{
	return rdtscp ? ft_read_tsc_rdtscp() : ft_read_tsc_lfence();
}

/*
 * Read CLOCK_MONOTONIC_RAW bracketed between two TSC reads, keeping the
 * narrowest of several tries (a wide one was interrupted).  A coarse
 * counter pairs the clock with its first read after a step.
 */
static void
bracketed_read(bool rdtscp, bool coarse, uint64_t *tsc, int64_t *ns,
			   uint64_t *width)
{
	uint64_t	best_w = UINT64_MAX;

	for (int i = 0; i < CAL_BRACKET_TRIES; i++)
	{
		uint64_t	t0 = ordered_read(rdtscp);
		int64_t		n;
		uint64_t	t1;

		if (coarse)
		{
			uint64_t	before = t0;

			for (int spin = 0; spin < CAL_EDGE_SPINS && t0 == before; spin++)
				t0 = ordered_read(rdtscp);
		}
		n = raw_ns();
		t1 = ordered_read(rdtscp);

		if (t1 >= t0 && t1 - t0 < best_w)
		{
			best_w = t1 - t0;
			*tsc = coarse ? t0 : t0 + (t1 - t0) / 2;
			*ns = n;
		}
	}
	*width = best_w;
}

/* Do two ordered reads in a row ever return the same value? */
static bool
counter_is_coarse(bool rdtscp)
{
	uint64_t	prev = ordered_read(rdtscp);

	for (int i = 0; i < CAL_COARSE_PROBES; i++)
	{
		uint64_t	t = ordered_read(rdtscp);

		if (t == prev)
			return true;
		prev = t;
	}
	return false;
}

/* The calibration's windows: the chain of good ones, and counts. */
typedef struct CalWindows
{
	uint64_t	t0[CAL_MAX_WINDOWS],	/* TSC at each good window's ends */
				t1[CAL_MAX_WINDOWS];
	int64_t		n0[CAL_MAX_WINDOWS],	/* CLOCK_MONOTONIC_RAW there */
				n1[CAL_MAX_WINDOWS];
	double		hz[CAL_MAX_WINDOWS];	/* the rate over each */
	int			ngood;
	int			nwindows;
	int			nwide;			/* windows discarded for wide brackets */
	int64_t		window_ns;		/* length of one window */
	int64_t		budget_ns;		/* all of them */
	uint64_t	spin_max_ticks; /* bound on one window's spin, in ticks */
	bool		coarse;			/* see CAL_COARSE_PROBES */
} CalWindows;

#ifdef __linux__
/* Pin the process to its CPU, so that a migration cannot skew a window. */
static bool
pin_to_current_cpu(cpu_set_t *saved)
{
	cpu_set_t	one;
	int			cpu;

	if (sched_getaffinity(0, sizeof(*saved), saved) != 0)
		return false;
	cpu = sched_getcpu();
	if (cpu < 0)
		return false;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return sched_setaffinity(0, sizeof(one), &one) == 0;
}
#endif

/*
 * Spin (staying on the CPU keeps brackets tight) until CLOCK_MONOTONIC_RAW
 * is a window past ns_prev: NULL, or the note on a clock that failed.
 */
static const char *
spin_one_window(FtClockFacts *f, int64_t ns_prev, const CalWindows *w)
{
	uint64_t	spin_start = ft_read_tsc();
	int64_t		now;

	while ((now = raw_ns()) >= 0 && now - ns_prev < w->window_ns &&
		   ft_read_tsc() - spin_start < w->spin_max_ticks)
		;
	if (now >= 0 && now - ns_prev >= w->window_ns)
		return NULL;
	if (now < 0)
		snprintf(f->calibration_note, sizeof(f->calibration_note),
				 "CLOCK_MONOTONIC_RAW cannot be read");
	else
		snprintf(f->calibration_note, sizeof(f->calibration_note),
				 "CLOCK_MONOTONIC_RAW did not advance while the %s counted %llu ticks",
				 f->is_aarch64 ? "arch counter" : "TSC",
				 (unsigned long long) w->spin_max_ticks);
	return f->calibration_note;
}

/*
 * Do the last CAL_AGREE_WINDOWS good windows form a chain whose rates
 * agree within CAL_AGREE_PPM?  Then calibrate over their combined span.
 */
static bool
windows_agree(const CalWindows *w, FtClockFacts *f)
{
	int			first = w->ngood - CAL_AGREE_WINDOWS;
	double		lo,
				hi;

	if (first < 0)
		return false;
	lo = hi = w->hz[w->ngood - 1];
	for (int i = first; i < w->ngood; i++)
	{
		if (w->hz[i] < lo)
			lo = w->hz[i];
		if (w->hz[i] > hi)
			hi = w->hz[i];
		if (i > first && w->t0[i] != w->t1[i - 1])
			return false;
	}
	if ((hi - lo) / lo * 1e6 > CAL_AGREE_PPM)
		return false;
	f->calibrated_hz = (double) (w->t1[w->ngood - 1] - w->t0[first]) * 1e9 /
		(double) (w->n1[w->ngood - 1] - w->n0[first]);
	f->calibration_spread_ppm = (hi - lo) / lo * 1e6;
	f->calibration_ok = true;
	return true;
}

/*
 * Say why calibration failed, when no clock failure said it already: the
 * last attempt's windows.
 */
static void
calibration_failure_note(FtClockFacts *f, const CalWindows *w, int attempts)
{
	if (f->calibration_note[0] != '\0')
		return;
	if (w->ngood > 1)
	{
		double		sorted[CAL_MAX_WINDOWS];

		memcpy(sorted, w->hz, sizeof(double) * w->ngood);
		qsort(sorted, w->ngood, sizeof(double), cmp_double);
		snprintf(f->calibration_note, sizeof(f->calibration_note),
				 "%d windows in %d ms did not agree within %.0f ppm (%d had wide brackets; measured %.0f to %.0f kHz)%s",
				 w->nwindows, (int) (w->budget_ns / 1000000), CAL_AGREE_PPM, w->nwide,
				 sorted[0] / 1000.0, sorted[w->ngood - 1] / 1000.0,
				 attempts > 1 ? "; nor did those of the attempts before" : "");
	}
	else
		snprintf(f->calibration_note, sizeof(f->calibration_note),
				 "%d windows in %d ms did not agree within %.0f ppm (%d had wide brackets: the machine may be too busy)%s",
				 w->nwindows, (int) (w->budget_ns / 1000000), CAL_AGREE_PPM, w->nwide,
				 attempts > 1 ? "; nor did those of the attempts before" : "");
}

/*
 * One attempt at calibration (ft_calibrate_tsc), in the windows w set up:
 * calibration_ok when they agree; a note when a clock failed.
 */
static void
calibrate_attempt(FtClockFacts *f, CalWindows *w)
{
	int64_t		deadline = raw_ns();
	uint64_t	tsc_prev,
				w_prev,
				min_w;
	int64_t		ns_prev;

	if (deadline < 0)
	{
		snprintf(f->calibration_note, sizeof(f->calibration_note),
				 "CLOCK_MONOTONIC_RAW cannot be read");
		return;
	}
	deadline += w->budget_ns;
	bracketed_read(f->rdtscp, w->coarse, &tsc_prev, &ns_prev, &w_prev);
	min_w = w_prev;
	while (raw_ns() + w->window_ns < deadline &&
		   w->ngood < CAL_MAX_WINDOWS && w->nwindows < CAL_MAX_WINDOWS)
	{
		uint64_t	tsc,
					width;
		int64_t		ns;

		if (spin_one_window(f, ns_prev, w) != NULL)
			break;
		bracketed_read(f->rdtscp, w->coarse, &tsc, &ns, &width);
		w->nwindows++;
		if (width < min_w)
			min_w = width;
		if (tsc > tsc_prev && ns > ns_prev)
		{
			if (w_prev <= 2 * min_w + CAL_BRACKET_SLACK &&
				width <= 2 * min_w + CAL_BRACKET_SLACK)
			{
				w->t0[w->ngood] = tsc_prev;
				w->n0[w->ngood] = ns_prev;
				w->t1[w->ngood] = tsc;
				w->n1[w->ngood] = ns;
				w->hz[w->ngood] = (double) (tsc - tsc_prev) * 1e9 /
					(double) (ns - ns_prev);
				w->ngood++;
				if (windows_agree(w, f))
					break;
			}
			else
				w->nwide++;
		}
		tsc_prev = tsc, ns_prev = ns, w_prev = width;
	}
}

/*
 * Calibrate the TSC against CLOCK_MONOTONIC_RAW (not slewed by NTP), pinned
 * to one CPU, in consecutive windows with bracketed reads, within about
 * 100 ms.  A window whose brackets are much wider than the narrowest seen
 * was interrupted and is discarded; windows_agree decides when to stop.
 * Windows that did not agree (a busy moment) are tried again from scratch,
 * up to CAL_ATTEMPTS times in all: a postmaster whose fasttime.clock_source
 * is "tsc" refuses to start without a frequency, and a backend that
 * detects for itself keeps clock_gettime() for its life.  A clock that
 * failed is not tried again.
 */
static void
ft_calibrate_tsc(FtClockFacts *f)
{
#ifdef __linux__
	cpu_set_t	saved;
	bool		pinned = pin_to_current_cpu(&saved);
#endif
	CalWindows	w;
	int			attempt = 0;

	do
	{
		memset(&w, 0, sizeof(w));
		w.coarse = counter_is_coarse(f->rdtscp);
		w.window_ns = CAL_WINDOW_NS;
		if (w.coarse)
			w.window_ns = CAL_MAX_WINDOW_NS;
		else if (f->cntfrq_hz > 0 &&
				 CAL_MIN_WINDOW_TICKS * 1e9 / f->cntfrq_hz > (double) CAL_WINDOW_NS)
			w.window_ns = CAL_MIN_WINDOW_TICKS * 1e9 / f->cntfrq_hz >
				(double) CAL_MAX_WINDOW_NS ? CAL_MAX_WINDOW_NS :
				(int64_t) (CAL_MIN_WINDOW_TICKS * 1e9 / f->cntfrq_hz);
		w.budget_ns = CAL_BUDGET_NS / CAL_WINDOW_NS * w.window_ns;
		w.spin_max_ticks = CAL_SPIN_MAX_TICKS;
		if (f->cntfrq_hz > 0 && f->cntfrq_hz * CAL_SPIN_MAX_S < (double) CAL_SPIN_MAX_TICKS)
			w.spin_max_ticks = (uint64_t) (f->cntfrq_hz * CAL_SPIN_MAX_S);
		calibrate_attempt(f, &w);
		attempt++;
	} while (!f->calibration_ok && f->calibration_note[0] == '\0' &&
			 attempt < CAL_ATTEMPTS);

#ifdef __linux__
	if (pinned)
		(void) sched_setaffinity(0, sizeof(saved), &saved);
#endif
	if (!f->calibration_ok)
		calibration_failure_note(f, &w, attempt);
}

#endif							/* FT_HAVE_COUNTER */

/* Read one line of a sysfs file, without the trailing newline/space. */
static void
read_sysfs_line(const char *path, char *buf, size_t len)
{
	FILE	   *fp = fopen(path, "r");
	size_t		n;

	buf[0] = '\0';
	if (fp == NULL)
		return;
	if (fgets(buf, (int) len, fp) == NULL)
		buf[0] = '\0';
	fclose(fp);
	n = strlen(buf);
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
}

/*
 * The kernel's current clocksource and the ones it still offers: two small
 * sysfs reads, cheap enough to repeat.  False when current is unreadable.
 */
bool
ft_read_kernel_clocksource(char *current, size_t curlen,
						   char *available, size_t availlen)
{
	read_sysfs_line(CLOCKSOURCE_DIR "current_clocksource", current, curlen);
	read_sysfs_line(CLOCKSOURCE_DIR "available_clocksource",
					available, availlen);
#ifdef FASTTIME_FAULT_INJECTION
	if (facts_faults && facts_faults->fake_kernel_clocksource)
		facts_faults->fake_kernel_clocksource(current, curlen,
											  available, availlen);
#endif
	return current[0] != '\0';
}

#if FT_HAVE_TSC
/* Read the first "flags" line of /proc/cpuinfo into the kernel's view. */
static void
read_kernel_cpu_flags(FtClockFacts *f)
{
	const char *path = "/proc/cpuinfo";
	FILE	   *fp;
	char		line[8192];
	bool		found = false;

#ifdef FASTTIME_FAULT_INJECTION
	if (facts_faults && facts_faults->cpuinfo_file &&
		facts_faults->cpuinfo_file() != NULL)
		path = facts_faults->cpuinfo_file();
#endif
	fp = fopen(path, "r");
	if (fp != NULL)
	{
		while (fgets(line, sizeof(line), fp) != NULL)
		{
			char	   *colon;

			if (strncmp(line, "flags", 5) != 0 ||
				(colon = strchr(line, ':')) == NULL)
				continue;
			ft_parse_cpu_flags(colon + 1, f);
			found = true;
			break;
		}
		fclose(fp);
	}
	if (!found)
		ft_parse_cpu_flags(NULL, f);
}
#endif

/*
 * Median cost of one read, in ns: the median of 15 rounds of 1000 reads,
 * so that one interrupt does not count.
 */
typedef enum
{
	READ_CLOCK_GETTIME,
	READ_TSC,
	READ_TSC_RDTSCP,
	READ_TSC_LFENCE
} ReadKind;

static double
measure_read_cost(ReadKind kind)
{
	double		rounds[15];
	volatile uint64_t sink = 0;

	for (int r = 0; r < 15; r++)
	{
		int64_t		t0 = ft_read_clock_gettime_ns();
		uint64_t	acc = 0;

		for (int i = 0; i < 1000; i++)
		{
			switch (kind)
			{
				case READ_CLOCK_GETTIME:
					acc += (uint64_t) ft_read_clock_gettime_ns();
					break;
				case READ_TSC:
					acc += ft_read_tsc();
					break;
				case READ_TSC_RDTSCP:
					acc += ft_read_tsc_rdtscp();
					break;
				case READ_TSC_LFENCE:
					acc += ft_read_tsc_lfence();
					break;
			}
		}
		sink += acc;
		rounds[r] = (double) (ft_read_clock_gettime_ns() - t0) / 1000.0;
	}
	(void) sink;
	qsort(rounds, 15, sizeof(double), cmp_double);
	return rounds[7];
}

#if FT_HAVE_ARCH_COUNTER
/* aarch64: /proc/cpuinfo's "CPU implementer" as the CPU vendor, if any. */
static void
read_arm_implementer(FtClockFacts *f)
{
	FILE	   *fp = fopen("/proc/cpuinfo", "r");
	char		line[256];
	unsigned int impl;

	if (fp == NULL)
		return;
	while (fgets(line, sizeof(line), fp) != NULL)
	{
		char	   *colon;

		if (strncmp(line, "CPU implementer", 15) != 0 ||
			(colon = strchr(line, ':')) == NULL)
			continue;
		if (sscanf(colon + 1, " %x", &impl) == 1)
			snprintf(f->cpu_vendor, sizeof(f->cpu_vendor),
					 "implementer %02x", impl & 0xff);
		break;
	}
	fclose(fp);
}
#endif

/* Gather every fact; elsewhere than x86-64 and aarch64, no counter's. */
void
ft_detect_clock_facts(FtClockFacts *f)
{
	memset(f, 0, sizeof(*f));

	(void) ft_read_kernel_clocksource(f->kernel_clocksource,
									  sizeof(f->kernel_clocksource),
									  f->kernel_available,
									  sizeof(f->kernel_available));
	f->ns_per_read_clock_gettime = measure_read_cost(READ_CLOCK_GETTIME);

#if FT_HAVE_TSC
	f->is_x86_64 = true;
	read_cpuid_facts(f);
	read_kernel_cpu_flags(f);
	ft_merge_cpu_flags(f);
	if (f->has_tsc)
	{
		f->ns_per_read_tsc = measure_read_cost(READ_TSC);
		f->ns_per_read_tsc_ordered =
			measure_read_cost(f->rdtscp ? READ_TSC_RDTSCP : READ_TSC_LFENCE);
		ft_calibrate_tsc(f);
		ft_choose_frequency(f);
	}
	else
		snprintf(f->calibration_note, sizeof(f->calibration_note),
				 "the CPU has no TSC%s",
				 f->cpuid_tsc ? " (the kernel does not list one)" : "");
#elif FT_HAVE_ARCH_COUNTER
	/*
	 * Linux lets EL0 read CNTVCT_EL0 on every arm64 system (trapping it
	 * where an erratum forbids it): the architecture's promises are the
	 * "cpuid" view.
	 */
	f->is_aarch64 = true;
	read_arm_implementer(f);
	f->cpuid_tsc = true;
	f->cpuid_invariant_tsc = true;
	ft_parse_cpu_flags(NULL, f);
	ft_merge_cpu_flags(f);
	f->cntfrq_hz = (double) ft_read_counter_frequency();
	f->ns_per_read_tsc = measure_read_cost(READ_TSC);
	f->ns_per_read_tsc_ordered = measure_read_cost(READ_TSC_LFENCE);
	ft_calibrate_tsc(f);
	ft_choose_frequency(f);
#else
	snprintf(f->cpu_flags_note, sizeof(f->cpu_flags_note),
			 "not an x86-64 CPU: no TSC features to check");
	snprintf(f->calibration_note, sizeof(f->calibration_note),
			 "not an x86-64 CPU");
	snprintf(f->frequency_note, sizeof(f->frequency_note),
			 "not an x86-64 CPU");
#endif
	f->detected = true;
#ifdef FASTTIME_FAULT_INJECTION
	if (facts_faults && facts_faults->apply_facts)
		facts_faults->apply_facts(f);
#endif
}
