/*
 * index_width.c - how wide each tensor's element offsets are computed.
 *
 * Input: a specialized, checked program (on GPU targets, after the
 * software pipeline has planned its strided copies).  Output: every
 * TENSOR has `index64` set, and every strided copy from a 64-bit tensor
 * has its per-iteration step (copy.advance) computed in 64-bit
 * arithmetic.  Emitters print offsets in the width given here and decide
 * nothing about it.
 *
 * The rule, as CUTLASS's 64-bit LongIndex for tensor offsets: a tensor's
 * offsets are 64-bit unless its element count is proven to fit an int.
 * A constant extent counts as its value, a dynamic i32 extent as INT_MAX
 * (an i64 one as LLONG_MAX); when the product can pass INT_MAX, an offset
 * such as `BLOCK_K * N` (gemm's step down B) can wrap in int, which on
 * the H200 gave NaN for N = 2^31 / 64, so it is computed in long long.
 * Where the product is proven small (every extent constant, or a single
 * dynamic int dim), int offsets are exact and cheaper.
 */
#include "ir/tilec_int.h"

#include <limits.h>

/* The largest value extent e can take. */
static long long
extent_bound(const TcExpr *e)
{
	long long v;
	if (tc_expr_const(e, &v))
		return v;
	return e->dtype == TC_DT_I64 ? LLONG_MAX : INT_MAX;
}

/* Whether an offset into v can pass INT_MAX. */
static bool
needs_64(const TcVar *v)
{
	long long count = 1;
	for (int i = 0; i < v->rank; i++)
		if (__builtin_mul_overflow(count, extent_bound(v->shape[i]),
					   &count) || count > INT_MAX)
			return true;
	return false;
}

static bool
is_arith(const TcExpr *e)
{
	return e->kind == TC_EX_BINARY &&
	       (e->u.bin.op == TC_OP_ADD || e->u.bin.op == TC_OP_SUB ||
		e->u.bin.op == TC_OP_MUL);
}

/* e computed in 64-bit, with the fewest conversions: a product's left
 * operand widened (C converts the right one), a sum's left operand and
 * any product on its right; a leaf or anything else converted whole (its
 * own value fits an int: an index, an extent). */
static TcExpr *
widen(TcArena *a, TcExpr *e)
{
	if (e->dtype == TC_DT_I64)
		return e;
	if (is_arith(e)) {
		TcExpr *l = widen(a, e->u.bin.lhs), *r = e->u.bin.rhs;
		if (e->u.bin.op != TC_OP_MUL && is_arith(r))
			r = widen(a, r);
		return tc_expr_binary(a, e->u.bin.op, l, r, e->loc);
	}
	TcExpr *c = tc_expr_new(a, TC_EX_CAST, TC_DT_I64, e->loc);
	c->u.cast.arg = e;
	return c;
}

static void
widen_copies(TcArena *a, TcStmt *s)
{
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++)
			widen_copies(a, s->u.block.body.items[i]);
		break;
	case TC_ST_FOR:
		widen_copies(a, s->u.loop.body);
		break;
	case TC_ST_IF:
		widen_copies(a, s->u.cond.then);
		if (s->u.cond.els)
			widen_copies(a, s->u.cond.els);
		break;
	case TC_ST_COPY:
		/* A single extent or constant fits as it is. */
		if (s->u.copy.advance && s->u.copy.src.var->index64 &&
		    is_arith(s->u.copy.advance))
			s->u.copy.advance = widen(a, s->u.copy.advance);
		break;
	default:
		break;
	}
}

bool
tc_index_width(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d)
{
	(void)opt;
	(void)d;
	for (int i = 0; i < p->kernels.len; i++) {
		TcKernel *k = p->kernels.items[i];
		for (int j = 0; j < k->vars.len; j++) {
			TcVar *v = k->vars.items[j];
			if (v->kind == TC_VAR_TENSOR)
				v->index64 = needs_64(v);
		}
		widen_copies(a, k->body);
	}
	return true;
}
