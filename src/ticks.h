/*-------------------------------------------------------------------------
 *
 * ticks.h
 *	  Reading the clocks fasttime knows about, and converting counter
 *	  ticks to nanoseconds.
 *
 * The counter is the TSC on x86-64 (RDTSC; ordered: LFENCE;RDTSC, or
 * RDTSCP) and the architected generic timer's virtual count on aarch64
 * (MRS CNTVCT_EL0; ordered: ISB;MRS, the ISB making the read wait for
 * every earlier instruction, as the architecture documents for CNTVCT_EL0
 * reads that must not be hoisted).  The node wrappers' ordered read is
 * LFENCE;RDTSC (ft_node_ticks_ordered()); RDTSCP is read only by the
 * calibration, the measured cost of an ordered read (ns_per_read_tsc_ordered)
 * and fasttime_overhead()'s tsc_ordered source, on CPUs that have it.
 * Most of fasttime says
 * "TSC" in its identifiers for either; what users read names the clock of
 * the architecture (see ft_counter_name()).
 *
 * Everything here is inline and free of PostgreSQL server dependencies so
 * that the node wrapper, the SQL measurement functions and the standalone
 * unit tests all share one implementation of each clock read and of the
 * conversion.
 *
 * The conversion is ns = (ticks * mult + 2^(FT_CONV_SHIFT-1)) >>
 * FT_CONV_SHIFT, rounded to the nearest nanosecond, with mult precomputed
 * from the counter frequency.  With a 32-bit shift the rounding of
 * mult costs at most 0.5 / mult: about 1 ppb at 10 GHz and 12 ppb at the
 * 100 GHz upper limit, far below the calibration's own uncertainty.  The
 * product is formed in 128 bits, and on x86-64 frequencies below 600 MHz
 * are refused, so that no interval a 63-bit tick delta can express (over
 * 480 years) overflows 64 bits of nanoseconds.  aarch64 counters run at
 * 1 MHz to 1 GHz (CNTFRQ_EL0: 19.2, 25, 50, 62.5 MHz are common, 1 GHz
 * from Armv8.6), so there the floor is FT_CONV_MIN_HZ = 1 MHz and a
 * conversion beyond 2^64 ns saturates instead.  A negative delta (the TSCs of
 * two CPUs are not perfectly in step, so a process that migrates can see time go backwards
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

/*
 * FT_HAVE_TSC: the x86-64 TSC and CPUID are there.  FT_HAVE_ARCH_COUNTER:
 * the aarch64 generic timer (CNTVCT_EL0, CNTFRQ_EL0) is.  FT_HAVE_COUNTER:
 * either, i.e. fasttime has a counter clock on this build.
 */
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

/*
 * Lowest counter frequency the conversion accepts on this build (see the
 * head of this file); FT_CONV_MAX_HZ the highest.
 */
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
 * Compute the multiplier for a counter running at hz ticks per second.
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
	 * that slowly (an aarch64 build saturates instead, and takes counters
	 * down to 1 MHz).  Above 100 GHz mult loses precision.  NaN fails both.
	 */
	if (!(hz >= FT_CONV_MIN_HZ && hz <= FT_CONV_MAX_HZ))
		return false;
	m = (1e9 * 4294967296.0) / hz;
	conv->mult = (uint64_t) (m + 0.5);
	conv->hz = hz;
	return true;
}

/*
 * Convert a tick delta to nanoseconds, rounded to the nearest nanosecond.
 * Negative deltas count as zero.
 *
 * Rounding, not truncating: the node wrapper converts every call of every
 * node separately and sums the results, so truncation would lose half a
 * nanosecond per call on average (1-3 % of a node that costs 20-40 ns a
 * call).  Adding half of 2^FT_CONV_SHIFT before the shift makes each
 * conversion unbiased, at the cost of one addition: no division and no
 * branch beyond the sign test.
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
	 * Platforms without __int128 (and so without the TSC path): the same
	 * 128-bit product and rounding, from four 32x32-bit partial products.
	 * Exact for every multiplier and every 63-bit delta; the result fits 64
	 * bits for the frequencies ft_conv_init accepts.  (Multiplying only the
	 * high half of the delta separately, as this once did, overflowed below
	 * 1 GHz, where mult exceeds 2^32.)
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
 * Plain RDTSC: not ordered with respect to surrounding instructions, so it
 * can be taken while a load issued before it is still waiting on memory.
 * The node wrappers read it only where fasttime.ordered_reads asks for
 * plain reads (off); by default (on) they read ft_read_tsc_lfence() at
 * both ends of a call, so that the latency of a call's cache misses is
 * not paid after its read and credited to its parent.  Also read by the tick of profiled timing, the
 * clock cross-check's stamps and fasttime_overhead()'s tsc source.
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
 * LFENCE;RDTSC: the ordered read for CPUs without RDTSCP.  LFENCE is
 * dispatch-serializing on Intel, and on AMD when CPUID 0x80000021 EAX bit 2
 * says so.  On aarch64 the ordered read is ISB;MRS CNTVCT_EL0: the ISB
 * flushes the pipeline, so the counter is read after every earlier
 * instruction has completed (the "memory" clobber also keeps the compiler
 * from moving memory accesses across it).
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

/*
 * CNTFRQ_EL0: the frequency of the aarch64 system counter as the firmware
 * programmed it, in Hz; 0 elsewhere.  Firmware has been known to get it
 * wrong, so it is only a candidate that calibration must confirm.
 */
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

/*
 * RDTSCP: waits for earlier instructions to retire before reading.  Only
 * called where the facts say the CPU has it (both CPUID and the kernel).
 */
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
 * The reads the node wrappers do: plain, and ordered (LFENCE;RDTSC; whether
 * a call's two reads are ordered is fasttime.ordered_reads, default on).  A fault-injection build (compiled with -DFASTTIME_FAULT_INJECTION,
 * never a normal build) routes them through a replaceable source so tests
 * can make the TSC jump or crawl.
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
