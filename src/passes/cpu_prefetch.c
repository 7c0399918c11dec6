/*
 * cpu_prefetch.c - the openmp target's software pipeline: the rows the
 * next iteration of a tile_pipelined loop will copy in, asked into cache
 * at the top of this one (pass `prefetch`).
 *
 * Input: a checked program for the openmp target.  Output: at the start
 * of the body of every PIPELINED loop, one PREFETCH per copy of the body
 * (in their order) that loads a whole buffer from a tensor region which
 * moves with the loop var: the same copy's region with the var advanced
 * by the loop's step.  The memory system then fetches those rows while
 * this iteration computes, which is what the stages do on a GPU.  Serial
 * loops get none: on the row kernels it measured no gain.
 *
 * A copy is prefetched when its origins name only what the body does not
 * change (no element loads, no local the body declares or that is ever
 * reassigned), so the advanced origin is the next iteration's; when its
 * rows are contiguous (the tile's last dim runs along the tensor's last
 * dim; i4 tensors, addressed by element pairs, are left out); and when
 * every advanced origin is proven non-negative (analysis/range.c), so a
 * row's start address needs no lower test; and when the region's bytes
 * fit in the target's L1d.  A larger region's prefetches, issued at once,
 * fill the core's queue of outstanding misses and stall it until memory
 * has answered most of them: the copy's wait, moved and not hidden (the
 * fp32 GEMM's 128 KiB slices measured 3-13 % faster without them on two
 * Intel machines, docs/perf.md 2026-12-05).  Past the tensor's end the
 * printer asks for nothing (it clips to the tensor as the copy does).
 * Nothing is read, so a prefetch can never change a result.  Runs before
 * `bounds`, which marks the new regions, and before `fuse`, whose runs
 * count the body's statements with the prefetches in place.
 */
#include "analysis/range.h"
#include "analysis/walk.h"
#include "passes/passes.h"

typedef struct Prefetcher {
	TcArena *a;
	const TcRanges *rg;
	long long most; /* bytes a prefetched region may take: the L1d */
} Prefetcher;

static TcVisit
find_binding(void *ctx, const TcStmt *s)
{
	const TcVar **var = ctx;
	if ((s->kind == TC_ST_DECL && s->u.decl.var == *var) ||
	    (s->kind == TC_ST_FOR && s->u.loop.var == *var)) {
		*var = NULL; /* found */
		return TC_VISIT_STOP;
	}
	return TC_VISIT_INTO;
}

/* Whether var is declared or bound by a loop anywhere in s. */
static bool
binds(const TcStmt *s, const TcVar *var)
{
	const TcVar *v = var;
	TcVisitor vis = { .stmt = find_binding, .ctx = &v };
	tc_stmt_visit(s, &vis);
	return v == NULL;
}

typedef struct Advance {
	const TcStmt *loop;
	bool ok;
} Advance;

static TcVisit
check_advance(void *ctx, const TcExpr *e)
{
	Advance *ad = ctx;
	const TcStmt *body = ad->loop->u.loop.body;
	if (e->kind == TC_EX_LOAD ||
	    (e->kind == TC_EX_VAR && e->u.var->kind == TC_VAR_LOCAL &&
	     (e->u.var->mutated || binds(body, e->u.var))) ||
	    (e->kind == TC_EX_VAR && e->u.var->kind == TC_VAR_LOOP &&
	     binds(body, e->u.var))) {
		ad->ok = false;
		return TC_VISIT_STOP;
	}
	return TC_VISIT_INTO;
}

/* Whether e's value in the next iteration of loop follows from e with the
 * loop's var advanced: it reads only names the body does not change. */
static bool
advanceable(const TcExpr *e, const TcStmt *loop)
{
	Advance ad = { loop, true };
	TcVisitor vis = { .expr = check_advance, .ctx = &ad };
	tc_expr_visit(e, &vis);
	return ad.ok;
}

