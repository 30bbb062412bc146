/*-------------------------------------------------------------------------
 *
 * clock_facts.c
 *	  What follows from the clock facts without touching the machine (the
 *	  merge of CPUID's and the kernel's views, the frequency chosen, names
 *	  shown to users), and their image for parallel workers.  Pure, with
 *	  no server facilities, for the unit tests; clock_detect.c calls in.
 *
 * src/clock_facts.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "clock_facts.h"

/*
 * A reported frequency is used only when the calibration (windows agreeing
 * within 10 ppm) confirms it this closely; a nominal value a few hundred
 * ppm off would make every time that much wrong.
 */
#define FREQ_AGREE_PPM		20.0

const char *
ft_freq_origin_name(FtFreqOrigin origin)
{
	switch (origin)
	{
		case FT_FREQ_NONE:
			return "none";
		case FT_FREQ_CPUID_15H:
			return "cpuid_15h";
		case FT_FREQ_CPUID_16H:
			return "cpuid_16h";
		case FT_FREQ_HYPERVISOR:
			return "hypervisor";
		case FT_FREQ_CALIBRATION:
			return "calibration";
		case FT_FREQ_CNTFRQ:
			return "cntfrq_el0";
		case FT_FREQ_SERVER:
			return "server";
	}
	return "unknown";
}

#ifdef FASTTIME_FAULT_INJECTION
/* the fault build's hooks, once registered (see clock_facts.h) */
static const FtFactsFaults *facts_faults = NULL;

void
ft_register_facts_faults(const FtFactsFaults *faults)
{
	facts_faults = faults;
}

const FtFactsFaults *
ft_facts_faults(void)
{
	return facts_faults;
}
#endif

/*
 * Pick the frequency in use.  A reported value is exact when right, but
 * leaf 0x16 is a nominal base frequency, hypervisors report stale values
 * after migration and firmware programs CNTFRQ_EL0 wrong: so it is used
 * only when calibration confirms it, and otherwise the calibration is.
 */
void
ft_choose_frequency(FtClockFacts *f)
{
	struct
	{
		double		hz;
		FtFreqOrigin origin;
		const char *label;
	}			cand[4] = {
		{f->hypervisor_hz, FT_FREQ_HYPERVISOR, "the hypervisor (leaf 0x40000010)"},
		{f->cpuid_15h_hz, FT_FREQ_CPUID_15H, "CPUID leaf 0x15"},
		{f->cpuid_16h_hz, FT_FREQ_CPUID_16H, "CPUID leaf 0x16"},
		{f->cntfrq_hz, FT_FREQ_CNTFRQ, "CNTFRQ_EL0"},
	};

	f->tsc_hz = 0;
	f->tsc_hz_origin = FT_FREQ_NONE;
	if (!f->calibration_ok)
	{
		snprintf(f->frequency_note, sizeof(f->frequency_note),
				 "no frequency: calibration failed");
		return;
	}

	/* the first reported value that calibration confirms wins */
	for (int i = 0; i < 4; i++)
	{
		double		ppm;

		if (!(cand[i].hz > 0))
			continue;
		ppm = fabs(cand[i].hz - f->calibrated_hz) / f->calibrated_hz * 1e6;
		if (ppm <= FREQ_AGREE_PPM)
		{
			f->tsc_hz = cand[i].hz;
			f->tsc_hz_origin = cand[i].origin;
			f->disagreement_ppm = ppm;
			snprintf(f->frequency_note, sizeof(f->frequency_note),
					 "%s reports %.0f kHz, confirmed by calibration within %.0f ppm",
					 cand[i].label, cand[i].hz / 1000.0, ppm);
			return;
		}
	}

	/* none did: say which (the first, if several) disagreed, and by how much */
	f->tsc_hz = f->calibrated_hz;
	f->tsc_hz_origin = FT_FREQ_CALIBRATION;
	for (int i = 0; i < 4; i++)
	{
		if (cand[i].hz > 0)
		{
			f->disagreement_ppm =
				fabs(cand[i].hz - f->calibrated_hz) / f->calibrated_hz * 1e6;
			snprintf(f->frequency_note, sizeof(f->frequency_note),
					 "%s reports %.0f kHz but calibration measured %.0f kHz (%.0f ppm apart, more than %.0f); using the calibration",
					 cand[i].label, cand[i].hz / 1000.0,
					 f->calibrated_hz / 1000.0, f->disagreement_ppm,
					 FREQ_AGREE_PPM);
			return;
		}
	}
	snprintf(f->frequency_note, sizeof(f->frequency_note),
			 f->is_aarch64 ?
			 "CNTFRQ_EL0 reports no counter frequency; calibrated against CLOCK_MONOTONIC_RAW" :
			 "neither the CPU nor the hypervisor reports the TSC frequency; calibrated against CLOCK_MONOTONIC_RAW");
}

