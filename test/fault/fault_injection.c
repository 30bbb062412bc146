/*-------------------------------------------------------------------------
 *
 * fault_injection.c
 *	  Test-only faults: a node clock that jumps or crawls, and clock facts
 *	  that declare the TSC unusable.
 *
 * Only fault builds compile this file (make FAULT_INJECTION=1, which also
 * defines FASTTIME_FAULT_INJECTION for the hooks elsewhere); the product
 * library has none of it (test/stage_no_faults.sh).  A fault build must
 * never be installed where anyone else's server loads fasttime: see
 * test/fault/README.md for running one from a private installation.
 *
 * The settings (fasttime.fault_*) and environment variables it reads are
 * described in test/fault/README.md.  Tick faults replace the node clock
 * (ft_node_ticks() in ticks.h): a jump happens once and then stays, as
 * after a TSC reset or a warp on migration; step replaces the TSC by a
 * counter that advances by the same amount at every read and at nothing
 * else, so that exact timing's total for a node with no timed children can
 * be checked against its number of calls without any real time in the
 * test.  Each process counts its own reads, and a parallel worker starts
 * counting when it receives its leader's settings.
 *
 * Fact faults, read from the environment when the facts are detected (in
 * the postmaster when fasttime is preloaded), applied after detection:
 *
 *	FASTTIME_FAULT_FACTS=token[,token...]	(',' '|' or ' ' separate)
 *
 *	  no_tsc			 CPUID reports no TSC
 *	  no_invariant		 CPUID reports no invariant TSC
 *	  no_frequency		 nothing reports a frequency and calibration fails
 *	  freq_off_5pct		 CPUID 0x16 reports 5 % above the calibration
 *	  freq_skew_1pct	 the frequency fasttime settles on is 1 % above the
 *						 one it chose, unnoticed (a wrong CPUID or hypervisor
 *						 leaf): for the per-query clock check to catch
 *	  kernel_hpet		 kernel clocksource hpet, tsc not available
 *	  kernel_kvm_clock	 kernel clocksource kvm-clock, tsc available
 *	  kernel_tsc		 kernel clocksource tsc, kvm-clock available
 *	  kernel_unreadable	 the kernel's clocksource files cannot be read
 *	  slow_tsc			 a TSC read costs 1000 ns (trapping)
 *	  not_x86			 not an x86-64 CPU
 *	  cpuid_rdtscp		 CPUID reports RDTSCP (as valgrind's synthetic
 *						 CPUID does on a CPU without it)
 *	  kernel_no_rdtscp	 the kernel's CPU flags lack rdtscp
 *	  kernel_no_invariant the kernel's CPU flags lack nonstop_tsc
 *	  kernel_flags_unreadable  /proc/cpuinfo's flags cannot be read
 *	  machine_a			 the whole of machine kind (a): kernel clocksource
 *						 tsc, an invariant TSC and RDTSCP in both views,
 *						 reads clearly cheaper than clock_gettime
 *	  machine_b			 the whole of machine kind (b): kernel clocksource
 *						 kvm-clock with the TSC rejected (tsc=unstable),
 *						 an invariant TSC, no RDTSCP in either view
 *
 * Tokens apply in order, so "machine_a,slow_tsc" is kind (a) with a
 * trapping TSC.  The CPU feature tokens change CPUID's or the kernel's view
 * and the two are merged again afterwards, as at detection.  Where a token
 * claims RDTSCP on a CPU that cannot run it, every RDTSCP read of the
 * process is done as LFENCE;RDTSC instead (ticks.h), so the faked fact
 * cannot raise SIGILL.
 *
 * test/fault/fault_injection.c
 *
 *-------------------------------------------------------------------------
 */
#ifndef FASTTIME_FAULT_INJECTION
#error "fault_injection.c belongs to fault builds only (make FAULT_INJECTION=1)"
#endif

/*
 * FT_FAULT_STANDALONE: the unit tests build this file without a server;
 * only the settings need one.
 */
