/*-------------------------------------------------------------------------
 *
 * prof_frame.h
 *	  The profiler's frame of a plan node: what profiled node timing keeps
 *	  per node (profiler.h says how it is used).
 *
 * A header of its own because it is the one thing of the profiler the
 * chain of calls under way (usage.h) needs: each node's frame embeds it,
 * so that a profiled call reaches it with no load.  The profiler uses the
 * chain, and the chain needs only this layout, so the data flows one way.
 *
 * src/prof_frame.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FASTTIME_PROF_FRAME_H
#define FASTTIME_PROF_FRAME_H

#include "compat.h"

/*
 * a frame's mode: NONE for a node of a query that is not profiled (the
 * zeroed frame's), EXACT or PROFILED for a profiled query's
 */
#define FT_FRAME_NONE		0
#define FT_FRAME_EXACT		1
#define FT_FRAME_PROFILED	2

struct FtUsageFrame;

typedef struct FtProfFrame
{
	/* what a profiled call reads, first */
	volatile uint8 mode;		/* FT_FRAME_NONE, _EXACT or _PROFILED */
	bool		core_child;		/* has a child the executor times itself
								 * (a MultiExec or async node): its calls in
								 * which that child runs are exact */
	bool		permanent;		/* stays exact for good */
	volatile bool settled;		/* the switching tick took over this exact
								 * call in flight */
	bool		core_call;		/* this exact call runs a child the executor
								 * times itself (set while on the chain) */
	bool		build_exact;	/* a Hash's build frame made exact for one
								 * build, run inside an exact call */
	volatile bool switch_pending;	/* the switching tick found this core
									 * call in flight: it stays exact to its
									 * end, then the frame is profiled */
	struct FtUsageFrame *build; /* the node is a Hash's child: the frame
								 * its calls link the Hash's time to while
								 * the Hash builds (profiler.c) */
	FtNodeInstr *instr;			/* the node's instrumentation */
	const FtInstrUnits *units;	/* the unit its query writes times in: the
								 * ticks and settlements of another query
								 * (a query nested in its node, under
								 * another timing_clock_source on 19)
								 * convert with it, not the current one */
	uint64		start;			/* exact call: the clock at its start */
	uint64		owed_from;		/* exact call: the clock from which its
								 * time is owed to the profiled frames
								 * below it */
	/* the ticks that sampled this node, for its error (profiler.c) */
	uint64		sample_ticks;	/* ticks whose time it was credited */
	double		sample_sq_ms;	/* the sum of the squares of those ticks'
								 * credited times, ms^2 */
} FtProfFrame;

#endif							/* FASTTIME_PROF_FRAME_H */
