/*-------------------------------------------------------------------------
 *
 * clock_facts.h
 *	  What fasttime knows about this machine's clocks.
 *
 * The facts are gathered once (clock_detect.h: CPUID traps to the
 * hypervisor on virtual machines and calibration takes tens of
 * milliseconds) and then only read.  The structure and what is declared
 * here (clock_facts.c) are plain C, so the decision logic and its unit
 * tests can be built without a server.
 *
 * src/clock_facts.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FASTTIME_CLOCK_FACTS_H
#define FASTTIME_CLOCK_FACTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where the TSC frequency in use came from. */
typedef enum FtFreqOrigin
{
	FT_FREQ_NONE = 0,
	FT_FREQ_CPUID_15H,			/* CPUID leaf 0x15: crystal * ratio */
	FT_FREQ_CPUID_16H,			/* CPUID leaf 0x16: base frequency */
	FT_FREQ_HYPERVISOR,			/* hypervisor leaf 0x40000010 */
	FT_FREQ_CALIBRATION,		/* measured against CLOCK_MONOTONIC_RAW */
	FT_FREQ_CNTFRQ				/* aarch64: CNTFRQ_EL0 */
} FtFreqOrigin;

typedef struct FtClockFacts
{
	bool		detected;		/* facts have been gathered */

	/*
	 * CPU.  The counter is the TSC on x86-64 and the architected counter
	 * CNTVCT_EL0 on aarch64; the fields named tsc describe whichever it is.
	 */
	bool		is_x86_64;
	bool		is_aarch64;
	char		cpu_vendor[16]; /* "GenuineIntel", "AuthenticAMD", ...;
								 * aarch64: "implementer 0xNN" (MIDR) */
	/*
	 * has_tsc, invariant_tsc and rdtscp are what fasttime goes by: CPUID's
	 * view, and the kernel's where it could be read (see
	 * ft_merge_cpu_flags).  On aarch64 the architecture guarantees a
	 * counter at a constant rate that keeps counting in every power state,
	 * so has_tsc, invariant_tsc and their cpuid_ views are true, and there
	 * is no RDTSCP (rdtscp false, ordered reads are ISB;MRS).
	 */
	bool		has_tsc;
	bool		invariant_tsc;
	bool		rdtscp;
	/* what CPUID reports */
	bool		cpuid_tsc;		/* CPUID 1 EDX bit 4 */
	bool		cpuid_invariant_tsc;	/* CPUID 0x80000007 EDX bit 8 */
	bool		cpuid_rdtscp;	/* CPUID 0x80000001 EDX bit 27 */
	/* what the kernel lists in /proc/cpuinfo's "flags" line */
	bool		kernel_flags_read;	/* false: not readable, not x86 */
	bool		kernel_tsc;		/* "tsc" */
	bool		kernel_constant_tsc;	/* "constant_tsc" */
	bool		kernel_nonstop_tsc; /* "nonstop_tsc" */
	bool		kernel_rdtscp;	/* "rdtscp" */
	char		cpu_flags_note[256];	/* which view decided, when they differ */
	bool		lfence_serializing; /* Intel always; AMD 0x80000021 EAX bit 2 */
	bool		hypervisor;		/* CPUID 1 ECX bit 31 */
	char		hypervisor_vendor[16];	/* "KVMKVMKVM", "VMwareVMware", ... */

	/* frequency candidates, in Hz; 0 when that source has no value */
	double		cpuid_15h_hz;
	double		cpuid_16h_hz;
	double		hypervisor_hz;
	double		cntfrq_hz;		/* aarch64: CNTFRQ_EL0 */

	/* calibration against CLOCK_MONOTONIC_RAW */
	bool		calibration_ok;
	double		calibrated_hz;
	double		calibration_spread_ppm; /* max-min of agreeing windows */
	char		calibration_note[160];	/* why it failed, if it did */

	/* the frequency in use (0 = unknown) and where it came from */
	double		tsc_hz;
	FtFreqOrigin tsc_hz_origin;
	double		disagreement_ppm;	/* reported value vs calibration; 0 if none */
	char		frequency_note[200];	/* why this frequency was chosen */

	/* the Linux kernel's verdict; "" when it could not be read */
	char		kernel_clocksource[64];
	char		kernel_available[256];

	/* measured cost of one read, ns (median of a short loop); 0 unknown */
	double		ns_per_read_clock_gettime;
	double		ns_per_read_tsc;
	double		ns_per_read_tsc_ordered;
} FtClockFacts;

/*
 * Choose the frequency in use (tsc_hz, tsc_hz_origin, disagreement_ppm,
 * frequency_note) from the reported candidates and the calibration.  Part
 * of detection; exposed so unit tests can feed it made-up facts.
 */
extern void ft_choose_frequency(FtClockFacts *facts);

/*
 * Set the kernel's view of the CPU (kernel_flags_read, kernel_tsc, ...)
 * from the "flags" line of /proc/cpuinfo, given without its "flags :"
 * prefix; NULL means it could not be read.  Pure, for unit tests.
 */
extern void ft_parse_cpu_flags(const char *flags, FtClockFacts *facts);

/*
 * Set has_tsc, invariant_tsc, rdtscp and cpu_flags_note from CPUID's view
 * and the kernel's.  Pure, for unit tests.
 */
extern void ft_merge_cpu_flags(FtClockFacts *facts);

/* Is word one of list's words (a kernel's list of flags or clocksources)? */
extern bool ft_list_has_word(const char *list, const char *word);

#ifdef FASTTIME_FAULT_INJECTION
/*
 * Fault builds only: hooks into fact gathering, which
 * test/fault/fault_injection.c registers (ft_fault_register), so that
 * clock_detect.c calls nothing of it by name and the dependency runs one
 * way.  The product build has no hooks at all.
 */
typedef struct FtFactsFaults
{
	/* degrade the detected facts per FASTTIME_FAULT_FACTS */
	void		(*apply_facts) (FtClockFacts *facts);
	/* fake the kernel's clocksource read from sysfs (see fault_injection.c) */
	void		(*fake_kernel_clocksource) (char *current, size_t curlen,
											char *available, size_t availlen);
	/* the file to read the kernel's CPU flags from, or NULL for /proc */
	const char *(*cpuinfo_file) (void);
	/* mangle the facts a leader publishes, per fasttime.fault_publish_facts */
	void		(*mangle_published) (char *buf, size_t buflen);
} FtFactsFaults;

extern void ft_register_facts_faults(const FtFactsFaults *faults);
extern const FtFactsFaults *ft_facts_faults(void);
#endif							/* FASTTIME_FAULT_INJECTION */

/* Name of a frequency origin as shown to users. */
extern const char *ft_freq_origin_name(FtFreqOrigin origin);

/*
 * Serialize the facts to a string and back, so a parallel worker that
 * loaded the library itself can adopt its leader's facts instead of
 * measuring again.  ft_facts_parse returns false on a malformed string.
 */
extern void ft_facts_serialize(const FtClockFacts *facts, char *buf,
							   size_t buflen);
extern bool ft_facts_parse(const char *str, FtClockFacts *facts);

/*
 * The hash of this build's FtClockFacts layout that tags serialized facts
 * ("ft2:<8 hex digits>:"); a build with another layout cannot parse them.
 */
extern uint32_t ft_facts_layout_hash(void);

#endif							/* FASTTIME_CLOCK_FACTS_H */
