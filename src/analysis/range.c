/*
 * range.c - signs and invariance of index expressions, from their form.
 *
 * Input: a checked kernel.  Output: answers, never rewrites.  The passes
 * ask whether a region's origin can be negative (a copy then tests the
 * lower bound of every element) and whether a loop bound stays put while
 * the loop runs; the answers are recorded in the IR where printers need
 * them (the `bounds` pass) so that no printer decides them again.
 *
 * Everything here is sound for every value of the kernel's parameters
 * that a launch accepts: tensor extents are >= 0 (the launch checks),
 * tunables are bound, block indices count from 0.  A loop's step is
 * positive where it is a constant (check.c), so only a step that is not
 * is asked to be non-negative.
 */
#include "analysis/range.h"
#include "analysis/walk.h"

/* Record, for a loop or declaration, what tc_range_* reads. */
static void
note_binding(void *ctx, TcStmt *s, int par_depth)
{
	TcRanges *r = ctx;
	(void)par_depth;
	if (s->kind == TC_ST_FOR)
		r->loop[s->u.loop.var->index] = s;
	if (s->kind == TC_ST_DECL && s->u.decl.var->kind == TC_VAR_LOCAL &&
	    !s->u.decl.var->mutated)
		r->init[s->u.decl.var->index] = s->u.decl.init;
}

void
tc_ranges_init(TcRanges *r, TcArena *a, const TcKernel *k)
{
	size_t nv = (size_t)k->vars.len + 1;
	r->k = k;
	r->loop = tc_alloc(a, nv * sizeof *r->loop);
	r->init = tc_alloc(a, nv * sizeof *r->init);
	r->extent = tc_alloc(a, nv * sizeof *r->extent);
	for (int i = 0; i < k->params.len; i++) {
		const TcVar *t = k->params.items[i];
		for (int d = 0; t->kind == TC_VAR_TENSOR && d < t->rank; d++)
			if (t->shape[d]->kind == TC_EX_VAR &&
			    t->shape[d]->u.var->kind == TC_VAR_SCALAR)
				r->extent[t->shape[d]->u.var->index] = true;
	}
	tc_walk_stmts(k->body, 0, note_binding, r);
}

bool
tc_range_invariant(const TcRanges *r, const TcExpr *e)
{
	switch (e->kind) {
	case TC_EX_INT:
	case TC_EX_FLOAT:
	case TC_EX_SMS:
		return true;
	case TC_EX_VAR:
		switch (e->u.var->kind) {
		case TC_VAR_TUNABLE:
		case TC_VAR_SCALAR:
		case TC_VAR_BLOCK:
		case TC_VAR_LOOP:
			return true;
		case TC_VAR_LOCAL:
			return r->init[e->u.var->index] != NULL;
		default:
			return false;
		}
	case TC_EX_UNARY:
		return tc_range_invariant(r, e->u.un.arg);
	case TC_EX_BINARY:
		return tc_range_invariant(r, e->u.bin.lhs) &&
		       tc_range_invariant(r, e->u.bin.rhs);
	case TC_EX_CAST:
		return tc_range_invariant(r, e->u.cast.arg);
	case TC_EX_SELECT:
		return tc_range_invariant(r, e->u.sel.cond) &&
		       tc_range_invariant(r, e->u.sel.then) &&
		       tc_range_invariant(r, e->u.sel.els);
	case TC_EX_CALL:
		for (int i = 0; i < e->u.call.nargs; i++)
			if (!tc_range_invariant(r, e->u.call.args[i]))
				return false;
		return true;
	default:
		return false;
	}
}

/* Whether converting any value >= 0 of dtype `from` to `to` gives a value
 * >= 0 (false for an i8 of a u8: 200 becomes -56). */
static bool
cast_keeps_nonneg(TcDtype to, TcDtype from)
{
	if (tc_dtype_is_unsigned(to))
		return true;    /* no negative value at all */
	if (!tc_dtype_is_int(to))
		return false;
	if (tc_dtype_is_float(from))
		return true;    /* truncation toward zero (in range) */
	/* Every value of `from` fits in `to`: signed into as many bits or
	 * more, unsigned and bool into more. */
	int bt = tc_dtype_bits(to), bf = tc_dtype_bits(from);
	return tc_dtype_is_unsigned(from) ? bf < bt : bf <= bt;
}