#ifndef FT_FAULT_STANDALONE
#include "compat.h"
#include "executor/execdesc.h"
#include "executor/instrument.h"
#include "nodes/execnodes.h"
#include "nodes/nodeFuncs.h"
#include "utils/guc.h"
#include "utils/timeout.h"
#endif

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock_facts.h"
#include "fault_injection.h"
#include "ticks.h"

/* clock_state.c's conversion (clock_state.h is not server-free) */
extern FtTickConv ft_conv;

typedef enum FtFaultTickMode
{
	FT_FAULT_TICK_NONE = 0,
	FT_FAULT_TICK_JUMP_BACK,
	FT_FAULT_TICK_JUMP_FORWARD,
	FT_FAULT_TICK_SLOW,
	FT_FAULT_TICK_STEP
} FtFaultTickMode;

typedef enum FtFaultPublish
{
	FT_FAULT_PUBLISH_NONE = 0,
	FT_FAULT_PUBLISH_FOREIGN_LAYOUT,	/* another layout hash */
	FT_FAULT_PUBLISH_OLD_FORMAT,	/* "ft1:<size>:", what 1.0 builds sent */
	FT_FAULT_PUBLISH_GARBAGE	/* not facts at all */
} FtFaultPublish;

/* the settings; plain variables so the unit tests can set them directly */
int			ft_fault_publish_facts = FT_FAULT_PUBLISH_NONE;
int			ft_fault_tick_mode = FT_FAULT_TICK_NONE;
int			ft_fault_tick_at = 1;
int			ft_fault_switch_in_link = FT_FAULT_SWITCH_NONE;
int			ft_fault_fallback_after = 0;
char	   *ft_fault_tick_at_return = NULL;
char	   *ft_fault_switch_at_return = NULL;
bool		ft_fault_lengthen_in_gate_open = false;
bool		ft_fault_switch_in_resume = false;
int			ft_fault_worker_take_late = 0;
bool		ft_fault_tick_at_abort = false;
bool		ft_fault_nested_units = false;
double		ft_fault_tick_amount_ns = 0;

/* RDTSCP was faked on a CPU that lacks it: ticks.h reads LFENCE;RDTSC */
bool		ft_fault_no_real_rdtscp = false;

/* per-process state: reads since (re)arming, and the shift in effect */
static uint64_t fault_reads = 0;
static bool fault_jumped = false;
static int64_t fault_offset = 0;

/* Forget reads and any shift: called whenever a fault setting changes. */
void		ft_fault_rearm(void);

void
ft_fault_rearm(void)
{
	fault_reads = 0;
	fault_jumped = false;
	fault_offset = 0;
}

/* ns to ticks at the frequency in use (1 GHz if none is known yet) */
static int64_t
fault_ns_to_ticks(double ns)
{
	double		hz = ft_conv.hz > 0 ? ft_conv.hz : 1e9;

	return (int64_t) (ns * hz / 1e9);
}

/*
 * The wrappers' reads in this process: start plain, start ordered, stop
 * plain, stop ordered (node_wrappers.c)
 */
uint64_t	ft_fault_wrapper_reads[4] = {0, 0, 0, 0};
uint64_t	ft_fault_stamps_taken = 0;
uint64_t	ft_fault_stamps_reused = 0;
uint64_t	ft_fault_checks_deferred = 0;

/*
 * The node wrappers' clock reads in a fault build: the TSC (plain or
 * ordered), or the fault in force.
 */
