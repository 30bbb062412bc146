/*
 * test/tsc_watch.c: a witness, outside the server, of the machine's own
 * TSC jumps.
 *
 * fasttime compares the TSC with clock_gettime() over every TSC-timed query
 * and warns when they disagree ("the TSC disagreed with clock_gettime during
 * this query").  The tests assert that no such WARNING appears when no
 * fault is injected.  On a guest whose kernel does not trust the TSC (kind
 * (b): clocksource=kvm-clock tsc=unstable) the TSC can really jump: when the
 * hypervisor snapshots and resumes or moves the VM, the guest's TSC may
 * advance by days within one query while kvm-clock does not.  The WARNING
 * is then right, and a test that fails on it would blame fasttime for the
 * machine.
 *
 * This program tells the two apart without trusting fasttime: it reads the
 * TSC (the arch counter on aarch64) and CLOCK_MONOTONIC every millisecond,
 * and logs every interval over which they disagree by more than
 * TSC_WATCH_TOL_NS + TSC_WATCH_TOL_PPM of the interval.  A test that sees
 * fasttime's WARNING then accepts it only if this witness saw a jump of the
 * same sign and at least the size the WARNING reports (test/cluster.sh
 * ft_tsc_explained, FtTest::ft_tsc_explained).  On a machine whose TSC
 * never jumps nothing is ever logged and the tests are as strict as before.
 *
 * Usage: tsc_watch LOGFILE PID
 *   appends "ready HZ" once calibrated (about 200 ms), then a line
 *   "jump EPOCH_MS DIFF_NS" per disagreement (DIFF_NS > 0: the TSC ran
 *   ahead of CLOCK_MONOTONIC); runs until killed.  On a CPU with no counter
 *   it logs "unsupported" and exits 0.  Exits when process PID (the stage
 *   script that started it) has ended, so no witness outlives its tests.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#define HAVE_COUNTER 1
static inline uint64_t
read_counter(void)
{
	_mm_lfence();
	return __rdtsc();
}
#elif defined(__aarch64__)
#define HAVE_COUNTER 1
static inline uint64_t
read_counter(void)
{
	uint64_t	v;

	__asm__ __volatile__("isb\n\tmrs %0, cntvct_el0" : "=r"(v) : : "memory");
	return v;
}
#else
#define HAVE_COUNTER 0
static inline uint64_t
read_counter(void)
{
	return 0;
}
#endif

/* disagreement logged: this much plus this share of the interval */
#define TSC_WATCH_TOL_NS	100000
#define TSC_WATCH_TOL_PPM	2000
/* a sample whose bracketing clock reads are wider than this is retaken */
#define TSC_WATCH_BRACKET_NS	20000

static int64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t
epoch_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * One sample: the counter bracketed by two CLOCK_MONOTONIC reads, retaken
 * while the bracket is wide (a preemption between the reads would otherwise
 * look like a disagreement).
 */
static void
sample(uint64_t *tsc, int64_t *ns)
{
	for (int i = 0; i < 100; i++)
	{
		int64_t		a = mono_ns();
		uint64_t	t = read_counter();
		int64_t		b = mono_ns();

		*tsc = t;
		*ns = a + (b - a) / 2;
		if (b - a <= TSC_WATCH_BRACKET_NS)
			return;
	}
}

static void
sleep_ns(long ns)
{
	struct timespec ts = {0, ns};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

int
main(int argc, char **argv)
{
	FILE	   *log;
	uint64_t	t0,
				t1,
				tprev;
	int64_t		n0,
				n1,
				nprev;
	double		hz;
	pid_t		follow;

	if (argc != 3 || (follow = (pid_t) atol(argv[2])) <= 0)
	{
		fprintf(stderr, "usage: %s LOGFILE PID\n", argv[0]);
		return 2;
	}
	log = fopen(argv[1], "a");
	if (log == NULL)
	{
		perror(argv[1]);
		return 1;
	}
	if (!HAVE_COUNTER)
	{
		fprintf(log, "unsupported\n");
		fclose(log);
		return 0;
	}

	/* calibrate over 200 ms: both samples within 20 us, so within 100 ppm */
	sample(&t0, &n0);
	sleep_ns(200000000);
	sample(&t1, &n1);
	if (n1 <= n0 || t1 <= t0)
	{
		fprintf(log, "unsupported\n");
		fclose(log);
		return 0;
	}
	hz = (double) (t1 - t0) * 1e9 / (double) (n1 - n0);
	fprintf(log, "ready %.0f\n", hz);
	fflush(log);

	tprev = t1;
	nprev = n1;
	for (;;)
	{
		uint64_t	t;
		int64_t		n,
					dn;
		double		dt_ns,
					diff;

		sleep_ns(1000000);
		if (kill(follow, 0) != 0 && errno == ESRCH)
			break;
		sample(&t, &n);
		dn = n - nprev;
		dt_ns = (double) (int64_t) (t - tprev) * 1e9 / hz;
		diff = dt_ns - (double) dn;
		if (diff > TSC_WATCH_TOL_NS + (double) dn * TSC_WATCH_TOL_PPM / 1e6 ||
			-diff > TSC_WATCH_TOL_NS + (double) dn * TSC_WATCH_TOL_PPM / 1e6)
		{
			fprintf(log, "jump %lld %.0f\n", (long long) epoch_ms(), diff);
			fflush(log);
		}
		tprev = t;
		nprev = n;
	}
	return 0;
}
