/*-------------------------------------------------------------------------
 *
 * ticks.h
 *	  Reading the clocks fasttime knows about, and converting TSC ticks
 *	  to nanoseconds.
 *
 * Everything here is inline and free of PostgreSQL server dependencies so
 * that the node wrapper, the SQL measurement functions and the standalone
 * unit tests all share one implementation of each clock read and of the
 * conversion.
 *
 * The conversion is ns = (ticks * mult) >> FT_CONV_SHIFT, with mult
 * precomputed from the TSC frequency.  With a 32-bit shift the rounding of
 * mult costs at most 0.5 / mult: about 1 ppb at 10 GHz and 12 ppb at the
 * 100 GHz upper limit, far below the calibration's own uncertainty.  The
 * product is formed in 128 bits, and frequencies below 600 MHz are
 * refused, so that no interval a 63-bit tick delta can express (over 480
 * years) overflows 64 bits of nanoseconds.  A negative delta (the TSCs of two CPUs are not
 * perfectly in step, so a process that migrates can see time go backwards
 * by a few tens of nanoseconds) counts as zero.
 *
 * src/ticks.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FASTTIME_TICKS_H
#define FASTTIME_TICKS_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#if defined(__x86_64__) && defined(__SIZEOF_INT128__) && \
	(defined(__GNUC__) || defined(__clang__))
#define FT_HAVE_TSC 1
#include <x86intrin.h>
#else
#define FT_HAVE_TSC 0
#endif

#define FT_CONV_SHIFT 32
#define FT_NS_PER_SEC 1000000000LL

/* Precomputed tick-to-nanosecond conversion for one frequency. */
typedef struct FtTickConv
{
	uint64_t	mult;			/* ns per tick, scaled by 2^FT_CONV_SHIFT */
	double		hz;				/* the frequency mult was derived from */
} FtTickConv;

/*
 * Compute the multiplier for a TSC running at hz ticks per second.
 *
 * Done once, when the frequency becomes known; the hot path never divides.
 * Returns false (and leaves *conv zeroed) for frequencies the conversion
 * cannot represent exactly enough, so a bogus frequency can never turn into
 * silently wrong times.
 */
static inline bool
ft_conv_init(FtTickConv *conv, double hz)
{
	double		m;

	conv->mult = 0;
	conv->hz = 0;
	/*
	 * Below 600 MHz, 2^63 ticks would exceed 2^64 ns; no invariant TSC runs
	 * that slowly.  Above 100 GHz mult loses precision.  NaN fails both.
	 */
	if (!(hz >= 6e8 && hz <= 1e11))
		return false;
	m = (1e9 * 4294967296.0) / hz;
	conv->mult = (uint64_t) (m + 0.5);
	conv->hz = hz;
	return true;
}

/*
 * Convert a tick delta to nanoseconds.  Negative deltas count as zero.
 */
static inline uint64_t
ft_ticks_to_ns(const FtTickConv *conv, int64_t delta)
{
#if defined(__SIZEOF_INT128__)
	unsigned __int128 p;

	if (delta <= 0)
		return 0;
	p = (unsigned __int128) (uint64_t) delta * conv->mult;
	return (uint64_t) (p >> FT_CONV_SHIFT);
#else
	uint64_t	d,
				hi,
				lo;

	if (delta <= 0)
		return 0;
	/*
	 * Split multiply, only for platforms without __int128 (and so without
	 * the TSC path); exact for the frequencies ft_conv_init accepts, where
	 * mult < 2^33.
	 */
	d = (uint64_t) delta;
	hi = (d >> 32) * conv->mult;
	lo = ((d & 0xffffffffu) * conv->mult) >> FT_CONV_SHIFT;
	return hi + lo;
#endif
}

/*
 * Plain RDTSC: not ordered with respect to surrounding instructions.  This
 * is what the node wrapper uses; out-of-order slop of a few cycles is far
 * below the resolution anyone reads EXPLAIN output at, and the ordered
 * variants cost several times more per read.
 */
static inline uint64_t
ft_read_tsc(void)
{
#if FT_HAVE_TSC
	return __rdtsc();
#else
	return 0;
#endif
}

/* RDTSCP: waits for earlier instructions to retire before reading. */
static inline uint64_t
ft_read_tsc_rdtscp(void)
{
#if FT_HAVE_TSC
	unsigned int aux;

	return __rdtscp(&aux);
#else
	return 0;
#endif
}

/*
 * LFENCE;RDTSC: the ordered read for CPUs without RDTSCP.  LFENCE is
 * dispatch-serializing on Intel, and on AMD when CPUID 0x80000021 EAX bit 2
 * says so.
 */
static inline uint64_t
ft_read_tsc_lfence(void)
{
#if FT_HAVE_TSC
	_mm_lfence();
	return __rdtsc();
#else
	return 0;
#endif
}

/*
 * The read the node wrapper does.  A fault-injection build (compiled with
 * -DFASTTIME_FAULT_INJECTION, never a normal build) routes it through a
 * replaceable source so tests can make the TSC jump or crawl.
 */
#ifdef FASTTIME_FAULT_INJECTION
extern uint64_t ft_fault_read_tsc(void);
#define ft_node_ticks() ft_fault_read_tsc()
#else
#define ft_node_ticks() ft_read_tsc()
#endif

/* The clock stock PostgreSQL instrumentation uses, in nanoseconds. */
static inline int64_t
ft_read_clock_gettime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * FT_NS_PER_SEC + ts.tv_nsec;
}

#endif							/* FASTTIME_TICKS_H */
