/*-------------------------------------------------------------------------
 *
 * prof_frame.h
 *	  The profiler's frame of a plan node (profiler.h says how it is used).
 *
 * A header of its own so that usage.h, whose node frames embed it, need
 * not include the profiler, which uses usage.h's chain.
 *
 * src/prof_frame.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FASTTIME_PROF_FRAME_H
#define FASTTIME_PROF_FRAME_H

#include "compat.h"

/* a frame's mode: NONE (zeroed) outside profiled queries */
#define FT_FRAME_NONE		0
#define FT_FRAME_EXACT		1
#define FT_FRAME_PROFILED	2

struct FtUsageFrame;

typedef struct FtProfFrame
{
	/* what a profiled call reads, first */
	volatile uint8 mode;		/* FT_FRAME_NONE, _EXACT or _PROFILED */
	bool		core_child;		/* has a child the executor times itself
								 * (MultiExec or async) */
	bool		permanent;		/* stays exact for good */
	volatile bool settled;		/* the switch took over this exact call in
								 * flight */
	bool		core_call;		/* this exact call runs that child */
	bool		build_exact;	/* a Hash's build frame, exact for one build
								 * run inside an exact call */
	bool		build_first;	/* a Hash's build frame, linked before the
								 * Hash's loop had its first tuple */
	volatile bool switch_pending;	/* the switch found this core call in
									 * flight: profiled after it */
	struct FtUsageFrame *build; /* a Hash's child: the Hash's build frame */
	FtNodeInstr *instr;			/* the node's instrumentation */
	const FtInstrUnits *units;	/* its query's unit, for every credit to
								 * it (may differ from the running query's) */
	uint64		start;			/* exact call: the clock at its start */
	uint64		owed_from;		/* exact call: the clock from which it owes
								 * time to the profiled frames below */
	uint64		exact_stop;		/* the clock at the end of its last exact
								 * call not taken over by the switch: a tick
								 * of the worker's in [start, exact_stop)
								 * landed in it (profiler.c) */
	/* the ticks that sampled this node, for its error (prof_plan.c) */
	uint64		sample_ticks;	/* ticks whose time it was credited */
	double		sample_sq_ms;	/* the sum of their credits' squares, ms^2 */
} FtProfFrame;

#endif							/* FASTTIME_PROF_FRAME_H */
