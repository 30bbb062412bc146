/*-------------------------------------------------------------------------
 *
 * usage.c
 *	  Buffer and WAL usage credited at transitions (usage.h): the frames,
 *	  the crediting, and keeping the chain right across runs and errors.
 *
 * The node wrappers link a frame per call and compare the global counters
 * at each transition (usage.h, inline); here is what they call when the
 * counters moved, which walks the chain.  The executor hooks make every
 * instrumented node's frame at executor start, save the chain around each
 * run (ExecutorRun, ExecutorFinish) and restore it however the run ends,
 * so that a call an error cut short never stays linked: a query run inside
 * a node (a function's SPI query) links its frames on top of the calling
 * node's, which keeps receiving their usage, as in stock; a run that
 * starts with the chain empty (a top-level query, each fetch of a cursor)
 * starts from the counters as they are, since usage outside every call
 * belongs to no node.  Transaction abort clears the chain, and a query
 * whose memory goes while a frame of it is linked (an error unwound past
 * it) unlinks it and everything above: both are backstops.
 *
 * src/usage.c
 *
 *-------------------------------------------------------------------------
 */
#include "compat.h"

#include "nodes/nodeFuncs.h"
#include "utils/memutils.h"

#include "usage.h"
#include "usage_derive.h"

FtUsageFrame *volatile ft_chain_top = NULL;
BufferUsage ft_usage_buf;
WalUsage	ft_usage_wal;
bool		ft_derived_usage = true;

/*
 * The buffer counters moved since the last transition: add the growth to
 * every frame on the chain that counts buffers, and remember the counters.
 * A derived frame (usage_from) is passed over: it is linked only for the
 * profiler, joins and leaves with no transition, and gets its totals
 * from its parent's at the end of the run.
 * Lane by lane in two's complement, which is the sum stock's
 * BufferUsageAccumDiff makes field by field; up to 15 the I/O times are
 * struct timespec, normalized after each add as stock keeps them (a
 * normalized timespec is the only form of its number of nanoseconds, so
 * the totals are stock's whatever the order of the adds).
 */
void
ft_usage_credit_buf(void)
{
	int64		d[FT_BUFUSAGE_LANES];
	int64	   *g = (int64 *) &pgBufferUsage;
	int64	   *s = (int64 *) &ft_usage_buf;

	for (int i = 0; i < (int) FT_BUFUSAGE_LANES; i++)
	{
		d[i] = g[i] - s[i];
		s[i] = g[i];
	}
	for (FtUsageFrame *f = ft_chain_top; f != NULL; f = f->caller)
	{
		int64	   *acc;

		if (!FT_INSTR_NEED_BUFUSAGE(&f->instr) || f->usage_from != NULL)
			continue;
		acc = (int64 *) FT_INSTR_BUFUSAGE(&f->instr);
		for (int i = 0; i < (int) FT_BUFUSAGE_LANES; i++)
			acc[i] += d[i];
		ft_bufusage_normalize(FT_INSTR_BUFUSAGE(&f->instr));
	}
}

/* The same for the WAL counters. */
void
ft_usage_credit_wal(void)
{
	int64		d[FT_WALUSAGE_LANES];
	int64	   *g = (int64 *) &pgWalUsage;
	int64	   *s = (int64 *) &ft_usage_wal;

	for (int i = 0; i < (int) FT_WALUSAGE_LANES; i++)
	{
		d[i] = g[i] - s[i];
		s[i] = g[i];
	}
	for (FtUsageFrame *f = ft_chain_top; f != NULL; f = f->caller)
	{
		int64	   *acc;

		if (!FT_INSTR_NEED_WALUSAGE(&f->instr) || f->usage_from != NULL)
			continue;
		acc = (int64 *) FT_INSTR_WALUSAGE(&f->instr);
		for (int i = 0; i < (int) FT_WALUSAGE_LANES; i++)
			acc[i] += d[i];
	}
}

/* A walk over one query's plan, each node once (as node_wrappers.c's). */
typedef struct FtFrameWalk
{
	PlanState **roots;			/* subplan roots, sorted */
	int			nroots;
	PlanState  *current_root;	/* the subplan being walked, or NULL */
	EState	   *estate;
	bool		all_nodes;		/* a frame for every instrumented node, not
								 * only for those counting buffers or WAL */
	bool		marking;		/* second pass: mark derived frames */
	bool		counts_usage;	/* a frame counts buffers or WAL */
	FtUsageFrame **derived;		/* derived frames, children first */
	int			nderived;
	int			maxderived;
} FtFrameWalk;

static int
ft_usage_ptr_cmp(const void *a, const void *b)
{
	uintptr_t	x = (uintptr_t) *(PlanState *const *) a;
	uintptr_t	y = (uintptr_t) *(PlanState *const *) b;

	return (x > y) - (x < y);
}

