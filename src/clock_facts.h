/*-------------------------------------------------------------------------
 *
 * clock_facts.h
 *	  What fasttime knows about this machine's clocks.
 *
 * Gathered once (clock_detect.h), then only read.  Plain C, so the
 * decision logic and its unit tests build without a server.
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
	FT_FREQ_CNTFRQ,				/* aarch64: CNTFRQ_EL0 */
	FT_FREQ_SERVER				/* 19: the server's own TSC conversion */
} FtFreqOrigin;

typedef struct FtClockFacts
{
	bool		detected;		/* facts have been gathered */

	/* CPU; the fields named tsc describe whichever counter it has */
	bool		is_x86_64;
	bool		is_aarch64;
	char		cpu_vendor[16]; /* "GenuineIntel", "AuthenticAMD", ...;
								 * aarch64: "implementer 0xNN" (MIDR) */
	/* what fasttime goes by: CPUID's view and the kernel's, merged */
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

/* parts of detection that the unit tests feed made-up facts */
extern void ft_choose_frequency(FtClockFacts *facts);
extern void ft_parse_cpu_flags(const char *flags, FtClockFacts *facts);
extern void ft_merge_cpu_flags(FtClockFacts *facts);

/* Is word one of list's words (a kernel's list of flags or clocksources)? */
extern bool ft_list_has_word(const char *list, const char *word);

#ifdef FASTTIME_FAULT_INJECTION
/*
 * Fault builds only: hooks into fact gathering that fault_injection.c
 * registers, so that the dependency runs one way.
 */
typedef struct FtFactsFaults
{
	/* degrade the detected facts per FASTTIME_FAULT_FACTS */
	void		(*apply_facts) (FtClockFacts *facts);
	/* fake the kernel's clocksource read from sysfs */
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
 * The facts as a string and back, tagged with the hash of this build's
 * layout, for parallel workers (clock_facts.c).
 */
extern void ft_facts_serialize(const FtClockFacts *facts, char *buf,
							   size_t buflen);
extern bool ft_facts_parse(const char *str, FtClockFacts *facts);

extern uint32_t ft_facts_layout_hash(void);

#endif							/* FASTTIME_CLOCK_FACTS_H */
