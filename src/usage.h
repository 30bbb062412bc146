/*-------------------------------------------------------------------------
 *
 * usage.h
 *	  Buffer and WAL usage credited at transitions: the chain of the node
 *	  calls under way, and the compare the node wrappers run inline.
 *
 * Stock PostgreSQL gives each instrumented node the usage during its
 * calls: InstrStartNode copies pgBufferUsage (and pgWalUsage),
 * InstrStopNode adds the difference.  Here each call of a node that counts
 * buffers or WAL links the node's frame on a per-backend chain of the
 * calls under way, innermost first.  At every transition (a call starting,
 * before its frame is linked, or returning, before it is unlinked) the
 * wrapper compares the global counters with their values at the previous
 * transition (ft_usage_buf, ft_usage_wal: a few vector compares, no
 * stores), and only when they moved credits the difference to every frame
 * on the chain that counts it (ft_usage_credit_buf/_wal, out of line).
 *
 * That is exactly stock's number: a frame joins or leaves the chain only
 * at a transition of its own, so it is on the chain at a transition iff
 * it was during all the usage since the previous one.  No sum over the
 * plan tree is made (usage follows call nesting, not plan structure: a
 * CTE scanned twice, an InitPlan run inside a lower node).  Usage while
 * the chain is empty belongs to no node, as in stock; nodes the executor
 * times itself keep stock's diff and are not on the chain meanwhile.  Each
 * counter is argued separately over the frames that count it.  A node
 * whose usage provably equals its parent's makes no transitions at all
 * (usage_derive.c).
 *
 * The chain is also the profiler's (prof_frame.h): a profiled query's
 * calls are linked whether or not they count buffers, with no transition
 * and never credited, and the caller is stored before the frame is
 * published, since the tick (a signal handler) walks the chain.
 *
 * A frame is fasttime's copy of the node's instrumentation with the chain
 * fields after it, and node->instrument points at it (ft_usage_frame_query):
 * the wrapper reaches its frame with the load it makes anyway, and every
 * reader in core reads through the pointer.
 *
 * src/usage.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FASTTIME_USAGE_H
#define FASTTIME_USAGE_H

#include "compat.h"

#include "nodes/execnodes.h"
#include "port/atomics.h"

#include "prof_frame.h"

typedef struct FtUsageFrame
{
	FtNodeInstr instr;			/* the node's instrumentation, copied: must
								 * be first, node->instrument points here */
	struct FtUsageFrame *caller;	/* the frame of the call this one runs
									 * in, while on the chain */
	FtProfFrame prof;			/* the profiler's frame (prof_frame.h): a
								 * profiled call reaches it with no load */
	const EState *owner;		/* the query the node belongs to */
	struct FtUsageFrame *usage_from;	/* when not NULL, this node's usage
										 * is this frame's (usage_derive.c):
										 * its calls make no transitions */
} FtUsageFrame;

/*
 * The frames of one query whose usage is derived, parents before their
 * children (a derived frame's usage_from may itself be derived).
 */
typedef struct FtUsageDerived
{
	int			n;
	FtUsageFrame *frames[FLEXIBLE_ARRAY_MEMBER];
} FtUsageDerived;

/*
 * The chain of the calls under way, innermost first.  Its top is reached
 * through ft_chain_top_at: the backend's own variable, or, once the
 * backend has a slot of the tick worker's shared memory, the slot's, which
 * the worker reads at each tick (ticker.c), so that a tick samples the
 * call under way at its instant, however late the backend takes it.  The
 * pointer moves only in main code, both places then holding the same top
 * (ft_chain_move_top).
 */
extern FT_HIDDEN FtUsageFrame *volatile *ft_chain_top_at;

#define ft_chain_top (*ft_chain_top_at)

/* keep the top at "to" from now on (NULL: the backend's own variable) */
extern void ft_chain_move_top(FtUsageFrame *volatile *to);

/* fasttime.derived_usage: derive usage where provably equal (usage.c) */
extern bool ft_derived_usage;

/* the global counters at the last transition that compared them */
extern FT_HIDDEN BufferUsage ft_usage_buf;
extern FT_HIDDEN WalUsage ft_usage_wal;

/* The frame of a node on fasttime's wrappers: its instrumentation. */
static inline FtUsageFrame *
ft_usage_frame_of(PlanState *node)
{
	return (FtUsageFrame *) node->instrument;
}

/*
 * Link a call's frame on top of the chain, and unlink it; the barriers
 * (no instruction) order the stores for the tick.
 */
static pg_attribute_always_inline void
ft_chain_link(FtUsageFrame *uf)
{
	FtUsageFrame *volatile *at = ft_chain_top_at;

	uf->caller = *at;
	pg_compiler_barrier();
	*at = uf;
	pg_compiler_barrier();
}

static pg_attribute_always_inline void
ft_chain_unlink(FtUsageFrame *uf)
{
	FtUsageFrame *volatile *at = ft_chain_top_at;

	pg_compiler_barrier();
	*at = uf->caller;
	pg_compiler_barrier();
}

/* The node frame a profiler's frame is part of. */
static inline FtUsageFrame *
ft_usage_frame_of_prof(FtProfFrame *pf)
{
	return (FtUsageFrame *) ((char *) pf - offsetof(FtUsageFrame, prof));
}

