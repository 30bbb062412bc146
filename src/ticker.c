/*-------------------------------------------------------------------------
 *
 * ticker.c
 *	  The tick worker (ticker.h): one background worker that ticks every
 *	  profiling backend at its interval, by writing its flags.
 *
 * Shared memory holds a slot per PGPROC number below MaxBackends (client
 * backends and background workers, parallel ones included), each three
 * cache lines (the backend's flags alone on the first, the top of its
 * chain of calls on the second, written at every call), and a bitmap of
 * the slots being ticked, which is all the worker scans at each wake-up.
 * A backend ticked by the worker has an interval; the worker keeps each
 * slot's next instant in its own memory (restarted when the backend bumps
 * the slot's epoch, kept on its grid across a park), sleeps with
 * clock_nanosleep until the earliest, and ticks the slots that are due:
 * it reads whether the backend's PGPROC shows a wait event, notes the
 * tick's instant and the call on top of the backend's chain (the tick's
 * sample), parks the backend if it was waiting, and sets the
 * suspension and shuts the gate in one store (ft_ticker_tick).  With no
 * slot to tick it sleeps on its latch, which a backend starting or
 * unparking sets.  Nothing here runs in a backend's signal handler, and
 * the worker takes no lock: each field has one writer but the flags,
 * which the backend clears and opens and the worker sets and shuts.  The
 * backend, opening the gate, stores it, then a full barrier, then reads
 * the suspension again (ft_prof_gate_open): whichever of its store and
 * the worker's lands last, it sees the tick or leaves the gate shut.
 *
 * src/ticker.c
 *
 *-------------------------------------------------------------------------
 */
#include "compat.h"

#include <dlfcn.h>
#include <time.h>

#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/pmsignal.h"
#include "storage/proc.h"
#include "storage/procsignal.h"
#include "port/pg_bitutils.h"
#include "storage/shmem.h"
#include "utils/wait_event.h"

#include "ticker.h"

/*
 * A backend's slot.  Its flags have a cache line to themselves, written by
 * the worker in one store: the backend reads that line at every call, and
 * a line the worker also reads or writes for anything else is taken from
 * the backend's cache before the flags change (ft_ticker_tick).  The top
 * of its chain has the next: the backend writes it at every call, the
 * worker reads it once a tick.
 */
typedef struct FtTickerSlot
{
	FtTickFlags flags;			/* the backend's gate and suspension */
	char		flags_line[PG_CACHE_LINE_SIZE - sizeof(FtTickFlags)];
	struct FtUsageFrame *volatile top;	/* the backend's chain (usage.h) */
	char		top_line[PG_CACHE_LINE_SIZE - sizeof(void *)];
	struct FtUsageFrame *volatile tick_top; /* top at the last tick */
	volatile int interval_ms;	/* > 0: the worker ticks it; backend writes */
	volatile uint32 epoch;		/* bumped by the backend: restart the
								 * schedule one interval from now */
	volatile bool parked;		/* the worker found it waiting and stopped */
	volatile int64 tick_ns;		/* the last tick's instant (CLOCK_MONOTONIC) */
	volatile uint64 ticks;		/* ticks the worker made for it */
} FtTickerSlot;

typedef union FtTickerSlotPadded
{
	FtTickerSlot slot;
	char		pad[3 * PG_CACHE_LINE_SIZE];
} FtTickerSlotPadded;

StaticAssertDecl(sizeof(FtTickerSlot) <= 3 * PG_CACHE_LINE_SIZE,
				 "a ticker slot is three cache lines");
/* the flags as the worker builds them: FtTickFlags' layout, not volatile */
typedef struct FtTickWord
{
	uint8		gate;
	sig_atomic_t suspended;
} FtTickWord;

StaticAssertDecl(sizeof(FtTickFlags) == sizeof(uint64) &&
				 sizeof(FtTickWord) == sizeof(uint64) &&
				 offsetof(FtTickWord, suspended) == offsetof(FtTickFlags, suspended),
				 "the worker writes a backend's flags in one 8-byte store");
