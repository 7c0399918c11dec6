/*
 * aligned.c - which run-time alignment tests an aligned launch makes
 * constant (GPU targets).
 *
 * Input: expanded GPU IR (expand_pipeline and tma_store have lowered
 * every copy).  Output: the tests of whether a copy's tiles are whole
 * 16-byte vectors that hold for every launch whose tensors are aligned
 * are marked launch_aligned -- a PIPE_SELECT (its fast loop's plans), a
 * COPY or ASYNC_COPY lowered VECTOR (copy_g2s), a TMA_STORE -- and
 * kernel->aligned lists the tensors those launches need aligned.
 *
 * An aligned launch is one where each listed tensor's base address is a
 * multiple of 16 bytes and so is its innermost extent in bytes (the
 * pitch of its rows, and of every outer dim, which are multiples of it),
 * and every tensor map of the kernel was built.  The runtime compiles a
 * module whose kernels list tensors twice, lazily: with TILEC_ALIGNED
 * defined to 1 for aligned launches, where the marked tests are
 * constant and the paths for unaligned tensors (element copies, the
 * cp.async fallback loop, the TMA store's register epilogue) are not
 * compiled at all, and as written for the others (docs/runtime.md,
 * "Aligned launches").  Those paths are most of what NVRTC spends on a
 * kernel (docs/perf-gpu.md, "where a cold NVRTC compile goes").
 *
 * A test holds on an aligned launch when the tile's first element and
 * its step between iterations are multiples of 16 bytes.  With the rows
 * aligned, an element's offset is its innermost index modulo the 16
 * bytes' elements, so what is asked of each origin is that its innermost
 * index be a known multiple of that: the known power-of-two factor of an
 * index expression (constants and tunables; sums, differences and
 * products; shifts left) is what is proven, with a scalar parameter
 * that is some tensor's innermost extent known to be a multiple of that
 * tensor's 16 bytes of elements where the tensor is listed too.
 */
#include "passes/passes.h"

#include "analysis/walk.h"

/* Known factors are counted up to this (64 bytes' worth of i8). */
enum { MAX_FACTOR = 64 };

typedef struct Aligned {
	TcArena *a;
	TcKernel *k;
	/* The tensors the proofs so far rely on; those of the statement
	 * being proven (added to k->aligned only if it is). */
	TcVec used, trial;
	/* COPY_PLAN statements by their handle's var index. */
	const TcStmt **plan_of;
} Aligned;

/* Elements of tensor t in 16 bytes; 0 where an element is not whole
 * bytes that divide 16 (i4, which its own helpers copy). */
static long long
vec_elems(const TcVar *t)
{
	int bits = tc_dtype_storage_bits(t->dtype);
	if (bits % 8 || 128 % bits)
		return 0;
	return 128 / bits;
}

static void
use(TcArena *a, TcVec *v, TcVar *t)
{
	for (int i = 0; i < v->len; i++)
		if (v->items[i] == t)
			return;
	tc_vec_push(a, v, t);
}

/* What an aligned launch of t makes scalar parameter p a multiple of:
 * t's 16 bytes of elements where p is t's innermost extent. */
static long long
param_factor(Aligned *A, const TcVar *p)
{
	long long best = 1;
	TcVar *from = NULL;
	for (int i = 0; i < A->k->params.len; i++) {
		TcVar *t = A->k->params.items[i];
		if (t->kind != TC_VAR_TENSOR || t->rank < 2)
			continue;
		const TcExpr *e = t->shape[t->rank - 1];
		if (e->kind == TC_EX_VAR && e->u.var == p && vec_elems(t) > best) {
			best = vec_elems(t);
			from = t;
		}
	}
	if (from)
		use(A->a, &A->trial, from);
	return best;
}

static long long
clamp(long long f)
{
	return f > MAX_FACTOR ? MAX_FACTOR : f;
}

/* The largest power of two, at most MAX_FACTOR, that e's value is known
 * to be a multiple of on an aligned launch (1: nothing known).  Integer
 * wraparound keeps the low bits, so the factors of sums and products
 * hold through it. */
