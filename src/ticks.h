/*-------------------------------------------------------------------------
 *
 * ticks.h
 *	  Reading the clocks fasttime knows about, and converting counter
 *	  ticks to nanoseconds.
 *
 * The counter is the TSC on x86-64 (RDTSC; ordered: LFENCE;RDTSC, or
 * RDTSCP) and CNTVCT_EL0 on aarch64 (ordered: ISB;MRS); identifiers say
 * "TSC" for either.  All inline and free of server dependencies, so the
 * wrappers, the SQL functions and the unit tests share each read and the
 * conversion.
 *
 * The conversion is ns = (ticks * mult + 2^31) >> 32, rounded to nearest,
 * mult precomputed from the frequency (its rounding costs at most 12 ppb
 * at 100 GHz), the product in 128 bits.  On x86-64 frequencies below
 * 600 MHz are refused, so that no 63-bit delta overflows 64 bits of
 * nanoseconds; aarch64 counters go down to 1 MHz, and a conversion beyond
 * 2^64 ns saturates there.  A negative delta (CPUs' TSCs slightly out of
 * step) counts as zero.
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

/* the x86-64 TSC and CPUID, the aarch64 generic timer, or either */
#if defined(__x86_64__) && defined(__SIZEOF_INT128__) && \
	(defined(__GNUC__) || defined(__clang__))
#define FT_HAVE_TSC 1
#define FT_HAVE_ARCH_COUNTER 0
#include <x86intrin.h>
#elif defined(__aarch64__) && defined(__SIZEOF_INT128__) && \
	(defined(__GNUC__) || defined(__clang__))
#define FT_HAVE_TSC 0
#define FT_HAVE_ARCH_COUNTER 1
#else
#define FT_HAVE_TSC 0
#define FT_HAVE_ARCH_COUNTER 0
#endif
#define FT_HAVE_COUNTER (FT_HAVE_TSC || FT_HAVE_ARCH_COUNTER)

/* the counter frequencies the conversion accepts on this build */
#if FT_HAVE_ARCH_COUNTER
#define FT_CONV_MIN_HZ 1e6
#else
#define FT_CONV_MIN_HZ 6e8
#endif
#define FT_CONV_MAX_HZ 1e11

#define FT_CONV_SHIFT 32
#define FT_NS_PER_SEC 1000000000LL

/* Precomputed tick-to-nanosecond conversion for one frequency. */
typedef struct FtTickConv
{
	uint64_t	mult;			/* ns per tick, scaled by 2^FT_CONV_SHIFT */
	double		hz;				/* the frequency mult was derived from */
} FtTickConv;

/*
 * Compute the multiplier for hz once, so that the hot path never divides;
 * false (and *conv zeroed) for a frequency it cannot convert exactly
 * enough, so a bogus frequency never turns into silently wrong times.
 */
static inline bool
ft_conv_init(FtTickConv *conv, double hz)
{
	double		m;

	conv->mult = 0;
	conv->hz = 0;
	/* NaN fails both */
	if (!(hz >= FT_CONV_MIN_HZ && hz <= FT_CONV_MAX_HZ))
		return false;
	m = (1e9 * 4294967296.0) / hz;
	conv->mult = (uint64_t) (m + 0.5);
	conv->hz = hz;
	return true;
}

/*
 * Convert a tick delta to nanoseconds, rounded to nearest (negative: 0).
 * Rounding, because each call's time is converted separately and summed:
 * truncating would lose half a nanosecond a call.
 */