/* the slots start on a cache line (ft_ticker_shmem_startup): aligned */
StaticAssertDecl(offsetof(FtTickerSlot, flags) == 0,
				 "a slot's flags start its first cache line");

typedef struct FtTickerShared
{
	Latch	   *volatile latch; /* the worker's while it runs, else NULL */
	volatile bool sleeping;		/* it waits on its latch for a slot */
	int			nslots;
	int			nwords;			/* of the bitmap of slots being ticked */
	pg_atomic_uint64 *active;	/* that bitmap (after the slots) */
	FtTickerSlotPadded *slots;	/* after this, on a cache line boundary */
} FtTickerShared;

static FtTickerShared *ft_ticker = NULL;
static FtTickerSlot *ft_my_slot = NULL;
static int	ft_my_slotno = -1;
static bool ft_ticker_preloaded = false;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* a worker's wake-up this much early still ticks (timer slack) */
#define FT_TICKER_SLACK_NS 50000

/*
 * The longest the worker sleeps while it ticks anyone: a backend that
 * starts or unparks meanwhile is seen within this (a latch does not end
 * clock_nanosleep), whatever the other backends' intervals.
 */
#define FT_TICKER_MAX_SLEEP_NS 5000000

static inline int64
ft_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static Size
ft_ticker_size(void)
{
	Size		words = (MaxBackends + 63) / 64;

	/* the header, room to align the slots, the slots, the bitmap */
	return add_size(add_size(sizeof(FtTickerShared) + PG_CACHE_LINE_SIZE,
							 mul_size(MaxBackends, sizeof(FtTickerSlotPadded))),
					mul_size(words, sizeof(pg_atomic_uint64)));
}

/* Ask for the slots (shmem_request_hook: MaxBackends is known). */
static void
ft_ticker_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(ft_ticker_size());
}

/* Create or attach to the slots (shmem_startup_hook). */
static void
ft_ticker_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	ft_ticker = ShmemInitStruct("fasttime ticker", ft_ticker_size(), &found);
	if (!found)
	{
		memset(ft_ticker, 0, ft_ticker_size());
		ft_ticker->nslots = MaxBackends;
		ft_ticker->nwords = (MaxBackends + 63) / 64;
		ft_ticker->slots = (FtTickerSlotPadded *)
			TYPEALIGN(PG_CACHE_LINE_SIZE, (char *) ft_ticker + sizeof(FtTickerShared));
		ft_ticker->active = (pg_atomic_uint64 *) &ft_ticker->slots[MaxBackends];
		for (int w = 0; w < ft_ticker->nwords; w++)
			pg_atomic_init_u64(&ft_ticker->active[w], 0);
	}
	LWLockRelease(AddinShmemInitLock);
}

/*
 * Module load in a preloading postmaster whose fasttime.tick_source is
 * worker (start_worker): chain the shared-memory hooks and register the
 * worker.  A server started with signals, the default, has no worker and
 * no slots: a process and one of max_worker_processes are not taken for
 * what no run uses, and a session that sets worker later ticks with
 * signals (ft_ticker_attach), as without preloading.  The worker starts
 * once the server accepts connections (a standby's too), connects to no
 * database (only so that pg_stat_activity shows it, as "fasttime
 * ticker"), and is started again a second after it ends, whether it was
 * terminated (pg_terminate_backend) or failed.
 */
void
ft_ticker_init(bool start_worker)
{
	BackgroundWorker worker;
	Dl_info		self;

	if (!process_shared_preload_libraries_in_progress || !start_worker)
		return;

	/*
	 * The worker loads this very library (a test's private build is
	 * preloaded by its path): no worker where the path is unknown or too
	 * long for the registration, and backends tick with signals.
	 */
	memset(&worker, 0, sizeof(worker));
	if (dladdr((void *) ft_ticker_main, &self) == 0 || self.dli_fname == NULL ||
		strlen(self.dli_fname) >= sizeof(worker.bgw_library_name))
		return;
	strlcpy(worker.bgw_library_name, self.dli_fname, sizeof(worker.bgw_library_name));
	ft_ticker_preloaded = true;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = ft_ticker_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = ft_ticker_shmem_startup;

	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_ConsistentState;
	worker.bgw_restart_time = 1;
	strlcpy(worker.bgw_function_name, "ft_ticker_main", BGW_MAXLEN);
	strlcpy(worker.bgw_name, "fasttime ticker", BGW_MAXLEN);
	strlcpy(worker.bgw_type, "fasttime ticker", BGW_MAXLEN);
	RegisterBackgroundWorker(&worker);
}