/* A copy of e with var replaced by a copy of next. */
static TcExpr *
substitute(TcArena *a, const TcExpr *e, const TcVar *var, const TcExpr *next)
{
	if (e->kind == TC_EX_VAR && e->u.var == var)
		return tc_expr_clone(a, next);
	TcExpr *c = tc_alloc(a, sizeof *c);
	*c = *e;
	switch (e->kind) {
	case TC_EX_BINARY:
		c->u.bin.lhs = substitute(a, e->u.bin.lhs, var, next);
		c->u.bin.rhs = substitute(a, e->u.bin.rhs, var, next);
		break;
	case TC_EX_UNARY:
		c->u.un.arg = substitute(a, e->u.un.arg, var, next);
		break;
	case TC_EX_SELECT:
		c->u.sel.cond = substitute(a, e->u.sel.cond, var, next);
		c->u.sel.then = substitute(a, e->u.sel.then, var, next);
		c->u.sel.els = substitute(a, e->u.sel.els, var, next);
		break;
	case TC_EX_CALL:
		c->u.call.args = tc_alloc(a, sizeof(TcExpr *) *
						 (size_t)(e->u.call.nargs + 1));
		for (int i = 0; i < e->u.call.nargs; i++)
			c->u.call.args[i] = substitute(a, e->u.call.args[i],
						       var, next);
		break;
	case TC_EX_CAST:
		c->u.cast.arg = substitute(a, e->u.cast.arg, var, next);
		break;
	default:
		/* No var inside: advanceable() refused loads. */
		break;
	}
	return c;
}

/* The prefetch of what copy s reads in loop's next iteration, or NULL
 * when s is not one to prefetch (the file-top comment). */
static TcStmt *
prefetch_of(const Prefetcher *P, const TcStmt *loop, const TcStmt *s,
	    const TcExpr *next)
{
	if (s->kind != TC_ST_COPY || !s->u.copy.dst.whole ||
	    s->u.copy.src.var->kind != TC_VAR_TENSOR ||
	    tc_region_ragged(&s->u.copy.src))
		return NULL;
	const TcRegion *src = &s->u.copy.src;
	const TcVar *var = loop->u.loop.var, *t = src->var;
	if (t->dtype == TC_DT_I4 || src->dims[src->ndims - 1] != t->rank - 1)
		return NULL;
	const TcVar *buf = s->u.copy.dst.var;
	long long bytes = tc_dtype_bits(t->dtype) / 8;
	for (int d = 0; d < buf->rank; d++)
		bytes *= tc_var_extent(buf, d);
	if (bytes > P->most)
		return NULL;
	bool moves = false;
	for (int d = 0; d < t->rank; d++) {
		if (!advanceable(src->origin[d], loop))
			return NULL;
		moves |= tc_expr_mentions(src->origin[d], var);
	}
	if (!moves)
		return NULL;
	TcStmt *pf = tc_stmt_new(P->a, TC_ST_PREFETCH, s->loc);
	pf->u.copy.dst = s->u.copy.dst;
	pf->u.copy.src = *src;
	for (int d = 0; d < t->rank; d++)
		pf->u.copy.src.origin[d] =
			substitute(P->a, src->origin[d], var, next);
	unsigned all = (1u << t->rank) - 1;
	if (tc_range_origin_nonneg(P->rg, &pf->u.copy.src) != all)
		return NULL;
	return pf;
}

static void
prefetch_loop(void *ctx, TcStmt *loop, int par_depth)
{
	const Prefetcher *P = ctx;
	(void)par_depth;
	if (loop->kind != TC_ST_FOR || loop->u.loop.kind != TC_LOOP_PIPELINED)
		return;
	TcVar *var = loop->u.loop.var;
	TcExpr *step = loop->u.loop.step ? loop->u.loop.step
					 : tc_expr_int(P->a, 1, loop->loc);
	TcExpr *next = tc_expr_binary(P->a, TC_OP_ADD,
				      tc_expr_var(P->a, var, loop->loc), step,
				      loop->loc);
	TcVec *body = &loop->u.loop.body->u.block.body;
	TcVec pfs = { 0 };
	for (int i = 0; i < body->len; i++) {
		TcStmt *pf = prefetch_of(P, loop, body->items[i], next);
		if (pf)
			tc_vec_push(P->a, &pfs, pf);
	}
	if (pfs.len == 0)
		return;
	for (int i = 0; i < body->len; i++)
		tc_vec_push(P->a, &pfs, body->items[i]);
	*body = pfs;
}

bool
tc_cpu_prefetch(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d)
{
	(void)d;
	for (int i = 0; i < p->kernels.len; i++) {
		TcKernel *k = p->kernels.items[i];
		TcRanges rg;
		tc_ranges_init(&rg, a, k);
		Prefetcher P = { .a = a, .rg = &rg,
				 .most = opt->target.l1d_bytes };
		tc_walk_stmts(k->body, 0, prefetch_loop, &P);
	}
	return true;
}