static inline uint64_t
ft_ticks_to_ns(const FtTickConv *conv, int64_t delta)
{
#if defined(__SIZEOF_INT128__)
	unsigned __int128 p;

	if (delta <= 0)
		return 0;
	p = (unsigned __int128) (uint64_t) delta * conv->mult +
		((uint64_t) 1 << (FT_CONV_SHIFT - 1));
#if FT_HAVE_ARCH_COUNTER
	/* below 500 MHz a huge delta can exceed 2^64 ns: saturate */
	if ((p >> (64 + FT_CONV_SHIFT)) != 0)
		return UINT64_MAX;
#endif
	return (uint64_t) (p >> FT_CONV_SHIFT);
#else
	uint64_t	d,
				d_lo,
				d_hi,
				m_lo,
				m_hi,
				ll,
				lh,
				hl,
				hh,
				mid,
				lo,
				hi;

	if (delta <= 0)
		return 0;

	/*
	 * Without __int128 (and so without a counter): the same 128-bit
	 * product and rounding, from four 32x32-bit partial products.
	 */
	d = (uint64_t) delta;
	d_lo = d & 0xffffffffu;
	d_hi = d >> 32;
	m_lo = conv->mult & 0xffffffffu;
	m_hi = conv->mult >> 32;
	ll = d_lo * m_lo;
	lh = d_lo * m_hi;
	hl = d_hi * m_lo;
	hh = d_hi * m_hi;
	/* bits 32..95 of the product, without losing carries */
	mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
	lo = (mid << 32) | (ll & 0xffffffffu);
	hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
	/* round: add 2^(shift-1) to the 128-bit value hi:lo */
	lo += (uint64_t) 1 << (FT_CONV_SHIFT - 1);
	hi += (lo < ((uint64_t) 1 << (FT_CONV_SHIFT - 1)));
	/* shift right by 32 */
	return (hi << (64 - FT_CONV_SHIFT)) | (lo >> FT_CONV_SHIFT);
#endif
}

/*
 * Plain RDTSC: not ordered, so it can be taken while an earlier load still
 * waits on memory, whose latency then lands after the read.  The wrappers
 * use it only with fasttime.ordered_reads = off.
 */
static inline uint64_t
ft_read_tsc(void)
{
#if FT_HAVE_TSC
	return __rdtsc();
#elif FT_HAVE_ARCH_COUNTER
	uint64_t	v;

	/* plain MRS: like RDTSC, may be taken ahead of earlier instructions */
	__asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
	return v;
#else
	return 0;
#endif
}

/*
 * LFENCE;RDTSC: the ordered read (LFENCE is dispatch-serializing on Intel,
 * and on AMD where CPUID 0x80000021 EAX bit 2 says so); on aarch64 ISB;MRS.
 */
static inline uint64_t
ft_read_tsc_lfence(void)
{
#if FT_HAVE_TSC
	_mm_lfence();
	return __rdtsc();
#elif FT_HAVE_ARCH_COUNTER
	uint64_t	v;

	__asm__ __volatile__("isb\n\tmrs %0, cntvct_el0" : "=r"(v) : : "memory");
	return v;
#else
	return 0;
#endif
}

/* CNTFRQ_EL0 in Hz (0 elsewhere): firmware's, for calibration to confirm */
static inline uint64_t
ft_read_counter_frequency(void)
{
#if FT_HAVE_ARCH_COUNTER
	uint64_t	v;

	__asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(v));
	return v & 0xffffffffu;		/* bits 63:32 are RES0 */
#else
	return 0;
#endif
}

#ifdef FASTTIME_FAULT_INJECTION
/* test/fault/fault_injection.c: RDTSCP is a faked fact, the CPU cannot run it */
extern bool ft_fault_no_real_rdtscp;
#endif

/* RDTSCP: only where the facts say the CPU has it. */
static inline uint64_t
ft_read_tsc_rdtscp(void)
{
#if FT_HAVE_TSC
	unsigned int aux;

#ifdef FASTTIME_FAULT_INJECTION
	if (ft_fault_no_real_rdtscp)
		return ft_read_tsc_lfence();
#endif
	return __rdtscp(&aux);
#elif FT_HAVE_ARCH_COUNTER
	/* aarch64 has no RDTSCP; facts->rdtscp is never set there */
	return ft_read_tsc_lfence();
#else
	return 0;
#endif
}

/*
 * The node wrappers' reads, plain and ordered; a fault build routes them
 * through a source tests can make jump or crawl.
 */
#ifdef FASTTIME_FAULT_INJECTION
extern uint64_t ft_fault_read_tsc(void);
extern uint64_t ft_fault_read_tsc_ordered(void);
#define ft_node_ticks() ft_fault_read_tsc()
#define ft_node_ticks_ordered() ft_fault_read_tsc_ordered()
#else
#define ft_node_ticks() ft_read_tsc()
#define ft_node_ticks_ordered() ft_read_tsc_lfence()
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