/* Mark this backend's slot as ticked, or not, in the bitmap. */
static void
ft_ticker_mark(bool on)
{
	int			n = ft_my_slotno;
	uint64		bit = UINT64CONST(1) << (n % 64);

	if (on)
		pg_atomic_fetch_or_u64(&ft_ticker->active[n / 64], bit);
	else
		pg_atomic_fetch_and_u64(&ft_ticker->active[n / 64], ~bit);
}

/* The backend exits: its slot is ticked no more. */
static void
ft_ticker_detach(int code, Datum arg)
{
	if (ft_my_slot != NULL)
	{
		ft_my_slot->interval_ms = 0;
		ft_my_slot->parked = false;
		ft_ticker_mark(false);
		ft_my_slot = NULL;
	}
}

/*
 * This backend's slot's flags, from its first profiled query on: NULL
 * where fasttime is not preloaded or the backend has no slot.  The slot
 * is reset (a former owner of the PGPROC number may have left it set).
 */
FtTickFlags *
ft_ticker_attach(void)
{
	int			n;

	if (ft_my_slot != NULL)
		return &ft_my_slot->flags;
	if (!ft_ticker_preloaded || ft_ticker == NULL || MyProc == NULL)
		return NULL;
	n = FT_MY_PROC_NUMBER();
	if (n < 0 || n >= ft_ticker->nslots)
		return NULL;
	ft_my_slot = &ft_ticker->slots[n].slot;
	ft_my_slotno = n;
	ft_ticker_mark(false);
	ft_my_slot->interval_ms = 0;
	ft_my_slot->parked = false;
	ft_my_slot->flags.gate = FT_FRAME_NONE;
	ft_my_slot->flags.suspended = 0;
	ft_my_slot->ticks = 0;
	ft_my_slot->top = NULL;
	ft_my_slot->tick_top = NULL;
	pg_memory_barrier();
	before_shmem_exit(ft_ticker_detach, (Datum) 0);
	return &ft_my_slot->flags;
}

struct FtUsageFrame *volatile *
ft_ticker_chain_top_at(void)
{
	return ft_my_slot != NULL ? &ft_my_slot->top : NULL;
}

/*
 * The call on top of this backend's chain at the worker's last tick (read
 * after the flags: the tick that set them, or a later one).
 */
struct FtUsageFrame *
ft_ticker_tick_top(void)
{
	if (ft_my_slot == NULL)
		return NULL;
	pg_read_barrier();
	return ft_my_slot->tick_top;
}

bool
ft_ticker_running(void)
{
	return ft_my_slot != NULL && ft_ticker->latch != NULL;
}

/* Wake the worker if it sleeps on its latch (after a slot changed). */
static void
ft_ticker_wake(void)
{
	Latch	   *latch;

	pg_memory_barrier();
	latch = ft_ticker->latch;
	if (ft_ticker->sleeping && latch != NULL)
		SetLatch(latch);
}

/*
 * Tick this backend every ms, the first one interval from now.  The
 * caller has stopped any timer signal of its own.
 */
bool
ft_ticker_start(int ms)
{
	if (!ft_ticker_running())
		return false;
	ft_my_slot->parked = false;
	ft_my_slot->epoch++;
	pg_write_barrier();
	ft_my_slot->interval_ms = Max(ms, 1);
	ft_ticker_mark(true);
	ft_ticker_wake();
	return true;
}

/* A new interval, from the next tick on. */
void
ft_ticker_set_interval(int ms)
{
	if (ft_my_slot != NULL && ft_my_slot->interval_ms > 0)
		ft_my_slot->interval_ms = Max(ms, 1);
}

