/*-------------------------------------------------------------------------
 *
 * sampling.h
 *	  Sampled node timing: the per-node state, the per-query rates, and the
 *	  rule that chooses a node's rate from what it has measured.
 *
 * Plain C without server dependencies, so that the rule can be unit-tested
 * with made-up measurements; node_wrappers.c does the sampling itself.
 *
 * src/sampling.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FASTTIME_SAMPLING_H
#define FASTTIME_SAMPLING_H

#include <stdint.h>

/*
 * Sampled timing of one node (see node_wrappers.c): the countdown to its
 * next timed call, the rate that countdown was drawn at, and what its timed
 * calls have measured so far.
 *
 * Work: the node calls made inside a call, the rows its quals removed
 * (nfiltered1 + nfiltered2), its buffer hits, and FT_SAMPLE_BLOCK_IO_WORK
 * for each block it read or wrote.  For nodes with children or a qual, a call
 * whose work reaches work_limit, FT_SAMPLE_LONG_FACTOR times the node's
 * mean and at least FT_SAMPLE_LONG_MIN, is a long call: it is timed
 * whatever the countdown says and counts once (its probability of being
 * timed is 1), so a single long call among many short ones -- the last
 * call of a Hash Join that scans the rest of its outer side without a
 * match -- is never left to chance.
 *
 * Spikes: a timed call that took FT_SAMPLE_LONG_FACTOR
 * times the node's mean call and at least FT_SAMPLE_SPIKE_NS while its
 * work stayed under the long-call limit -- a preemption, an interrupt
 * storm, a lock wait: time that befell the call, not work it did -- counts
 * once, and the calls its gap skipped count at the mean (see
 * ft_sample_stand_in).  Weighted like an ordinary sampled call, one
 * preemption of a millisecond would add sixteen to the node at 1 in 16, and
 * none to its parent unless the parent's call was timed too: a child longer
 * than its parent, a wrong number in the one EXPLAIN a DBA reads.  Spikes
 * that recur -- at least FT_SAMPLE_MAX_SPIKES, and one in
 * FT_SAMPLE_SPIKE_EVERY timed calls or more often -- are no accident: the
 * node is timed on every call until they are rare again, which counts each
 * of them.  Preemption hits a node's timed calls in proportion to the
 * time they take, a small share of a busy machine's when the calls are
 * cheap ones, and stays below that rate; calls long for a reason of their
 * own, often enough to matter (one in 10,000 calls of 20 us among calls of
 * 50 ns is 4 % of the node's time), reach it.
 *
 * Time counted once is counted once by every node above too, whether or
 * not their current calls are timed: an ancestor in an untimed call gets
 * it added directly, one in a timed call leaves it out of what it weights.
 * Otherwise a spike in a child's timed call, in a parent's untimed one,
 * would show in the child and not in the parent.
 */
typedef struct FtNodeSample
{
	int32_t		countdown;		/* calls left until the next timed one */
	int32_t		gap;			/* the length that countdown started at */
	int32_t		level;			/* index of the rate in FtSampling */
	int32_t		recheck;		/* timed calls until the rate is revised */
	double		weight;			/* what the timed call ending it counts */
	double		calls;			/* calls in finished gaps */
	double		s1;				/* estimated sum of call times, ns */
	double		s2;				/* estimated sum of their squares */
	double		top[2];			/* the two largest terms of s2 */
	double		work;			/* estimated work of its calls (below) */
	double		work_limit;		/* a call with this much work is long */
	int32_t		spikes;			/* spikes among its timed calls (below) */
	double		timed;			/* its timed calls at a sampled rate */
	/* where time counted once goes too (see ft_sample_propagate) */
	int32_t		parent;			/* the nearest instrumented node above, or -1 */
	int32_t		always_timed;	/* not sampled: every call is timed */
	int32_t		timing;			/* a call of it timed in full is running */
	double		inner;			/* time counted once inside that call, ns */
	double		pending;		/* time counted once added to untimed calls */
	void	   *instr;			/* its Instrumentation */
} FtNodeSample;

/* rates 1, 1/2, 1/4, ... down to 1/interval: at most this many */
#define FT_SAMPLE_MAX_LEVELS 24

/*
 * Sampled timing of one query: the rates a node may be timed at, each as
 * the scale that turns a unit-exponential quantile into a geometric gap
 * and the weight a timed call then counts with (the exact mean of those
 * gaps); the cost of timing one call; and the per-node states, by
 * plan_node_id.  interval 1 means every call is timed.
 */
typedef struct FtSampling
{
	int			interval;		/* fasttime.timing_sample_interval */
	int			nlevels;
	double		timed_call_ns;	/* extra cost of one timed call */
	double		inv_rate[FT_SAMPLE_MAX_LEVELS];	/* 1, 2, 4, ..., interval */
	double		gap_scale[FT_SAMPLE_MAX_LEVELS];
	double		weight[FT_SAMPLE_MAX_LEVELS];
	FtNodeSample *nodes;
	int			nnodes;
} FtSampling;

