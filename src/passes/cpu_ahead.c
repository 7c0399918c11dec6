/*
 * cpu_ahead.c - the next block's rows, asked into cache while a fused run
 * computes (pass `ahead`, openmp, after `vector`).
 *
 * Input: the runs of the fuse pass, with the edge pass's partial dims.
 * Output: on at most one run of each kernel, one LOAD marked next_block
 * and TcFusion.next, the origin of that copy in the next block, and
 * next_elems, the elements each prefetch asks for (1 KiB).  The OpenMP
 * printer (emitters/openmp_fuse.c) prefetches that copy's rows for the
 * next block a strip at a time in the run's main loop.
 *
 * The blocks of a one-dimensional grid run in order on each thread
 * (schedule(static) gives each a range), so the block after this one is
 * usually the next this thread runs.  A run whose element work calls
 * heavy math (exp, tanh, log ...) leaves memory idle while it computes:
 * the first such run of the kernel, in the order the block runs them,
 * asks for the rows the next block's copy of the same tensor will read,
 * so they arrive while this block computes (softmax: the next row
 * streams in during this row's exps; in the max pass, 31 -> 28 GB/s
 * without).  A kernel without such a run prefetches in its first run
 * that reads rows (RMSNorm: 29 -> 34 GB/s; the hardware prefetcher alone
 * keeps fewer lines in flight).
 *
 * The run must have rows (rank 2), be live, and name bounds: an origin
 * other than 0 or a name, or a partial extent.  Its copy is the first
 * two-dimensional LOAD of a two-dimensional tensor whose origin can be
 * taken at the next block: the grid index plus one, the loops around at
 * their first iteration, locals replaced by their initializers (never
 * reassigned), nothing else that varies; whose row origin moves with the
 * block; and whose next origins are proven non-negative
 * (analysis/range.c).  Where the loops around the run move the copy along
 * its rows, the next block's column origin keeps them at this iteration
 * when its rows fit in a quarter of the L2 (along_loops), so that over
 * the loops all of them are asked for.  A prefetch is a hint: it never
 * faults or changes a result, and the printer clips it to the tensor.
 */
#include "analysis/range.h"
#include "analysis/walk.h"
#include "passes/passes.h"

typedef struct Ahead {
	TcArena *a;
	const TcKernel *k;
	const TcRanges *rg;
	long long l2;  /* the target's L2 bytes a core */
	bool heavy;   /* the kernel has a run with heavy math */
	bool done;    /* a run prefetches */
} Ahead;

/* Whether e calls a function dearer than a compare (exp, tanh, log ...). */
static TcVisit
find_heavy(void *ctx, const TcExpr *e)
{
	bool *found = ctx;
	if (e->kind != TC_EX_CALL)
		return TC_VISIT_INTO;
	switch (e->u.call.fn) {
	case TC_FN_CEILDIV: case TC_FN_MIN: case TC_FN_MAX: case TC_FN_ABS:
	case TC_FN_FMAXF: case TC_FN_FMINF: case TC_FN_FABSF: case TC_FN_FMAF:
	case TC_FN_ROUNDF: case TC_FN_RINTF: case TC_FN_FLOORF:
	case TC_FN_CEILF: case TC_FN_TRUNCF:
	case TC_FN_SAT_I8: case TC_FN_SAT_U8: case TC_FN_SAT_I32:
		return TC_VISIT_INTO;
	default:
		*found = true;
		return TC_VISIT_STOP;
	}
}

/* Whether a run's nests call something dearer than a compare. */
static bool
heavy_run(const TcFusion *F)
{
	bool found = false;
	for (int i = 0; i < F->n && !found; i++)
		if (F->ops[i].kind == TC_FUSE_MAP) {
			TcVisitor vis = { .expr = find_heavy, .ctx = &found };
			tc_stmt_visit(F->ops[i].body, &vis);
		}
	return found;
}