/* No more ticks (a tick under way may still set the flags once). */
void
ft_ticker_stop(void)
{
	if (ft_my_slot == NULL)
		return;
	ft_my_slot->interval_ms = 0;
	ft_my_slot->parked = false;
	ft_ticker_mark(false);
	pg_memory_barrier();
}

/*
 * How long ago the worker's last tick of this backend was, in ns: the
 * instant it sampled, which the backend credits up to, as a signal's
 * handler would have at that instant.
 */
int64
ft_ticker_tick_ago(void)
{
	int64		at;

	if (ft_my_slot == NULL)
		return 0;
	at = ft_my_slot->tick_ns;
	pg_read_barrier();
	return Max(ft_mono_ns() - at, 0);
}

/*
 * Unpark this backend if the worker parked it (found it waiting), and
 * wake the worker, which ticks it again on its old grid of instants (not
 * from now: the unparking is a plan's event).
 */
bool
ft_ticker_unpark(void)
{
	if (ft_my_slot == NULL || !ft_my_slot->parked)
		return false;
	ft_my_slot->parked = false;
	ft_ticker_wake();
	return true;
}

bool
ft_ticker_parked(void)
{
	return ft_my_slot != NULL && ft_my_slot->parked;
}

uint64
ft_ticker_ticks(void)
{
	return ft_my_slot != NULL ? ft_my_slot->ticks : 0;
}

/*
 * Whether this server has the worker, for fasttime_status(): a session
 * that sets fasttime.tick_source = worker where the server started
 * without it ticks with signals, and this says why.
 */
bool
ft_ticker_started(void)
{
	return ft_ticker_preloaded && ft_ticker != NULL;
}

const char *
ft_ticker_state(void)
{
	if (!ft_ticker_preloaded || ft_ticker == NULL)
		return "not started";
	return ft_ticker->latch != NULL ? "running" : "starting";
}

/* The worker leaves: backends see no worker and tick with signals. */
static void
ft_ticker_leave(int code, Datum arg)
{
	ft_ticker->latch = NULL;
	ft_ticker->sleeping = false;
}

/*
 * Tick one slot: count it, note its instant and the call on top of the
 * backend's chain then (the sample), park a backend that is waiting (its
 * next transition unparks it), and tell its next transition: the
 * suspension set and the gate shut in one store, so that a gate the
 * backend opens meanwhile sees the suspension (profiler.c).
 *
 * The sample is the top read here, not the node executing where the
 * backend first reads the flags: that read comes a variable time later
 * (0.2-0.3 us at the median, 6-9 us at the 90th percentile on a
 * kvm-clock guest), at a check whose place depends on when it missed on
 * the flags' line, and a node whose calls follow another's took the
 * other's ticks (a scan's filter +4.5 to +5.6 points of its query against
 * perf's picture, up to half of a window function's time to its parent:
 * bench/results/2026-12-07c-kind-b).  Reading the top, a line the backend
 * writes at every call, is a cache miss that delays the flags' store; the
 * flags' line still holds nothing else the worker reads or writes, so
 * that the backend's next check sees the tick soon after.
 */
static void
ft_ticker_tick(FtTickerSlot *s, int procno)
{
	PGPROC	   *proc = GetPGProcByNumber(procno);
	bool		waiting = proc->wait_event_info != 0;
	FtTickWord	f;
	uint64		word;

	pg_memory_barrier();
	s->ticks++;
	s->tick_ns = ft_mono_ns();
	s->tick_top = s->top;
	if (waiting)
		s->parked = true;
	memset(&f, 0, sizeof(f));
	f.gate = FT_FRAME_NONE;
	f.suspended = 1;
	memcpy(&word, &f, sizeof(word));
	pg_write_barrier();
	*(volatile uint64 *) &s->flags = word;
}

/* Is any slot being ticked and not parked?  (The worker, before it sleeps.) */
static bool
ft_ticker_any_due(void)
{
	for (int w = 0; w < ft_ticker->nwords; w++)
	{
		uint64		bits = pg_atomic_read_u64(&ft_ticker->active[w]);

		while (bits != 0)
		{
			int			i = w * 64 + pg_rightmost_one_pos64(bits);
			FtTickerSlot *s = &ft_ticker->slots[i].slot;

			bits &= bits - 1;
			if (i < ft_ticker->nslots && s->interval_ms > 0 && !s->parked)
				return true;
		}
	}
	return false;
}

