/*-------------------------------------------------------------------------
 *
 * usage.c
 *	  Buffer and WAL usage credited at transitions (usage.h): the frames,
 *	  the crediting, and keeping the chain right across runs and errors.
 *
 * The executor hooks make the frames at executor start, and save the chain
 * around each run and restore it however the run ends, so that a call an
 * error cut short never stays linked; transaction abort and a query's
 * memory going away are backstops.
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

static FtUsageFrame *volatile ft_chain_top_own = NULL;
FtUsageFrame *volatile *ft_chain_top_at = &ft_chain_top_own;
BufferUsage ft_usage_buf;
WalUsage	ft_usage_wal;
bool		ft_derived_usage = true;

/*
 * The counters moved since the last transition: add the growth to every
 * frame on the chain that counts them, lane by lane (compat.h), and
 * remember the counters.  A derived frame is linked only for the profiler
 * and gets its totals from its parent's (ft_usage_derive).
 */
static pg_attribute_always_inline void
ft_usage_credit(int64 *g, int64 *s, const int lanes, const bool wal)
{
	int64		d[Max(FT_BUFUSAGE_LANES, FT_WALUSAGE_LANES)];

	for (int i = 0; i < lanes; i++)
	{
		d[i] = g[i] - s[i];
		s[i] = g[i];
	}
	for (FtUsageFrame *f = ft_chain_top; f != NULL; f = f->caller)
	{
		int64	   *acc;

		if (!(wal ? FT_INSTR_NEED_WALUSAGE(&f->instr) :
			  FT_INSTR_NEED_BUFUSAGE(&f->instr)) || f->usage_from != NULL)
			continue;
		acc = wal ? (int64 *) FT_INSTR_WALUSAGE(&f->instr) :
			(int64 *) FT_INSTR_BUFUSAGE(&f->instr);
		for (int i = 0; i < lanes; i++)
			acc[i] += d[i];
		if (!wal)
			ft_bufusage_normalize(FT_INSTR_BUFUSAGE(&f->instr));
	}
}

void
ft_usage_credit_buf(void)
{
	ft_usage_credit((int64 *) &pgBufferUsage, (int64 *) &ft_usage_buf,
					FT_BUFUSAGE_LANES, false);
}

void
ft_usage_credit_wal(void)
{
	ft_usage_credit((int64 *) &pgWalUsage, (int64 *) &ft_usage_wal,
					FT_WALUSAGE_LANES, true);
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
 * Give one instrumented node its frame if it needs one (all_nodes, or it
 * counts buffers or WAL), in the query's memory, and point the node at
 * it; a subplan's root only from the walk over es_subplanstates, so that
 * each node gets one.  The second pass marks an outer child's usage
 * derived from its parent's where usage_derive.c proves them equal,
 * deepest pairs first.
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
 * At executor start, before the nodes go on the wrappers: a frame for
 * every instrumented node that counts buffers or WAL (all nodes share
 * es_instrument), or for every one when all_nodes (profiled timing's
 * frames live in them).  Returns the derived frames, parents first, or
 * NULL; *has_frames says whether any node may have a frame.
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
	if (!*has_frames)
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
 * A run of the query has ended: give each derived frame its parent's
 * totals, parents first, so a chain copies down.  Nothing reads a node's
 * totals during a run.
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
 * A run of a query begins: note the chain, to restore however the run
 * ends.  With nothing under way, start from the counters as they are:
 * usage outside every call belongs to no node.
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
 * The run has ended, maybe by error with frames still linked: restore the
 * chain.  The next transition credits what is left to the calls under way.
 */
void
ft_usage_run_end(FtUsageFrame *saved_top)
{
	ft_chain_top = saved_top;
}

/*
 * A query's executor state is going away: unlink any frame of it still
 * linked, and everything above, so that nothing writes to freed memory.
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

/*
 * Keep the chain's top at "to" from now on (NULL: the backend's own
 * variable), copied first: a tick between the two stores finds the same
 * top in either place.  Main code, which alone changes the pointer.
 */
void
ft_chain_move_top(FtUsageFrame *volatile *to)
{
	if (to == NULL)
		to = &ft_chain_top_own;
	if (to == ft_chain_top_at)
		return;
	*to = *ft_chain_top_at;
	pg_compiler_barrier();
	ft_chain_top_at = to;
	pg_compiler_barrier();
}

/* Transaction abort: no call is under way any more. */
void
ft_usage_reset(void)
{
	ft_chain_top = NULL;
}