/* e as it will be in the next block's pass here: the grid index plus one
 * (if next), the loops around at their first iteration (or, with keep, at
 * this one's), locals as their initializers; NULL if it reads anything
 * else that varies. */
static TcExpr *
next_block_expr(const Ahead *A, const TcExpr *e, bool next, bool keep,
		int depth)
{
	if (depth > 8)
		return NULL;
	TcExpr *c = tc_expr_clone(A->a, e);
	switch (e->kind) {
	case TC_EX_INT:
		return c;
	case TC_EX_VAR: {
		const TcVar *v = e->u.var;
		switch (v->kind) {
		case TC_VAR_TUNABLE:
		case TC_VAR_SCALAR:
			return c;
		case TC_VAR_BLOCK:
			if (v != A->k->block[0] || !next)
				return c;
			return tc_expr_binary(A->a, TC_OP_ADD, c,
					      tc_expr_int(A->a, 1, e->loc),
					      e->loc);
		case TC_VAR_LOCAL: {
			const TcExpr *init = A->rg->init[v->index];
			return init ? next_block_expr(A, init, next, keep,
						      depth + 1)
				    : NULL;
		}
		case TC_VAR_LOOP: {
			const TcStmt *loop = A->rg->loop[v->index];
			if (!loop)
				return NULL;
			if (keep) /* a loop around the run: in scope */
				return c;
			return next_block_expr(A, loop->u.loop.begin, next,
					       keep, depth + 1);
		}
		default:
			return NULL;
		}
	}
	case TC_EX_BINARY:
		c->u.bin.lhs = next_block_expr(A, e->u.bin.lhs, next, keep,
					       depth);
		c->u.bin.rhs = next_block_expr(A, e->u.bin.rhs, next, keep,
					       depth);
		return c->u.bin.lhs && c->u.bin.rhs ? c : NULL;
	case TC_EX_CALL:
		for (int i = 0; i < e->u.call.nargs; i++)
			if (!(c->u.call.args[i] = next_block_expr(
				      A, e->u.call.args[i], next, keep, depth)))
				return NULL;
		return c;
	case TC_EX_CAST:
		c->u.cast.arg = next_block_expr(A, e->u.cast.arg, next, keep,
						depth);
		return c->u.cast.arg ? c : NULL;
	default:
		return NULL;
	}
}

/* Whether a copy of run F names bounds: an origin other than 0 or a
 * name, or a partial extent. */
static bool
names_bounds(const TcFusion *F)
{
	for (int o = 0; o < F->n; o++) {
		const TcFuseOp *op = &F->ops[o];
		if (op->kind != TC_FUSE_LOAD && op->kind != TC_FUSE_STORE)
			continue;
		if (op->partial_rows || op->partial_cols)
			return true;
		for (int t = 0; t < op->buf->rank; t++) {
			const TcExpr *e = op->reg->origin[op->reg->dims[t]];
			if (e->kind != TC_EX_VAR &&
			    !(e->kind == TC_EX_INT && e->u.ival == 0))
				return true;
		}
	}
	return false;
}

/* The next block's column origin of copy op, whose first-iteration
 * column origin is first: where loops around the run move the copy along
 * its rows (the row origin stays, the column one moves), the next block's
 * rows over all those loops are asked for, each iteration the part the
 * next block will read in the same iteration, when they fit in a quarter
 * of the L2 (so they are still there when it runs, beside this block's):
 * `N <= cap ? col : first`, N the tensor's row length.  Asking only for
 * the first iteration's left a layernorm that makes three passes over
 * its rows in 1,024-column chunks with one chunk in four prefetched
 * (docs/perf.md, 2026-12-07). */
