/*-------------------------------------------------------------------------
 *
 * usage_derive.c
 *	  Which plan nodes' buffer and WAL usage is, provably, their parent's:
 *	  such a node's calls need no transitions.
 *
 * Stock gives a node the usage during its calls (usage.h).  Take a parent
 * P and its child C where
 *
 *	 (a) every call of C, and every stock start/stop pair around C that can
 *		 move a counter, happens inside a call of P; and
 *	 (b) P's own work, outside C's calls, moves no buffer or WAL counter.
 *
 * Then C's stock totals equal P's, whatever C does: C's calls need no
 * transitions, and P's totals are copied to C when a run ends
 * (ft_usage_derive).  That takes the compares off every call of C:
 * `count(*)` over a scan.
 *
 * (b) is proved of one shape only, each piece checked against a list of
 * what is known to touch no buffer:
 *
 * - P is an Aggregate of its whole input (AGG_PLAIN) with no grouping
 *   sets, no DISTINCT or ORDER BY inside an aggregate (a sort may spill),
 *   no InitPlans or SubPlans of its own.
 * - Every step of its transition expression, HAVING and target list calls
 *   nothing outside the executor (core slot deforming, Vars, Consts,
 *   boolean logic, null tests, aggregate bookkeeping), or calls one of a
 *   fixed list of built-in functions that read no buffer and take no
 *   argument that could point into TOAST (why max(text) is not on it);
 *   so are its aggregates' transition, final and serialization functions.
 * - C returns its rows in a slot of a fixed core kind, so that P's copy
 *   of its first input row reads nothing; if virtual, with no column of
 *   variable length, which could hold an expanded object that the copy
 *   flattens (a row variable's fields still in TOAST).
 *
 * And (a):
 *
 * - C is P's outer plan and depends on no parameter (a parameter's change
 *   rescans C inside P's call but outside C's, and a rescan can read).
 * - C's subtree holds no Gather, Gather Merge, Foreign or Custom Scan,
 *   whose shutdown (ExecShutdownNode, maybe when P is not running) can
 *   move the counters.
 *
 * Checked once per query at executor start, on the compiled expressions
 * (what will run, JIT or not).
 *
 * src/usage_derive.c
 *
 *-------------------------------------------------------------------------
 */
#include "compat.h"

#include "executor/execExpr.h"
#include "executor/nodeAgg.h"
#include "nodes/nodeFuncs.h"
#include "utils/fmgroids.h"

#include "usage_derive.h"

/*
 * Built-in functions that read no buffer, write no WAL and take no
 * argument that could point into TOAST (aggregate states included: they
 * are pass-by-value or built in memory by the aggregate).
 */
static const Oid ft_quiet_functions[] = {
	/* count(*), count(any) */
	F_INT8INC, F_INT8INC_ANY,
	/* sum, avg over integers */
	F_INT2_SUM, F_INT4_SUM,
	F_INT2_AVG_ACCUM, F_INT4_AVG_ACCUM, F_INT8_AVG_ACCUM,
	F_INT8_AVG, F_NUMERIC_POLY_SUM, F_NUMERIC_POLY_AVG,
	F_INT8_AVG_SERIALIZE, F_NUMERIC_POLY_SERIALIZE,
	/* min, max */
	F_INT2LARGER, F_INT2SMALLER, F_INT4LARGER, F_INT4SMALLER,
	F_INT8LARGER, F_INT8SMALLER,
	F_FLOAT4LARGER, F_FLOAT4SMALLER, F_FLOAT8LARGER, F_FLOAT8SMALLER,
	/* sum, avg over floats */
	F_FLOAT4PL, F_FLOAT8PL, F_FLOAT4_ACCUM, F_FLOAT8_ACCUM, F_FLOAT8_AVG,
	/* conversions, arithmetic and comparisons */
	F_INT8_INT4, F_FLOAT8_INT2, F_FLOAT8_INT4, F_FLOAT8_INT8,
	F_INT4PL, F_INT4MI, F_INT4MUL, F_INT4DIV,
	F_INT8PL, F_INT8MI, F_INT8MUL, F_INT8DIV,
	F_INT48PL, F_INT48MI, F_INT48MUL, F_INT48DIV,
	F_INT84PL, F_INT84MI, F_INT84MUL, F_INT84DIV,
	F_FLOAT8MI, F_FLOAT8MUL, F_FLOAT8DIV,
	F_INT4EQ, F_INT4NE, F_INT4LT, F_INT4LE, F_INT4GT, F_INT4GE,
	F_INT8EQ, F_INT8NE, F_INT8LT, F_INT8LE, F_INT8GT, F_INT8GE,
	F_INT48EQ, F_INT48NE, F_INT48LT, F_INT48LE, F_INT48GT, F_INT48GE,
	F_INT84EQ, F_INT84NE, F_INT84LT, F_INT84LE, F_INT84GT, F_INT84GE,
	F_FLOAT8EQ, F_FLOAT8NE, F_FLOAT8LT, F_FLOAT8LE, F_FLOAT8GT, F_FLOAT8GE,
};