/* Is word one of list's words (space or tab separated)?  Not "tsc-early". */
bool
ft_list_has_word(const char *list, const char *word)
{
	size_t		len = strlen(word);
	const char *p = list;

	while ((p = strstr(p, word)) != NULL)
	{
		if ((p == list || p[-1] == ' ' || p[-1] == '\t') &&
			(p[len] == '\0' || p[len] == ' ' || p[len] == '\t' ||
			 p[len] == '\n'))
			return true;
		p += len;
	}
	return false;
}

/*
 * The kernel's view of the CPU, from /proc/cpuinfo's "flags" (without the
 * prefix; NULL: unreadable): CPUID's, masked of what the kernel knows not
 * to work, or what an emulator's synthetic CPUID claims.
 */
void
ft_parse_cpu_flags(const char *flags, FtClockFacts *f)
{
	f->kernel_flags_read = (flags != NULL);
	f->kernel_tsc = f->kernel_constant_tsc = f->kernel_nonstop_tsc =
		f->kernel_rdtscp = false;
	if (flags == NULL)
		return;
	f->kernel_tsc = ft_list_has_word(flags, "tsc");
	f->kernel_constant_tsc = ft_list_has_word(flags, "constant_tsc");
	f->kernel_nonstop_tsc = ft_list_has_word(flags, "nonstop_tsc");
	f->kernel_rdtscp = ft_list_has_word(flags, "rdtscp");
}

/* Append one sentence to the CPU flags note. */
static void
flags_note(FtClockFacts *f, const char *sentence)
{
	size_t		len = strlen(f->cpu_flags_note);

	snprintf(f->cpu_flags_note + len, sizeof(f->cpu_flags_note) - len,
			 "%s%s", len > 0 ? "; " : "", sentence);
}

/*
 * Combine CPUID's view of the TSC features with the kernel's: a feature
 * counts only when both report it (RDTSCP the kernel masked can raise
 * SIGILL), or CPUID's alone where the kernel's cannot be read.  aarch64
 * has only the architecture's view.
 */
void
ft_merge_cpu_flags(FtClockFacts *f)
{
	bool		k_invariant = f->kernel_constant_tsc && f->kernel_nonstop_tsc;

	f->cpu_flags_note[0] = '\0';
	if (f->is_aarch64)
	{
		f->has_tsc = f->cpuid_tsc;
		f->invariant_tsc = f->has_tsc && f->cpuid_invariant_tsc;
		f->rdtscp = false;
		flags_note(f, "aarch64: the architected counter (CNTVCT_EL0) runs at a constant rate in every power state by definition; the kernel lists no CPU flags for it");
		return;
	}
	if (!f->kernel_flags_read)
	{
		f->has_tsc = f->cpuid_tsc;
		f->invariant_tsc = f->cpuid_invariant_tsc;
		f->rdtscp = f->cpuid_rdtscp;
		flags_note(f, "the kernel's CPU flags (/proc/cpuinfo) could not be read: CPUID alone decided");
		return;
	}
	f->has_tsc = f->cpuid_tsc && f->kernel_tsc;
	f->invariant_tsc = f->has_tsc && f->cpuid_invariant_tsc && k_invariant;
	f->rdtscp = f->cpuid_rdtscp && f->kernel_rdtscp;

	if (f->cpuid_tsc && !f->kernel_tsc)
		flags_note(f, "CPUID reports a TSC but the kernel does not list \"tsc\": treated as absent");
	else if (!f->cpuid_tsc && f->kernel_tsc)
		flags_note(f, "the kernel lists \"tsc\" but CPUID does not report it: treated as absent");
	if (f->cpuid_invariant_tsc && !k_invariant)
		flags_note(f, "CPUID reports an invariant TSC but the kernel does not list both \"constant_tsc\" and \"nonstop_tsc\": treated as not invariant");
	else if (!f->cpuid_invariant_tsc && k_invariant)
		flags_note(f, "the kernel lists \"constant_tsc\" and \"nonstop_tsc\" but CPUID does not report an invariant TSC: treated as not invariant");
	if (f->cpuid_rdtscp && !f->kernel_rdtscp)
		flags_note(f, "CPUID reports RDTSCP but the kernel does not list \"rdtscp\" (an emulator or hypervisor may advertise what the CPU cannot run): treated as absent, ordered reads use LFENCE;RDTSC");
	else if (!f->cpuid_rdtscp && f->kernel_rdtscp)
		flags_note(f, "the kernel lists \"rdtscp\" but CPUID does not report it: treated as absent");
	if (f->cpu_flags_note[0] == '\0')
		flags_note(f, "CPUID and the kernel's CPU flags agree");
}

/*
 * Facts travel to parallel workers as a hex image of the structure, tagged
 * "ft2:" and with a hash of its layout (every field's name, offset and
 * size, and FT_FACTS_FORMAT).  Without shared_preload_libraries a worker
 * loads fasttime.so from disk, maybe a newer build than its leader's: it
 * may adopt the image only if it reads every field as the leader wrote
 * it, which is what the layout hash decides (a build identifier would
 * refuse identical layouts).  A change of a field's meaning must bump
 * FT_FACTS_FORMAT.
 */