/*
 * Give one instrumented node its frame, if it needs one (all_nodes, or it
 * counts buffers or WAL): a copy of its instrumentation
 * (which nothing has used yet: the plan has not run) in the query's
 * memory, with the chain fields after it, and point the node at it.  A
 * subplan's root is only entered from the walk over es_subplanstates, so
 * that each node gets one frame (see ft_wrap_walker).  A second pass over
 * the same nodes, when every node that counts usage has its frame, marks a
 * node's outer child's usage derived from the node's where
 * usage_derive.c proves it equal and both count the same things (nodes
 * of one query do); it meets the deepest pairs first.
 */
static bool
ft_usage_frame_walker(PlanState *ps, void *context)
{
	FtFrameWalk *w = (FtFrameWalk *) context;

	if (ps != w->current_root && w->nroots > 0 &&
		bsearch(&ps, w->roots, w->nroots, sizeof(PlanState *), ft_usage_ptr_cmp) != NULL)
		return false;
	if (ps->instrument != NULL && !w->marking &&
		(w->all_nodes || FT_INSTR_NEED_BUFUSAGE(ps->instrument) ||
		 FT_INSTR_NEED_WALUSAGE(ps->instrument)))
	{
		FtUsageFrame *f = MemoryContextAlloc(w->estate->es_query_cxt,
											 sizeof(FtUsageFrame));

		/* the instrumentation copied, the rest zeroed: not twice over */
		memcpy(&f->instr, ps->instrument, sizeof(FtNodeInstr));
		memset((char *) f + sizeof(FtNodeInstr), 0,
			   sizeof(FtUsageFrame) - sizeof(FtNodeInstr));
		f->owner = w->estate;
		ps->instrument = &f->instr;
		if (FT_INSTR_NEED_BUFUSAGE(&f->instr) || FT_INSTR_NEED_WALUSAGE(&f->instr))
			w->counts_usage = true;
	}
	if (planstate_tree_walker(ps, ft_usage_frame_walker, context))
		return true;
	if (w->marking && ps->instrument != NULL && outerPlanState(ps) != NULL &&
		outerPlanState(ps)->instrument != NULL)
	{
		FtUsageFrame *pf = (FtUsageFrame *) ps->instrument;
		FtUsageFrame *cf = (FtUsageFrame *) outerPlanState(ps)->instrument;
		bool		buf = FT_INSTR_NEED_BUFUSAGE(&pf->instr);
		bool		wal = FT_INSTR_NEED_WALUSAGE(&pf->instr);

		if ((buf || wal) && ft_derived_usage &&
			buf == FT_INSTR_NEED_BUFUSAGE(&cf->instr) &&
			wal == FT_INSTR_NEED_WALUSAGE(&cf->instr) &&
			ft_usage_derivable(ps, outerPlanState(ps)))
		{
			if (w->nderived == w->maxderived)
			{
				w->maxderived = w->maxderived * 2 + 4;
				w->derived = w->derived == NULL ?
					palloc(sizeof(FtUsageFrame *) * w->maxderived) :
					repalloc(w->derived, sizeof(FtUsageFrame *) * w->maxderived);
			}
			cf->usage_from = pf;
			w->derived[w->nderived++] = cf;
		}
	}
	return false;
}

StaticAssertDecl(offsetof(FtUsageFrame, instr) == 0,
				 "a frame's instrumentation comes first");

/*
 * At executor start, before the nodes go on the wrappers (and before the
 * profiler records their instrumentation): a frame for every instrumented
 * node of the query that counts buffers or WAL, or for every one when
 * all_nodes (profiled timing's frames live in them), the main tree and
 * each subplan.  Every node a wrapper can ever run for is among them: the
 * wrappers are only given to nodes of this tree, here or by the later
 * walks over the same tree.  A node of an exact-timed query that counts
 * neither has no frame, and its wrapper never looks for one; its
 * instrumentation stays where InstrAlloc put it.  (Every plan node's
 * instrumentation is allocated with the query's options, es_instrument,
 * so when those count neither there is nothing to walk for.)  Returns
 * the frames whose usage is derived (usage_derive.c), parents first, in
 * the query's memory; NULL when there are none.  *has_frames says whether
 * any node may have one (if not, no call of the query links a frame).
 */