/*
 * Is fn one of the functions above?  InvalidOid (no such function: an
 * aggregate without a final function) is accepted when absent_ok.
 */
static bool
ft_function_quiet(Oid fn, bool absent_ok)
{
	if (!OidIsValid(fn))
		return absent_ok;
	for (int i = 0; i < (int) lengthof(ft_quiet_functions); i++)
	{
		if (ft_quiet_functions[i] == fn)
			return true;
	}
	return false;
}

/*
 * Does deforming or copying a tuple in a slot of this kind read nothing?
 * Only the core kinds are known not to (a table AM's own might fetch
 * columns lazily).
 */
static bool
ft_slot_kind_quiet(const TupleTableSlotOps *kind)
{
	return kind == &TTSOpsVirtual || kind == &TTSOpsHeapTuple ||
		kind == &TTSOpsMinimalTuple || kind == &TTSOpsBufferHeapTuple;
}

/* Has this row type a variable-length column (one that may be expanded)? */
static bool
ft_desc_has_varlena(TupleDesc desc)
{
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (!att->attisdropped && att->attlen == -1)
			return true;
	}
	return false;
}

/* Does this deforming step read nothing?  A fixed core slot kind only. */
static bool
ft_fetch_quiet(const ExprEvalStep *op)
{
	if (!op->d.fetch.fixed)
		return false;
	return ft_slot_kind_quiet(op->d.fetch.kind);
}

/*
 * Does evaluating this compiled expression (if any) read no buffer and
 * write no WAL, whatever its input?  Only the steps listed are accepted.
 */
static bool
ft_expr_quiet(ExprState *state)
{
	if (state == NULL)
		return true;
	for (int i = 0; i < state->steps_len; i++)
	{
		ExprEvalStep *op = &state->steps[i];

		switch (ExecEvalStepOp(state, op))
		{
				FT_CASE_EEOP_DONE
			case EEOP_INNER_VAR:
			case EEOP_OUTER_VAR:
			case EEOP_SCAN_VAR:
			case EEOP_ASSIGN_INNER_VAR:
			case EEOP_ASSIGN_OUTER_VAR:
			case EEOP_ASSIGN_SCAN_VAR:
			case EEOP_ASSIGN_TMP:
			case EEOP_ASSIGN_TMP_MAKE_RO:
			case EEOP_CONST:
			case EEOP_BOOL_AND_STEP_FIRST:
			case EEOP_BOOL_AND_STEP:
			case EEOP_BOOL_AND_STEP_LAST:
			case EEOP_BOOL_OR_STEP_FIRST:
			case EEOP_BOOL_OR_STEP:
			case EEOP_BOOL_OR_STEP_LAST:
			case EEOP_BOOL_NOT_STEP:
			case EEOP_QUAL:
			case EEOP_JUMP:
			case EEOP_JUMP_IF_NULL:
			case EEOP_JUMP_IF_NOT_NULL:
			case EEOP_JUMP_IF_NOT_TRUE:
			case EEOP_NULLTEST_ISNULL:
			case EEOP_NULLTEST_ISNOTNULL:
			case EEOP_AGGREF:
			case EEOP_AGG_STRICT_INPUT_CHECK_ARGS:
				FT_CASE_EEOP_AGG_STRICT_INPUT_CHECK_N
			case EEOP_AGG_STRICT_INPUT_CHECK_NULLS:
			case EEOP_AGG_PLAIN_PERGROUP_NULLCHECK:

				/*
				 * the transition calls: the transition function is
				 * checked with the aggregate (ft_agg_quiet)
				 */
			case EEOP_AGG_PLAIN_TRANS_INIT_STRICT_BYVAL:
			case EEOP_AGG_PLAIN_TRANS_STRICT_BYVAL:
			case EEOP_AGG_PLAIN_TRANS_BYVAL:
			case EEOP_AGG_PLAIN_TRANS_INIT_STRICT_BYREF:
			case EEOP_AGG_PLAIN_TRANS_STRICT_BYREF:
			case EEOP_AGG_PLAIN_TRANS_BYREF:
				break;
			case EEOP_INNER_FETCHSOME:
			case EEOP_OUTER_FETCHSOME:
			case EEOP_SCAN_FETCHSOME:
				if (!ft_fetch_quiet(op))
					return false;
				break;
			case EEOP_FUNCEXPR:
			case EEOP_FUNCEXPR_STRICT:
				FT_CASE_EEOP_FUNCEXPR_STRICT_N
					if (!ft_function_quiet(op->d.func.finfo->fn_oid, false))
					return false;
				break;
			default:
				return false;
		}
	}
	return true;
}