/* The profiler's frame of the innermost profiled call at or below f. */
static inline FtProfFrame *
ft_chain_prof(FtUsageFrame *f)
{
	for (; f != NULL; f = f->caller)
	{
		if (f->prof.mode != FT_FRAME_NONE)
			return &f->prof;
	}
	return NULL;
}

/* The profiler's frame of the call a profiled query's call runs in. */
static inline FtProfFrame *
ft_prof_below(FtProfFrame *pf)
{
	return ft_chain_prof(ft_usage_frame_of_prof(pf)->caller);
}

/* unaligned vector types for the compare, of the function's target width */
typedef int64 ft_u8 __attribute__((vector_size(64), aligned(8), may_alias));
typedef int64 ft_u4 __attribute__((vector_size(32), aligned(8), may_alias));
typedef int64 ft_u2 __attribute__((vector_size(16), aligned(8), may_alias));
typedef int64 ft_u1 __attribute__((aligned(8), may_alias));

/* a short loop of a compile-time count, unrolled (GCC; clang unrolls it) */
#if defined(__GNUC__) && !defined(__clang__)
#define FT_UNROLL _Pragma("GCC unroll 8")
#else
#define FT_UNROLL
#endif

/* the instruction sets the wrappers are built for (node_wrappers.c) */
#define FT_ISA_portable 0
#define FT_ISA_avx2 1

/*
 * Is a 256-bit vector all zero?  One VPTEST instead of a six-instruction
 * reduction; reached only in the AVX2 build.  GCC only: clang (the JIT's
 * bitcode) refuses a 256-bit operand outside AVX code.
 */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define FT_HAVE_VPTEST 1
static pg_attribute_always_inline bool
ft_usage_zero_256(ft_u4 v)
{
	bool		zero;

	__asm__("vptest %1, %1" : "=@ccz"(zero) : "x"(v));
	return zero;
}
#else
#define FT_HAVE_VPTEST 0
#endif

/*
 * Are n 64-bit lanes at a and b the same?  XOR and OR over the lanes, one
 * test at the end; n and isa are compile-time constants, so the loops
 * unroll to a few vector operations.  The AVX2 build's last chunk may
 * overlap the one before (a lane compared twice changes nothing).
 */
static pg_attribute_always_inline bool
ft_usage_lanes_equal(const void *a_p, const void *b_p, const int n,
					 const int isa)
{
	const char *a = (const char *) a_p;
	const char *b = (const char *) b_p;
	int			i = 0;
	int64		diff = 0;

#if FT_HAVE_VPTEST
	if (isa == FT_ISA_avx2 && n >= 4)
	{
		ft_u4		acc = {0};

		FT_UNROLL
		for (; i + 4 <= n; i += 4)
			acc |= *(const ft_u4 *) (a + i * 8) ^ *(const ft_u4 *) (b + i * 8);
		if (i < n)
			acc |= *(const ft_u4 *) (a + (n - 4) * 8) ^ *(const ft_u4 *) (b + (n - 4) * 8);
		return ft_usage_zero_256(acc);
	}
#endif
	if (n >= 8)
	{
		ft_u8		acc = {0};

		for (; i + 8 <= n; i += 8)
			acc |= *(const ft_u8 *) (a + i * 8) ^ *(const ft_u8 *) (b + i * 8);
		for (int j = 0; j < 8; j++)
			diff |= acc[j];
	}
	if (n - i >= 4)
	{
		ft_u4		acc = {0};

		for (; i + 4 <= n; i += 4)
			acc |= *(const ft_u4 *) (a + i * 8) ^ *(const ft_u4 *) (b + i * 8);
		for (int j = 0; j < 4; j++)
			diff |= acc[j];
	}
	for (; i + 2 <= n; i += 2)
	{
		ft_u2		x = *(const ft_u2 *) (a + i * 8) ^ *(const ft_u2 *) (b + i * 8);

		diff |= x[0] | x[1];
	}
	for (; i < n; i++)
		diff |= *(const ft_u1 *) (a + i * 8) ^ *(const ft_u1 *) (b + i * 8);
	return diff == 0;
}

extern FT_HIDDEN void ft_usage_credit_buf(void);
extern FT_HIDDEN void ft_usage_credit_wal(void);

/* A transition: credit the counters' growth since the last, if any. */
static pg_attribute_always_inline void
ft_usage_transition(const bool buf, const bool wal, const int isa)
{
	if (buf && unlikely(!ft_usage_lanes_equal(&pgBufferUsage, &ft_usage_buf,
											  FT_BUFUSAGE_LANES, isa)))
		ft_usage_credit_buf();
	if (wal && unlikely(!ft_usage_lanes_equal(&pgWalUsage, &ft_usage_wal,
											  FT_WALUSAGE_LANES, isa)))
		ft_usage_credit_wal();
}

/* executor hooks' side (usage.c) */
extern FtUsageDerived *ft_usage_frame_query(PlanState *planstate,
											List *subplanstates,
											EState *estate, bool all_nodes,
											bool *has_frames);
extern void ft_usage_derive(const FtUsageDerived *derived);
extern void ft_usage_run_begin(FtUsageFrame **saved_top);
extern void ft_usage_run_end(FtUsageFrame *saved_top);
extern void ft_usage_forget_query(const EState *estate);
extern void ft_usage_reset(void);

#endif							/* FASTTIME_USAGE_H */