/*
 * The worker's main loop: tick the slots that are due, sleep until the
 * next is, or on the latch while none is ticking.  SIGTERM ends it (the
 * postmaster's shutdown), as does the postmaster's death.
 */
void
ft_ticker_main(Datum arg)
{
	int64	   *next;
	uint32	   *epoch;
	bool	   *was_parked;
	int			n;

	/* SIGHUP stays ignored, as the postmaster set it for workers */
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);

	n = ft_ticker->nslots;
	next = palloc0(sizeof(int64) * n);
	epoch = palloc0(sizeof(uint32) * n);
	was_parked = palloc0(sizeof(bool) * n);
	ft_ticker->sleeping = false;
	on_shmem_exit(ft_ticker_leave, (Datum) 0);
	pg_write_barrier();
	ft_ticker->latch = MyLatch;

	for (;;)
	{
		int64		now = ft_mono_ns();
		int64		wake = PG_INT64_MAX;

		/*
		 * Terminated: exit 1, so that the postmaster starts it again (at
		 * its own shutdown it does not); meanwhile backends use signals.
		 * A barrier (DROP DATABASE waits for every process to absorb
		 * one) is absorbed here, each pass.
		 */
		if (ShutdownRequestPending)
			proc_exit(1);
		if (ProcSignalBarrierPending)
			ProcessProcSignalBarrier();

		for (int w = 0; w < ft_ticker->nwords; w++)
		{
			uint64		bits = pg_atomic_read_u64(&ft_ticker->active[w]);

			while (bits != 0)
			{
				int			i = w * 64 + pg_rightmost_one_pos64(bits);
				FtTickerSlot *s = &ft_ticker->slots[i].slot;
				int			ms = s->interval_ms;
				uint32		e;

				bits &= bits - 1;
				if (i >= n || ms <= 0)
					continue;
				if (s->parked)
				{
					was_parked[i] = true;
					continue;
				}
				pg_read_barrier();
				e = s->epoch;
				if (e != epoch[i])
				{
					epoch[i] = e;
					was_parked[i] = false;
					next[i] = now + (int64) ms * 1000000;
				}
				else if (was_parked[i])
				{
					/*
					 * Unparked: on to the next instant of the grid it had,
					 * no tick now, which would fall at a plan's event (the
					 * end of a wait).
					 */
					was_parked[i] = false;
					if (next[i] <= now)
						next[i] += ((now - next[i]) / ((int64) ms * 1000000) + 1) *
							(int64) ms * 1000000;
				}
				else if (next[i] <= now + FT_TICKER_SLACK_NS)
				{
					/* (late by an interval or more: one tick, then the grid) */
					ft_ticker_tick(s, i);
					next[i] += (int64) ms * 1000000;
					if (next[i] <= now)
						next[i] += ((now - next[i]) / ((int64) ms * 1000000) + 1) *
							(int64) ms * 1000000;
				}
				wake = Min(wake, next[i]);
			}
		}

		if (wake == PG_INT64_MAX)
		{
			/*
			 * Nothing to tick: sleep on the latch.  A backend starting sets
			 * its slot, then reads "sleeping"; this sets "sleeping", then
			 * looks at the slots again, so one of them sees the other.
			 */
			ft_ticker->sleeping = true;
			pg_memory_barrier();
			ResetLatch(MyLatch);
			if (!ft_ticker_any_due())
				(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_EXIT_ON_PM_DEATH, -1,
								 PG_WAIT_EXTENSION);
			ft_ticker->sleeping = false;
			pg_memory_barrier();
		}
		else
		{
			struct timespec ts;

			wake = Min(wake, now + FT_TICKER_MAX_SLEEP_NS);
			ts.tv_sec = wake / 1000000000;
			ts.tv_nsec = wake % 1000000000;
			/* a signal (SIGTERM, a barrier) interrupts it: the loop looks again */
			(void) clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
			if (!PostmasterIsAlive())
				proc_exit(1);
		}
	}
}