static uint64_t
fault_read(bool ordered)
{
	if (ft_fault_tick_mode == FT_FAULT_TICK_NONE)
		return ordered ? ft_read_tsc_lfence() : ft_read_tsc();

	fault_reads++;
	if (fault_reads < (uint64_t) (ft_fault_tick_at > 0 ? ft_fault_tick_at : 1))
		return (ordered ? ft_read_tsc_lfence() : ft_read_tsc()) + (uint64_t) fault_offset;

	switch ((FtFaultTickMode) ft_fault_tick_mode)
	{
		case FT_FAULT_TICK_SLOW:
			{
				/* a trapping TSC: each read takes about a microsecond */
				int64_t		cost = ft_fault_tick_amount_ns > 0 ?
					(int64_t) ft_fault_tick_amount_ns : 1000;
				int64_t		t0 = ft_read_clock_gettime_ns();

				while (ft_read_clock_gettime_ns() - t0 < cost)
					;
			}
			break;
		case FT_FAULT_TICK_STEP:
			{
				static uint64_t step_clock = 0;

				step_clock += (uint64_t) fault_ns_to_ticks(ft_fault_tick_amount_ns > 0 ?
														   ft_fault_tick_amount_ns : 1000);
				return step_clock;
			}
		case FT_FAULT_TICK_JUMP_BACK:
		case FT_FAULT_TICK_JUMP_FORWARD:
			if (!fault_jumped)
			{
				int64_t		d = fault_ns_to_ticks(ft_fault_tick_amount_ns);

				fault_jumped = true;
				fault_offset = ft_fault_tick_mode == FT_FAULT_TICK_JUMP_BACK ?
					-d : d;
			}
			break;
		case FT_FAULT_TICK_NONE:
			break;
	}
	return (ordered ? ft_read_tsc_lfence() : ft_read_tsc()) + (uint64_t) fault_offset;
}

uint64_t
ft_fault_read_tsc(void)
{
	return fault_read(false);
}

uint64_t
ft_fault_read_tsc_ordered(void)
{
	return fault_read(true);
}

static void fault_apply_kernel_facts(char *current, size_t curlen,
									 char *available, size_t availlen);