static TcExpr *
along_loops(const Ahead *A, const TcFuseOp *op, const TcExpr *nrow,
	    TcExpr *first, int bits)
{
	TcExpr *wrow = next_block_expr(A, op->reg->origin[0], true, true, 0);
	TcExpr *wcol = next_block_expr(A, op->reg->origin[1], true, true, 0);
	long long rows;
	if (!wrow || !wcol || !tc_expr_equal(wrow, nrow) ||
	    tc_expr_equal(wcol, first) || !tc_range_nonneg(A->rg, wcol) ||
	    !tc_expr_const(op->buf->shape[0], &rows) || rows <= 0)
		return first;
	long long cap = A->l2 / 4 * 8 / (rows * bits);
	const TcExpr *n = op->reg->var->shape[1];
	long long len;
	if (tc_expr_const(n, &len))
		return len <= cap ? wcol : first;
	TcExpr *sel = tc_expr_new(A->a, TC_EX_SELECT, TC_DT_I32, first->loc);
	sel->u.sel.cond = tc_expr_binary(A->a, TC_OP_LE, tc_expr_clone(A->a, n),
					 tc_expr_int(A->a, cap, first->loc),
					 first->loc);
	sel->u.sel.then = wcol;
	sel->u.sel.els = first;
	return sel;
}

/* Plan run F's prefetch of the next block's rows; false if F is not the
 * run for it. */
static bool
plan(const Ahead *A, TcFusion *F)
{
	const TcKernel *k = A->k;
	if (F->dead || F->rank != 2 || !names_bounds(F) ||
	    (A->heavy && !heavy_run(F)))
		return false;
	for (int i = 0; i < F->n; i++) {
		TcFuseOp *op = &F->ops[i];
		if (op->kind != TC_FUSE_LOAD || op->rank != 2 ||
		    op->reg->var->rank != 2)
			continue;
		const TcExpr *row = op->reg->origin[0];
		TcExpr *now = next_block_expr(A, row, false, false, 0);
		TcExpr *nrow = next_block_expr(A, row, true, false, 0);
		TcExpr *ncol = next_block_expr(A, op->reg->origin[1], true,
					       false, 0);
		if (!now || !nrow || !ncol ||
		    !tc_expr_mentions(now, k->block[0]) ||
		    !tc_range_nonneg(A->rg, nrow) ||
		    !tc_range_nonneg(A->rg, ncol))
			continue;
		long long c;
		if (tc_expr_const(ncol, &c))
			ncol = tc_expr_int(A->a, c, ncol->loc);
		const TcVar *ten = op->reg->var;
		int bits = ten->dtype == TC_DT_BOOL ? 8
						    : tc_dtype_bits(ten->dtype);
		ncol = along_loops(A, op, nrow, ncol, bits);
		op->next_block = true;
		F->next[0] = nrow;
		F->next[1] = ncol;
		F->next_elems = 1024 * 8 / bits;
		return true;
	}
	return false;
}

static void
plan_at(void *ctx, TcStmt *s, int par_depth)
{
	Ahead *A = ctx;
	(void)par_depth;
	for (int f = 0; f < A->k->fusions.len && !A->done; f++) {
		TcFusion *F = A->k->fusions.items[f];
		if (F->block->u.block.body.items[F->first] == s)
			A->done = plan(A, F);
	}
}

bool
tc_cpu_ahead(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d)
{
	(void)d;
	for (int i = 0; i < p->kernels.len; i++) {
		TcKernel *k = p->kernels.items[i];
		for (int f = 0; f < k->fusions.len; f++) {
			TcFusion *F = k->fusions.items[f];
			F->next[0] = F->next[1] = NULL;
			F->next_elems = 0;
			for (int o = 0; o < F->n; o++)
				F->ops[o].next_block = false;
		}
		if (!k->block[0] || k->grid[1] || k->grid[2])
			continue;
		TcRanges rg;
		tc_ranges_init(&rg, a, k);
		Ahead A = { .a = a, .k = k, .rg = &rg,
			    .l2 = opt->target.l2_bytes };
		for (int f = 0; f < k->fusions.len; f++)
			A.heavy |= heavy_run(k->fusions.items[f]);
		/* The runs in the order the block runs them. */
		tc_walk_stmts(k->body, 0, plan_at, &A);
	}
	return true;
}