/* Is this node an Aggregate of the shape (b) of the file's header? */
static bool
ft_agg_quiet(PlanState *ps)
{
	AggState   *as;
	Agg		   *agg;

	if (!IsA(ps, AggState))
		return false;
	as = (AggState *) ps;
	agg = (Agg *) ps->plan;
	if (as->aggstrategy != AGG_PLAIN || agg->groupingSets != NIL ||
		agg->chain != NIL || as->sort_in != NULL || as->sort_out != NULL)
		return false;
	if (ps->plan->initPlan != NIL || ps->initPlan != NIL ||
		ps->subPlan != NIL)
		return false;
	if (!ft_expr_quiet(ps->qual) ||
		(ps->ps_ProjInfo != NULL && !ft_expr_quiet(&ps->ps_ProjInfo->pi_state)))
		return false;
	for (int p = 0; p < as->numphases; p++)
	{
		if (!ft_expr_quiet(as->phases[p].evaltrans))
			return false;
	}
	for (int i = 0; i < as->numtrans; i++)
	{
		AggStatePerTrans pertrans = &as->pertrans[i];

		if (pertrans->numSortCols != 0 || pertrans->numDistinctCols != 0)
			return false;
		if (!ft_function_quiet(pertrans->transfn_oid, false) ||
			!ft_function_quiet(pertrans->serialfn_oid, true) ||
			OidIsValid(pertrans->deserialfn_oid))
			return false;
	}
	for (int i = 0; i < as->numaggs; i++)
	{
		if (!ft_function_quiet(as->peragg[i].finalfn_oid, true))
			return false;
	}
	return true;
}

/* Can this subtree's shutdown move the counters (condition (a))? */
static bool
ft_shutdown_may_count(PlanState *ps, void *context)
{
	if (ps == NULL)
		return false;
	if (IsA(ps, GatherState) || IsA(ps, GatherMergeState) ||
		IsA(ps, ForeignScanState) || IsA(ps, CustomScanState))
		return true;
	return planstate_tree_walker(ps, ft_shutdown_may_count, context);
}

/* May child's buffer and WAL totals be taken from parent's (the header)? */
bool
ft_usage_derivable(PlanState *parent, PlanState *child)
{
	const TupleTableSlotOps *ops;
	bool		fixed;

	if (parent == NULL || child == NULL || outerPlanState(parent) != child)
		return false;
	if (parent->instrument == NULL || child->instrument == NULL)
		return false;
	if (!bms_is_empty(child->plan->allParam))
		return false;
	if (ft_shutdown_may_count(child, NULL))
		return false;

	/*
	 * The Aggregate copies its first input row (agg_retrieve_direct's
	 * grp_firstTuple) outside the child's call, even for count(*): a
	 * table AM's own slot might fetch columns to copy it, reading buffers
	 * in the parent's time only.  So the child must return a core kind.
	 */
	ops = ExecGetResultSlotOps(child, &fixed);
	if (!fixed || !ft_slot_kind_quiet(ops))
		return false;

	/*
	 * A virtual slot may hold an expanded object (a PL/pgSQL function's
	 * row variable), which that copy flattens: an expanded record still
	 * pointing into TOAST reads it then.  Tuples in the other kinds are
	 * flat, their TOAST pointers copied as they are.
	 */
	if (ops == &TTSOpsVirtual && ft_desc_has_varlena(ExecGetResultType(child)))
		return false;
	return ft_agg_quiet(parent);
}