/* Report a fact fault being applied, or a token we do not know. */
#ifdef FT_FAULT_STANDALONE
#define fault_note(unknown, ...) \
	do { if (unknown) { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)
#else
#define fault_note(unknown, ...) \
	ereport((unknown) ? WARNING : LOG, (errmsg(__VA_ARGS__)))
#endif

/*
 * Degrade the detected facts as FASTTIME_FAULT_FACTS asks.  The notes say
 * that fault injection did it, so nobody mistakes the result for the
 * machine's.
 */
static void
fault_apply_facts(FtClockFacts *f)
{
	const char *env = getenv("FASTTIME_FAULT_FACTS");
	char		buf[256];
	char	   *save = NULL;
	bool		refreq = false;
	bool		skew = false;
	bool		real_rdtscp = f->rdtscp;

	if (env == NULL || env[0] == '\0')
		return;
	snprintf(buf, sizeof(buf), "%s", env);
	for (char *tok = strtok_r(buf, ",| ", &save); tok != NULL;
		 tok = strtok_r(NULL, ",| ", &save))
	{
		if (strcmp(tok, "no_tsc") == 0)
			f->cpuid_tsc = false;
		else if (strcmp(tok, "no_invariant") == 0)
			f->cpuid_invariant_tsc = false;
		else if (strcmp(tok, "no_frequency") == 0)
		{
			f->cpuid_15h_hz = f->cpuid_16h_hz = f->hypervisor_hz = 0;
			f->calibration_ok = false;
			f->calibrated_hz = 0;
			f->calibration_spread_ppm = 0;
			snprintf(f->calibration_note, sizeof(f->calibration_note),
					 "10 windows in 100 ms did not agree within 10 ppm (fault injection: no_frequency)");
			refreq = true;
		}
		else if (strcmp(tok, "freq_off_5pct") == 0)
		{
			f->cpuid_15h_hz = f->hypervisor_hz = 0;
			f->cpuid_16h_hz = f->calibration_ok ? f->calibrated_hz * 1.05 : 0;
			refreq = true;
		}
		else if (strcmp(tok, "freq_skew_1pct") == 0)
			skew = true;
		else if (strcmp(tok, "kernel_hpet") == 0 ||
				 strcmp(tok, "kernel_kvm_clock") == 0 ||
				 strcmp(tok, "kernel_tsc") == 0 ||
				 strcmp(tok, "kernel_unreadable") == 0)
			fault_apply_kernel_facts(f->kernel_clocksource,
										sizeof(f->kernel_clocksource),
										f->kernel_available,
										sizeof(f->kernel_available));
		else if (strcmp(tok, "slow_tsc") == 0)
			f->ns_per_read_tsc = f->ns_per_read_tsc_ordered = 1000.0;
		else if (strcmp(tok, "not_x86") == 0)
		{
			f->is_x86_64 = false;
			snprintf(f->calibration_note, sizeof(f->calibration_note),
					 "not an x86-64 CPU (fault injection)");
		}
		else if (strcmp(tok, "cpuid_rdtscp") == 0)
			f->cpuid_rdtscp = true;
		else if (strcmp(tok, "kernel_no_rdtscp") == 0)
			f->kernel_rdtscp = false;
		else if (strcmp(tok, "kernel_no_invariant") == 0)
			f->kernel_nonstop_tsc = false;
		else if (strcmp(tok, "kernel_flags_unreadable") == 0)
			ft_parse_cpu_flags(NULL, f);
		else if (strcmp(tok, "machine_a") == 0 ||
				 strcmp(tok, "machine_b") == 0)
		{
			bool		a = (tok[8] == 'a');

			fault_apply_kernel_facts(f->kernel_clocksource,
										sizeof(f->kernel_clocksource),
										f->kernel_available,
										sizeof(f->kernel_available));
			f->is_x86_64 = true;
			f->cpuid_tsc = f->cpuid_invariant_tsc = true;
			ft_parse_cpu_flags(a ? "fpu tsc rdtscp constant_tsc nonstop_tsc" :
							   "fpu tsc constant_tsc nonstop_tsc", f);
			f->cpuid_rdtscp = a;
			/* kind (a) reads the TSC clearly cheaper than clock_gettime */
			if (a && f->ns_per_read_clock_gettime > 0 &&
				!(f->ns_per_read_tsc > 0 &&
				  f->ns_per_read_tsc <= 0.5 * f->ns_per_read_clock_gettime))
				f->ns_per_read_tsc = 0.5 * f->ns_per_read_clock_gettime;
		}
		else
		{
			fault_note(true, "fasttime fault injection: unknown FASTTIME_FAULT_FACTS token \"%s\" ignored", tok);
			continue;
		}
		fault_note(false, "fasttime fault injection: clock fact fault \"%s\" applied", tok);
	}
	/* the two views of the CPU, merged again as at detection */
	if (f->is_x86_64 || f->is_aarch64)
		ft_merge_cpu_flags(f);
	if (f->rdtscp && !real_rdtscp)
		ft_fault_no_real_rdtscp = true;
	if (refreq)
		ft_choose_frequency(f);
	if (skew && f->tsc_hz > 0)
		f->tsc_hz *= 1.01;
}

/*
 * The kernel_* tokens of FASTTIME_FAULT_FACTS, applied to a fresh read of
 * the kernel's clocksource: the run-time re-read (clock_state.c) must see
 * the same faked kernel as detection did, or it would "notice" the real
 * one a second later.
 */
static void
fault_apply_kernel_facts(char *current, size_t curlen,
						 char *available, size_t availlen)
{
	const char *env = getenv("FASTTIME_FAULT_FACTS");
	char		buf[256];
	char	   *save = NULL;

	if (env == NULL || env[0] == '\0')
		return;
	snprintf(buf, sizeof(buf), "%s", env);
	for (char *tok = strtok_r(buf, ",| ", &save); tok != NULL;
		 tok = strtok_r(NULL, ",| ", &save))
	{
		if (strcmp(tok, "kernel_hpet") == 0)
		{
			snprintf(current, curlen, "hpet");
			snprintf(available, availlen, "hpet acpi_pm");
		}
		else if (strcmp(tok, "kernel_kvm_clock") == 0)
		{
			snprintf(current, curlen, "kvm-clock");
			snprintf(available, availlen, "kvm-clock tsc hpet acpi_pm");
		}
		else if (strcmp(tok, "kernel_tsc") == 0 ||
				 strcmp(tok, "machine_a") == 0)
		{
			snprintf(current, curlen, "tsc");
			snprintf(available, availlen, "tsc kvm-clock acpi_pm");
		}
		else if (strcmp(tok, "machine_b") == 0)
		{
			/* tsc=unstable: the kernel never offers the TSC */
			snprintf(current, curlen, "kvm-clock");
			snprintf(available, availlen, "kvm-clock acpi_pm");
		}
		else if (strcmp(tok, "kernel_unreadable") == 0)
			current[0] = available[0] = '\0';
	}
}

/*
 * The kernel's clocksource as ft_read_kernel_clocksource read it from
 * sysfs, faked: FASTTIME_FAULT_CLOCKSOURCE_FILE's first line is the
 * current clocksource and its second (if any) the available ones, and a
 * file that cannot be read is a clocksource that cannot be read; then the
 * kernel_* tokens of FASTTIME_FAULT_FACTS apply.  Rewriting the file
 * fakes the kernel switching clocksource at run time.
 */
static void
fault_kernel_clocksource(char *current, size_t curlen,
						 char *available, size_t availlen)
{
	const char *path = getenv("FASTTIME_FAULT_CLOCKSOURCE_FILE");

	if (path != NULL && path[0] != '\0')
	{
		FILE	   *fp = fopen(path, "r");
		char		line[256] = "";

		current[0] = '\0';
		if (fp == NULL)
		{
			available[0] = '\0';
			return;
		}
		if (fgets(current, (int) curlen, fp) != NULL &&
			fgets(line, sizeof(line), fp) != NULL)
		{
			line[strcspn(line, "\n")] = '\0';
			if (line[0] != '\0')
				snprintf(available, availlen, "%s", line);
		}
		fclose(fp);
		current[strcspn(current, " \n")] = '\0';
	}
	fault_apply_kernel_facts(current, curlen, available, availlen);
}

/* FASTTIME_FAULT_CPUINFO_FILE, or NULL: see read_kernel_cpu_flags */
static const char *
fault_cpuinfo_file(void)
{
	const char *f = getenv("FASTTIME_FAULT_CPUINFO_FILE");

	return (f != NULL && f[0] != '\0') ? f : NULL;
}

/*
 * Mangle the serialized facts a leader is about to publish, as
 * fasttime.fault_publish_facts asks, so that its parallel workers see what
 * a leader running another build of fasttime would send them.  The image
 * keeps its length; only the tag (or everything) changes.
 */
static void
fault_mangle_published(char *buf, size_t buflen)
{
	size_t		len = strlen(buf);

	if (len < 13)
		return;
	switch ((FtFaultPublish) ft_fault_publish_facts)
	{
		case FT_FAULT_PUBLISH_NONE:
			return;
		case FT_FAULT_PUBLISH_FOREIGN_LAYOUT:
			/* "ft2:HHHHHHHH:": flip the layout hash's first digit */
			buf[4] = buf[4] == '0' ? '1' : '0';
			break;
		case FT_FAULT_PUBLISH_OLD_FORMAT:
			{
				char		tag[14];

				snprintf(tag, sizeof(tag), "ft1:%08zx:", sizeof(FtClockFacts));
				memcpy(buf, tag, 13);
			}
			break;
		case FT_FAULT_PUBLISH_GARBAGE:
			snprintf(buf, buflen, "not clock facts (fault injection)");
			break;
	}
	fault_note(false, "fasttime fault injection: published clock facts mangled");
}

/*
 * Hook the faults into fact gathering (clock_detect.c), which calls nothing
 * of this file's by name: ft_fault_init does this, before any fact is
 * gathered, and so do the unit tests.
 */
void
ft_fault_register(void)
{
	static const FtFactsFaults hooks = {
		fault_apply_facts,
		fault_kernel_clocksource,
		fault_cpuinfo_file,
		fault_mangle_published
	};

	ft_register_facts_faults(&hooks);
}

#ifndef FT_FAULT_STANDALONE

static const struct config_enum_entry fault_publish_modes[] = {
	{"none", FT_FAULT_PUBLISH_NONE, false},
	{"foreign_layout", FT_FAULT_PUBLISH_FOREIGN_LAYOUT, false},
	{"old_format", FT_FAULT_PUBLISH_OLD_FORMAT, false},
	{"garbage", FT_FAULT_PUBLISH_GARBAGE, false},
	{NULL, 0, false}
};

static const struct config_enum_entry fault_tick_modes[] = {
	{"none", FT_FAULT_TICK_NONE, false},
	{"jump_back", FT_FAULT_TICK_JUMP_BACK, false},
	{"jump_forward", FT_FAULT_TICK_JUMP_FORWARD, false},
	{"slow", FT_FAULT_TICK_SLOW, false},
	{"step", FT_FAULT_TICK_STEP, false},
	{NULL, 0, false}
};

static const struct config_enum_entry fault_switch_modes[] = {
	{"none", FT_FAULT_SWITCH_NONE, false},
	{"first_call", FT_FAULT_SWITCH_FIRST_CALL, false},
	{"core_call", FT_FAULT_SWITCH_CORE_CALL, false},
	{NULL, 0, false}
};

/* fasttime.fault_fill_timeouts */
static bool ft_fault_fill_timeouts_on = false;

/* fasttime.fault_foreign_wrap */
static char *ft_fault_foreign_wrap = NULL;

/*
 * "Another extension's" node wrapper: what stock's ExecProcNodeInstr does
 * (ExecProcNodeFirst's stack check aside), so the node's rows, loops and
 * time are stock's.
 */
static TupleTableSlot *
fault_foreign_exec(PlanState *node)
{
	TupleTableSlot *slot;

	InstrStartNode(node->instrument);
	slot = node->ExecProcNodeReal(node);
	InstrStopNode(node->instrument, TupIsNull(slot) ? 0.0 : 1.0);
	return slot;
}

/* Does fasttime.fault_foreign_wrap name this node's type? */
static bool
fault_foreign_named(PlanState *ps)
{
	static const struct
	{
		NodeTag		tag;
		const char *name;
	}			names[] = {
		{T_SeqScanState, "Seq Scan"},
		{T_IndexScanState, "Index Scan"},
		{T_SortState, "Sort"},
		{T_MaterialState, "Materialize"},
	};

	for (int i = 0; i < lengthof(names); i++)
	{
		if (nodeTag(ps) == names[i].tag)
			return strcmp(ft_fault_foreign_wrap, names[i].name) == 0;
	}
	return false;
}

/* planstate_tree_walker callback of ft_fault_wrap_foreign */
static bool
fault_foreign_walker(PlanState *ps, void *context)
{
	if (ps->instrument != NULL && fault_foreign_named(ps))
		ps->ExecProcNode = fault_foreign_exec;
	return planstate_tree_walker(ps, fault_foreign_walker, context);
}

/*
 * Put the named nodes of a query on "another extension's" wrapper.  Its
 * subplans are walked through their SubPlans and InitPlans, which is where
 * the tests' nodes are (a CTE's would be missed).
 */
void
ft_fault_wrap_foreign(void *queryDesc)
{
	QueryDesc  *qd = (QueryDesc *) queryDesc;

	if (ft_fault_foreign_wrap == NULL || ft_fault_foreign_wrap[0] == '\0' ||
		qd->planstate == NULL || qd->instrument_options == 0)
		return;
	(void) fault_foreign_walker(qd->planstate, NULL);
}

/*
 * Take every free timeout slot, registering the given handler, until
 * RegisterTimeout refuses with its FATAL: the caller (profiler.c's
 * registration) intercepts that FATAL as it would intercept its own.  Does
 * nothing unless fasttime.fault_fill_timeouts is on.
 */
void
ft_fault_fill_timeouts(void (*handler) (void))
{
	if (!ft_fault_fill_timeouts_on)
		return;
	for (int i = 0; i <= MAX_TIMEOUTS; i++)
		(void) RegisterTimeout(USER_TIMEOUT, handler);
}

static void
assign_fault_int(int newval, void *extra)
{
	ft_fault_rearm();
}

static void
assign_fault_real(double newval, void *extra)
{
	ft_fault_rearm();
}

/*
 * fasttime.fault_fallback_after: a backend's first disagreement is its
 * WARNING, so 1 cannot be honoured; refuse it rather than ignore it.
 */
static bool
check_fault_fallback_after(int *newval, void **extra, GucSource source)
{
	if (*newval == 1)
	{
		GUC_check_errdetail("The first disagreement draws the WARNING; the fallback can come at the second at the earliest.");
		return false;
	}
	return true;
}

/*
 * A fault build's part of _PG_init, which calls it first: the fact faults
 * hooked in before any fact is gathered (defining fasttime.clock_source
 * can gather them), and the fault settings defined.
 */
void
ft_fault_init(void)
{
	ft_fault_register();
	DefineCustomEnumVariable("fasttime.fault_tick_mode",
							 "Fault injection (test builds only): how the node clock misbehaves.",
							 NULL,
							 &ft_fault_tick_mode,
							 FT_FAULT_TICK_NONE,
							 fault_tick_modes,
							 PGC_USERSET,
							 GUC_NOT_IN_SAMPLE,
							 NULL,
							 assign_fault_int,
							 NULL);
	DefineCustomIntVariable("fasttime.fault_tick_at",
							"Fault injection (test builds only): the node-clock read at which the fault starts.",
							NULL,
							&ft_fault_tick_at,
							1, 1, INT_MAX,
							PGC_USERSET,
							GUC_NOT_IN_SAMPLE,
							NULL,
							assign_fault_int,
							NULL);
	DefineCustomRealVariable("fasttime.fault_tick_amount_ns",
							 "Fault injection (test builds only): size of a jump, or cost of a slow read, in ns.",
							 NULL,
							 &ft_fault_tick_amount_ns,
							 0, 0, 1e18,
							 PGC_USERSET,
							 GUC_NOT_IN_SAMPLE,
							 NULL,
							 assign_fault_real,
							 NULL);
	DefineCustomEnumVariable("fasttime.fault_publish_facts",
							 "Fault injection (test builds only): how the clock facts a leader hands its parallel workers are mangled.",
							 NULL,
							 &ft_fault_publish_facts,
							 FT_FAULT_PUBLISH_NONE,
							 fault_publish_modes,
							 PGC_USERSET,
							 GUC_NOT_IN_SAMPLE,
							 NULL,
							 NULL,
							 NULL);
	DefineCustomEnumVariable("fasttime.fault_switch_in_link",
							 "Fault injection (test builds only): profiled timing's switch comes between an exact call's test of its mode and its link.",
							 NULL,
							 &ft_fault_switch_in_link,
							 FT_FAULT_SWITCH_NONE,
							 fault_switch_modes,
							 PGC_USERSET,
							 GUC_NOT_IN_SAMPLE,
							 NULL,
							 NULL,
							 NULL);
	DefineCustomBoolVariable("fasttime.fault_fill_timeouts",
							 "Fault injection (test builds only): every free timeout slot is taken before profiled timing registers its tick.",
							 NULL,
							 &ft_fault_fill_timeouts_on,
							 false,
							 PGC_USERSET,
							 GUC_NOT_IN_SAMPLE,
							 NULL,
							 NULL,
							 NULL);
	DefineCustomStringVariable("fasttime.fault_tick_at_return",
							   "Fault injection (test builds only): a tick of profiled timing lands right after each exact call of a plan node of this type has left the chain.",
							   NULL,
							   &ft_fault_tick_at_return,
							   "",
							   PGC_USERSET,
							   GUC_NOT_IN_SAMPLE,
							   NULL,
							   NULL,
							   NULL);
	DefineCustomStringVariable("fasttime.fault_switch_at_return",
							   "Fault injection (test builds only): profiled timing's switch comes right after the first exact call of a plan node of this type has left the chain.",
							   NULL,
							   &ft_fault_switch_at_return,
							   "",
							   PGC_USERSET,
							   GUC_NOT_IN_SAMPLE,
							   NULL,
							   NULL,
							   NULL);
	DefineCustomBoolVariable("fasttime.fault_switch_in_resume",
							 "Fault injection (test builds only): profiled timing's switch comes while a stopped tick is resumed, before the timeout is re-armed.",
							 NULL,
							 &ft_fault_switch_in_resume,
							 false,
							 PGC_USERSET,
							 GUC_NOT_IN_SAMPLE,
							 NULL,
							 NULL,
							 NULL);
	DefineCustomIntVariable("fasttime.fault_worker_take_late",
							"Fault injection (test builds only): a backend takes the tick worker's tick only at the transition after this many that found it.",
							NULL,
							&ft_fault_worker_take_late,
							0,
							0,
							1000000,
							PGC_USERSET,
							GUC_NOT_IN_SAMPLE,
							NULL,
							NULL,
							NULL);
	DefineCustomBoolVariable("fasttime.fault_tick_at_abort",
							 "Fault injection (test builds only): a tick in the transaction-abort callback, before the profiler is reset; logs the runs it still holds.",
							 NULL,
							 &ft_fault_tick_at_abort,
							 false,
							 PGC_USERSET,
							 GUC_NOT_IN_SAMPLE,
							 NULL,
							 NULL,
							 NULL);
	DefineCustomBoolVariable("fasttime.fault_lengthen_in_gate_open",
							 "Fault injection (test builds only): a tick asking for a longer interval lands between the walk of the chain and the opening of the gate.",
							 NULL,
							 &ft_fault_lengthen_in_gate_open,
							 false,
							 PGC_USERSET,
							 GUC_NOT_IN_SAMPLE,
							 NULL,
							 NULL,
							 NULL);
	DefineCustomBoolVariable("fasttime.fault_nested_units",
							 "Fault injection (test builds only): a query nested in a profiled run writes its times in a unit half as long as the run's.",
							 NULL,
							 &ft_fault_nested_units,
							 false,
							 PGC_USERSET,
							 GUC_NOT_IN_SAMPLE,
							 NULL,
							 NULL,
							 NULL);
	DefineCustomStringVariable("fasttime.fault_foreign_wrap",
							   "Fault injection (test builds only): plan nodes of this type are put on another extension's wrapper before fasttime's.",
							   NULL,
							   &ft_fault_foreign_wrap,
							   "",
							   PGC_USERSET,
							   GUC_NOT_IN_SAMPLE,
							   NULL,
							   NULL,
							   NULL);
	DefineCustomIntVariable("fasttime.fault_fallback_after",
							"Fault injection (test builds only): disagreements of the clocks after which a backend gives the TSC up (0: the built-in number).",
							NULL,
							&ft_fault_fallback_after,
							0, 0, INT_MAX,
							PGC_USERSET,
							GUC_NOT_IN_SAMPLE,
							check_fault_fallback_after,
							NULL,
							NULL);
	ereport(LOG,
			(errmsg("fasttime was built with fault injection: not for production use")));
}

#endif							/* !FT_FAULT_STANDALONE */