/* the rules of the per-node rate; see ft_sample_choose_level */
#define FT_SAMPLE_REL_ERR		0.03	/* target relative standard error */
#define FT_SAMPLE_COST_SHARE	0.02	/* timing's share of a node's time */
#define FT_SAMPLE_RECHECK		8	/* timed calls between revisions */
#define FT_SAMPLE_LONG_FACTOR	16	/* a long call: this many times the mean work */
#define FT_SAMPLE_LONG_MIN		64	/* ... and at least this much */
#define FT_SAMPLE_BLOCK_IO_WORK	64	/* a block read or written: a long call's worth */
#define FT_SAMPLE_SPIKE_NS		20000.0	/* a spike takes at least 20 us ... */
#define FT_SAMPLE_MAX_SPIKES	2	/* ... and this many make a node exact */
#define FT_SAMPLE_SPIKE_EVERY	10000.0	/* ... if one in this many timed calls */

/* Do a node's spikes recur (see FtNodeSample)? */
static inline int
ft_sample_spikes_recur(const FtNodeSample *s)
{
	return s->spikes >= FT_SAMPLE_MAX_SPIKES &&
		(double) s->spikes * FT_SAMPLE_SPIKE_EVERY >= s->timed;
}

/*
 * The rate a node's next calls are timed at, as an index into the query's
 * rates, from what its timed calls measured so far (s1, s2: the
 * Horvitz-Thompson estimates of the sum of its call times and of their
 * squares over "calls" calls):
 *
 * - accuracy: sampling n calls at rate p adds a relative variance of
 *   (1/p - 1) * sum(t^2) / sum(t)^2 = (1/p - 1) / n_eff to the node's
 *   total, so 1/p may be at most 1 + FT_SAMPLE_REL_ERR^2 * n_eff.  Few
 *   calls, or a spread dominated by recurring long calls, keep n_eff small
 *   and the node exact.  The two largest terms are left out of sum(t^2):
 *   a single interrupt or preemption that landed in one timed call (a
 *   millisecond among calls of tens of nanoseconds) would otherwise keep
 *   the node exact for millions of calls, although it says nothing about
 *   the calls to come and perturbs exact timing just as much;
 * - cost: timing at rate p costs p * timed_call_ns per call, which need
 *   not be lower than FT_SAMPLE_COST_SHARE of the node's mean call: a node
 *   whose calls are long is timed on every call;
 * - the lowest rate is 1 in interval, the last of the rates offered.
 *
 * The faster of the first two wins, rounded up to the next rate offered.
 * Runs every FT_SAMPLE_RECHECK timed calls, never on an untimed one.
 */
static inline int
ft_sample_choose_level(const FtSampling *sampling, const FtNodeSample *s)
{
	double		inv_err,
				inv_cost,
				inv,
				rest;
	int			level = 0;

	if (!(s->calls > 0) || !(s->s1 >= 0) || !(s->s2 >= 0))
		return 0;
	/* recurring spikes: only timing every call counts them all */
	if (ft_sample_spikes_recur(s))
		return 0;
	/* still exact until a few calls have been timed */
	if (s->calls < 4 * FT_SAMPLE_RECHECK)
		return 0;
	rest = s->s2 - s->top[0] - s->top[1];
	inv_err = 1.0 + FT_SAMPLE_REL_ERR * FT_SAMPLE_REL_ERR *
		(rest > 0 ? s->s1 * s->s1 / rest : s->calls);
	if (s->s1 > 0 && sampling->timed_call_ns > 0)
		inv_cost = sampling->timed_call_ns /
			(FT_SAMPLE_COST_SHARE * (s->s1 / s->calls));
	else
		inv_cost = inv_err;		/* no cost known: accuracy alone */
	inv = inv_cost < inv_err ? inv_cost : inv_err;
	while (level + 1 < sampling->nlevels && sampling->inv_rate[level + 1] <= inv)
		level++;
	return level;
}

/*
 * Is a timed call of ns nanoseconds a spike (see FtNodeSample)?  Also at
 * weight 1, where it counts once anyway: kept out of the sums it would
 * make the node exact for good (the two largest terms are left out, not
 * three preemptions), and its time still reaches the nodes above.
 */
static inline int
ft_sample_is_spike(const FtNodeSample *s, double ns)
{
	if (!(s->calls > 0) || !(s->s1 >= 0))
		return 0;
	return ns >= FT_SAMPLE_SPIKE_NS &&
		ns >= FT_SAMPLE_LONG_FACTOR * (s->s1 / s->calls);
}

/*
 * A timed call that counts once (a long call or a spike) still ends a gap
 * of untimed calls: they count at the node's mean so far, in the node's
 * total (the nanoseconds returned) and in its sums, whose mean and mean
 * square they keep.  The expected gap is the weight, so this is as
 * unbiased for them as weighting; the call itself stays out of the sums.
 */
static inline double
ft_sample_stand_in(FtNodeSample *s)
{
	double		n = (double) s->gap - 1.0,
				mean;

	if (!(n > 0) || !(s->calls > 0) || !(s->s1 >= 0) || !(s->s2 >= 0))
		return 0.0;
	mean = s->s1 / s->calls;
	s->s2 += n * (s->s2 / s->calls);
	s->work += n * (s->work / s->calls);
	s->s1 += n * mean;
	s->calls += n;
	return n * mean;
}

#endif							/* FASTTIME_SAMPLING_H */