FtUsageDerived *
ft_usage_frame_query(PlanState *planstate, List *subplanstates, EState *estate,
					 bool all_nodes, bool *has_frames)
{
	FtUsageDerived *result = NULL;
	FtFrameWalk w;
	ListCell   *lc;

	*has_frames = all_nodes ||
		(estate->es_instrument & (INSTRUMENT_BUFFERS | INSTRUMENT_WAL)) != 0;
	if (!all_nodes &&
		(estate->es_instrument & (INSTRUMENT_BUFFERS | INSTRUMENT_WAL)) == 0)
		return NULL;
	memset(&w, 0, sizeof(w));
	w.estate = estate;
	w.all_nodes = all_nodes;
	if (subplanstates != NIL)
	{
		w.roots = palloc(sizeof(PlanState *) * list_length(subplanstates));
		foreach(lc, subplanstates)
		{
			if (lfirst(lc) != NULL)
				w.roots[w.nroots++] = (PlanState *) lfirst(lc);
		}
		qsort(w.roots, w.nroots, sizeof(PlanState *), ft_usage_ptr_cmp);
	}
	/*
	 * The frames, then (every node having its frame) the derived ones;
	 * there are none when no frame counts buffers or WAL.
	 */
	for (int pass = 0; pass < 2; pass++)
	{
		if (pass == 1 && !w.counts_usage)
			break;
		w.marking = pass == 1;
		w.current_root = NULL;
		if (planstate != NULL)
			(void) ft_usage_frame_walker(planstate, &w);
		for (int i = 0; i < w.nroots; i++)
		{
			w.current_root = w.roots[i];
			(void) ft_usage_frame_walker(w.roots[i], &w);
		}
	}
	if (w.roots)
		pfree(w.roots);
	if (w.nderived > 0)
	{
		result = MemoryContextAlloc(estate->es_query_cxt,
									offsetof(FtUsageDerived, frames) +
									sizeof(FtUsageFrame *) * w.nderived);
		result->n = w.nderived;
		/* the walk met children first; parents must be copied first */
		for (int i = 0; i < w.nderived; i++)
			result->frames[i] = w.derived[w.nderived - 1 - i];
		pfree(w.derived);
	}
	return result;
}

/*
 * A run of the query has ended (ExecutorRun or ExecutorFinish returned,
 * in a parallel worker before its instrumentation is reported): give each
 * derived frame its parent's totals, which are complete up to here.  The
 * parents come first, so a chain of derived frames copies down.  Nothing
 * reads a node's totals during a run.
 */
void
ft_usage_derive(const FtUsageDerived *derived)
{
	if (derived == NULL)
		return;
	for (int i = 0; i < derived->n; i++)
	{
		FtUsageFrame *f = derived->frames[i];

		if (FT_INSTR_NEED_BUFUSAGE(&f->instr))
			*FT_INSTR_BUFUSAGE(&f->instr) = *FT_INSTR_BUFUSAGE(&f->usage_from->instr);
		if (FT_INSTR_NEED_WALUSAGE(&f->instr))
			*FT_INSTR_WALUSAGE(&f->instr) = *FT_INSTR_WALUSAGE(&f->usage_from->instr);
	}
}

/*
 * A run (ExecutorRun, ExecutorFinish) of a query on fasttime's wrappers
 * begins: note the chain, to restore it with ft_usage_run_end however the
 * run ends.  With nothing under way, start from the counters as they are:
 * what they did outside every call belongs to no node.  (A chain holding
 * only frames linked for the profiler keeps the old snapshot: none of
 * them is ever credited, so the next transition credits the difference to
 * nobody, as a new snapshot would.)
 */
void
ft_usage_run_begin(FtUsageFrame **saved_top)
{
	*saved_top = ft_chain_top;
	if (ft_chain_top == NULL)
	{
		ft_usage_buf = pgBufferUsage;
		ft_usage_wal = pgWalUsage;
	}
}

/*
 * The run has ended, normally (the chain is as it was) or by error (the
 * frames of the calls the error cut short are still linked): restore the
 * chain.  The usage since the last transition is left for the next one,
 * which credits it to the calls still under way: the node that ran the
 * query, if any, as its stock diff would.
 */
void
ft_usage_run_end(FtUsageFrame *saved_top)
{
	ft_chain_top = saved_top;
}

/*
 * A query's executor state is going away (ExecutorEnd, or the memory of a
 * failed portal or subtransaction being freed).  Normally none of its
 * frames is linked; if one is (an error unwound past a run without our
 * hooks' restore), unlink it and everything above it, which ran inside
 * it, so that no later transition writes to freed memory.
 */
void
ft_usage_forget_query(const EState *estate)
{
	FtUsageFrame *cut = NULL;

	for (FtUsageFrame *f = ft_chain_top; f != NULL; f = f->caller)
	{
		if (f->owner == estate)
			cut = f;
	}
	if (cut != NULL)
		ft_chain_top = cut->caller;
}

/* Transaction abort: no call is under way any more. */
void
ft_usage_reset(void)
{
	ft_chain_top = NULL;
}