#define FACTS_TAG "ft2:"
#define FT_FACTS_FORMAT 4

/* Every field of FtClockFacts, for the layout hash; keep it complete. */
#define FT_FACTS_FIELDS(X) \
	X(detected) X(is_x86_64) X(is_aarch64) X(cpu_vendor) X(has_tsc) X(invariant_tsc) \
	X(rdtscp) X(cpuid_tsc) X(cpuid_invariant_tsc) X(cpuid_rdtscp) \
	X(kernel_flags_read) X(kernel_tsc) X(kernel_constant_tsc) \
	X(kernel_nonstop_tsc) X(kernel_rdtscp) X(cpu_flags_note) \
	X(lfence_serializing) X(hypervisor) X(hypervisor_vendor) \
	X(cpuid_15h_hz) X(cpuid_16h_hz) X(hypervisor_hz) X(cntfrq_hz) \
	X(calibration_ok) \
	X(calibrated_hz) X(calibration_spread_ppm) X(calibration_note) \
	X(tsc_hz) X(tsc_hz_origin) X(disagreement_ppm) X(frequency_note) \
	X(kernel_clocksource) X(kernel_available) \
	X(ns_per_read_clock_gettime) X(ns_per_read_tsc) \
	X(ns_per_read_tsc_ordered)

/* FNV-1a, 32 bits */
static uint32_t
fnv1a(uint32_t h, const char *s)
{
	for (; *s; s++)
	{
		h ^= (unsigned char) *s;
		h *= 16777619u;
	}
	return h;
}

/* The layout hash, from the compiler's own offsetof and sizeof. */
uint32_t
ft_facts_layout_hash(void)
{
	uint32_t	h = 2166136261u;
	char		item[96];

	snprintf(item, sizeof(item), "format=%d size=%zu;", FT_FACTS_FORMAT,
			 sizeof(FtClockFacts));
	h = fnv1a(h, item);
#define FT_HASH_FIELD(f) \
	snprintf(item, sizeof(item), "%s@%zu+%zu;", #f, \
			 offsetof(FtClockFacts, f), sizeof(((FtClockFacts *) 0)->f)); \
	h = fnv1a(h, item);
	FT_FACTS_FIELDS(FT_HASH_FIELD)
#undef FT_HASH_FIELD
	return h;
}

void
ft_facts_serialize(const FtClockFacts *facts, char *buf, size_t buflen)
{
	const unsigned char *p = (const unsigned char *) facts;
	size_t		need = strlen(FACTS_TAG) + 8 + 1 + sizeof(*facts) * 2 + 1;
	char	   *out;

	if (buflen < need)
	{
		if (buflen > 0)
			buf[0] = '\0';
		return;
	}
	out = buf + sprintf(buf, FACTS_TAG "%08x:", (unsigned) ft_facts_layout_hash());
	for (size_t i = 0; i < sizeof(*facts); i++)
		out += sprintf(out, "%02x", p[i]);
	*out = '\0';
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

bool
ft_facts_parse(const char *str, FtClockFacts *facts)
{
	FtClockFacts tmp;
	unsigned char *p = (unsigned char *) &tmp;
	char		hashbuf[9];
	size_t		taglen = strlen(FACTS_TAG);

	if (str == NULL || strncmp(str, FACTS_TAG, taglen) != 0)
		return false;
	str += taglen;
	if (strlen(str) != 8 + 1 + sizeof(tmp) * 2 || str[8] != ':')
		return false;
	snprintf(hashbuf, sizeof(hashbuf), "%08x", (unsigned) ft_facts_layout_hash());
	if (memcmp(str, hashbuf, 8) != 0)
		return false;
	str += 9;
	for (size_t i = 0; i < sizeof(tmp); i++)
	{
		int			hi = hexval(str[2 * i]);
		int			lo = hexval(str[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return false;
		p[i] = (unsigned char) (hi << 4 | lo);
	}
	/* strings must be terminated, and the image must claim to be complete */
	if (!tmp.detected ||
		memchr(tmp.cpu_vendor, '\0', sizeof(tmp.cpu_vendor)) == NULL ||
		memchr(tmp.hypervisor_vendor, '\0', sizeof(tmp.hypervisor_vendor)) == NULL ||
		memchr(tmp.calibration_note, '\0', sizeof(tmp.calibration_note)) == NULL ||
		memchr(tmp.cpu_flags_note, '\0', sizeof(tmp.cpu_flags_note)) == NULL ||
		memchr(tmp.frequency_note, '\0', sizeof(tmp.frequency_note)) == NULL ||
		memchr(tmp.kernel_clocksource, '\0', sizeof(tmp.kernel_clocksource)) == NULL ||
		memchr(tmp.kernel_available, '\0', sizeof(tmp.kernel_available)) == NULL)
		return false;
	*facts = tmp;
	return true;
}