static long long
factor(Aligned *A, const TcExpr *e)
{
	long long c;
	if (tc_expr_const(e, &c)) {
		if (c == 0)
			return MAX_FACTOR;
		long long f = 1;
		while (f < MAX_FACTOR && c % (f * 2) == 0)
			f *= 2;
		return f;
	}
	switch (e->kind) {
	case TC_EX_VAR:
		return e->u.var->kind == TC_VAR_SCALAR ? param_factor(A, e->u.var) : 1;
	case TC_EX_CAST:
		return tc_dtype_is_int(e->dtype) && e->dtype != TC_DT_BOOL
			       ? factor(A, e->u.cast.arg)
			       : 1;
	case TC_EX_SELECT: {
		long long t = factor(A, e->u.sel.then), f = factor(A, e->u.sel.els);
		return t < f ? t : f;
	}
	case TC_EX_BINARY: {
		const TcExpr *l = e->u.bin.lhs, *r = e->u.bin.rhs;
		switch (e->u.bin.op) {
		case TC_OP_ADD:
		case TC_OP_SUB: {
			long long fl = factor(A, l), fr = factor(A, r);
			return fl < fr ? fl : fr;
		}
		case TC_OP_MUL:
			return clamp(factor(A, l) * factor(A, r));
		case TC_OP_SHL:
			if (tc_expr_const(r, &c) && c >= 0 && c < 8)
				return clamp(factor(A, l) << c);
			return factor(A, l);
		default:
			return 1;
		}
	}
	default:
		return 1;
	}
}

/* Whether element offset e of tensor t (its innermost index, or a step
 * in elements) is a whole number of 16-byte vectors on an aligned
 * launch; t is then one the launch needs aligned. */
static bool
whole_vectors(Aligned *A, TcVar *t, const TcExpr *e)
{
	long long v = vec_elems(t);
	if (!v || t->kind != TC_VAR_TENSOR)
		return false;
	use(A->a, &A->trial, t);
	return e && factor(A, e) % v == 0;
}

/* Whether tensor region r's tile runs along t's innermost dim, from a
 * whole vector: what copy_g2s's and TmaStore's tests ask of its origin. */
static bool
region_whole(Aligned *A, const TcRegion *r, const TcExpr *const *origin)
{
	TcVar *t = r->var;
	if (t->kind != TC_VAR_TENSOR || r->ndims < 1 || r->dims[r->ndims - 1] != t->rank - 1)
		return false;
	return whole_vectors(A, t, origin[t->rank - 1]);
}

/* A COPY_PLAN's test: its first tile and its advance whole vectors (a
 * TMA plan also asks for its map, which an aligned launch has built). */
static bool
plan_whole(Aligned *A, const TcVar *handle)
{
	const TcStmt *p = A->plan_of[handle->index];
	if (!p || !p->u.plan.copy)
		return false;
	const TcStmt *c = p->u.plan.copy;
	return region_whole(A, &c->u.copy.src, (const TcExpr *const *)c->u.copy.first) &&
	       whole_vectors(A, c->u.copy.src.var, c->u.copy.advance);
}

/* Keep the trial's tensors when the statement's test was proven. */
static bool
settle(Aligned *A, bool proven)
{
	for (int i = 0; proven && i < A->trial.len; i++)
		use(A->a, &A->used, A->trial.items[i]);
	A->trial.len = 0;
	return proven;
}

static void
find_plans(void *ctx, TcStmt *s, int par_depth)
{
	(void)par_depth;
	Aligned *A = ctx;
	if (s->kind == TC_ST_COPY_PLAN)
		A->plan_of[s->u.plan.var->index] = s;
}

static void
mark(void *ctx, TcStmt *s, int par_depth)
{
	(void)par_depth;
	Aligned *A = ctx;
	switch (s->kind) {
	case TC_ST_PIPE_SELECT: {
		bool all = s->u.select.plans.len > 0;
		for (int i = 0; all && i < s->u.select.plans.len; i++)
			all = plan_whole(A, s->u.select.plans.items[i]);
		s->u.select.launch_aligned = settle(A, all);
		break;
	}
	case TC_ST_COPY:
	case TC_ST_ASYNC_COPY:
		if (s->u.copy.lower == TC_COPY_VECTOR)
			s->u.copy.launch_aligned = settle(
				A, region_whole(A, &s->u.copy.src,
						(const TcExpr *const *)s->u.copy.src.origin));
		else if (s->u.copy.lower == TC_COPY_TMA_STORE)
			s->u.copy.launch_aligned = settle(
				A, region_whole(A, &s->u.copy.dst,
						(const TcExpr *const *)s->u.copy.dst.origin));
		break;
	default:
		break;
	}
}

bool
tc_launch_aligned(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d)
{
	(void)opt;
	(void)d;
	for (int i = 0; i < p->kernels.len; i++) {
		TcKernel *k = p->kernels.items[i];
		Aligned A = { .a = a, .k = k };
			A.plan_of = tc_alloc(a, sizeof *A.plan_of * (size_t)(k->vars.len + 1));
		tc_walk_stmts(k->body, 0, find_plans, &A);
		tc_walk_stmts(k->body, 0, mark, &A);
		/* In parameter order, as the launch document lists them. */
		for (int j = 0; j < k->params.len; j++)
			for (int u = 0; u < A.used.len; u++)
				if (A.used.items[u] == k->params.items[j])
					tc_vec_push(a, &k->aligned, k->params.items[j]);
	}
	return true;
}