/* Whether a - i - k >= 0 for loop index i and constant k (0 or 1): i
 * counts up by a positive step from a non-negative start to below its
 * loop's end, an invariant expression not naming i that a equals, or
 * a - 1 equals when k is 0 (a reversed index, `n - 1 - i`). */
static bool
below_end(const TcRanges *r, const TcExpr *a, const TcExpr *i, long long k)
{
	if (i->kind != TC_EX_VAR || i->u.var->kind != TC_VAR_LOOP)
		return false;
	const TcStmt *l = r->loop[i->u.var->index];
	long long step = 1, c;
	if (!l ||
	    (l->u.loop.step &&
	     !(tc_expr_const(l->u.loop.step, &step) && step > 0)) ||
	    !tc_range_nonneg(r, l->u.loop.begin) ||
	    !tc_range_invariant(r, l->u.loop.end) ||
	    tc_expr_mentions(l->u.loop.end, i->u.var))
		return false;
	const TcExpr *end = l->u.loop.end;
	if (tc_expr_equal(a, end))
		return k <= 1;
	return k == 0 && a->kind == TC_EX_BINARY && a->u.bin.op == TC_OP_SUB &&
	       tc_expr_const(a->u.bin.rhs, &c) && c == 1 &&
	       tc_expr_equal(a->u.bin.lhs, end);
}

bool
tc_range_nonneg(const TcRanges *r, const TcExpr *e)
{
	switch (e->kind) {
	case TC_EX_INT:
		return e->u.ival >= 0;
	case TC_EX_SMS:
		return true;
	case TC_EX_VAR: {
		const TcVar *v = e->u.var;
		switch (v->kind) {
		case TC_VAR_TUNABLE: return v->value >= 0;
		case TC_VAR_BLOCK: return true;
		case TC_VAR_SCALAR: return r->extent[v->index];
		case TC_VAR_LOOP: {
			const TcStmt *l = r->loop[v->index];
			return l && tc_range_nonneg(r, l->u.loop.begin) &&
			       (!l->u.loop.step ||
				tc_range_nonneg(r, l->u.loop.step));
		}
		case TC_VAR_LOCAL:
			return r->init[v->index] &&
			       tc_range_nonneg(r, r->init[v->index]);
		default: return false;
		}
	}
	case TC_EX_BINARY:
		switch (e->u.bin.op) {
		case TC_OP_ADD:
		case TC_OP_MUL:
		case TC_OP_DIV:
		case TC_OP_REM:
		case TC_OP_SHR:
			return tc_range_nonneg(r, e->u.bin.lhs) &&
			       tc_range_nonneg(r, e->u.bin.rhs);
		case TC_OP_SUB: {
			/* end - i, end - 1 - i, end - i - 1 */
			const TcExpr *l = e->u.bin.lhs, *i = e->u.bin.rhs;
			long long k;
			if (tc_expr_const(i, &k) && l->kind == TC_EX_BINARY &&
			    l->u.bin.op == TC_OP_SUB)
				return below_end(r, l->u.bin.lhs, l->u.bin.rhs,
						 k);
			return below_end(r, l, i, 0);
		}
		default:
			return false;
		}
	case TC_EX_CALL:
		return (e->u.call.fn == TC_FN_CEILDIV ||
			e->u.call.fn == TC_FN_MIN ||
			e->u.call.fn == TC_FN_MAX) &&
		       tc_range_nonneg(r, e->u.call.args[0]) &&
		       tc_range_nonneg(r, e->u.call.args[1]);
	case TC_EX_SELECT:
		return tc_range_nonneg(r, e->u.sel.then) &&
		       tc_range_nonneg(r, e->u.sel.els);
	case TC_EX_CAST:
		return cast_keeps_nonneg(e->dtype, e->u.cast.arg->dtype) &&
		       (e->dtype == TC_DT_U8 || e->dtype == TC_DT_BOOL ||
			tc_range_nonneg(r, e->u.cast.arg));
	default:
		return false;
	}
}

unsigned
tc_range_origin_nonneg(const TcRanges *r, const TcRegion *g)
{
	unsigned bits = 0;
	for (int d = 0; g->var && d < g->var->rank; d++)
		if (g->origin[d] && tc_range_nonneg(r, g->origin[d]))
			bits |= 1u << d;
	return bits;
}
