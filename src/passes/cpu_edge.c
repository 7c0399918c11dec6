/*
 * cpu_edge.c - the main version of each fused run's element loop (pass
 * `edge`, openmp, after `fuse`).
 *
 * Input: the runs the fuse pass planned (kernel->fusions).  Output, on
 * each MAP op of a run: op->main, the nest's body as the run's main
 * element loop runs it, or NULL where that is the body itself.
 *
 * The OpenMP printer runs a run's elements in two loops: the main loop
 * over the columns (and rows) that lie inside the tensors its copies
 * read element by element, col0 + j < N and row0 + i < M, and, for a
 * partial tile, an edge loop over the rest, where those copies read zero.
 * Tile programs test exactly that to mask a partial tile (softmax's
 * `if (c * BLOCK_N + j >= N) x[i][j] = -INFINITY`, layernorm's
 * `n0 + j < N ? ... : 0`); in the main loop such a test is known, so its
 * body is the nest's with the test decided: an if and its branch go, a
 * select keeps its one arm, `x = x` is dropped.  (Beyond the saved
 * compare, a select with a constant arm makes gcc run all the arithmetic
 * after it under masks: softmax's exp loop ran 25 % slower with the test
 * in it.)  The edge loop runs the body as written.
 *
 * The facts are comparisons `A < B` as written in a copy's region: A the
 * origin plus the nest's index (either order), B the tensor's extent, for
 * each copy the loop reads elements of (a LOAD kept in registers, or one
 * over the run's whole index space).
 *
 * The pass also says where the main loop ends.  A copy's rows (columns)
 * are partial when the tensor may end inside the tile along them: unless
 * the origin and the tensor's extent are constants that put the whole
 * tile inside, and, for the first dim of the tile, every tensor dim the
 * tile does not cover holds its origin for every block (constants, or a
 * block index over a grid of that extent).  In row i the columns inside
 * the tensor of a copy the loop reads are its valid columns, or none when
 * its row i is outside (`i < rows ? cols : 0`); the main loop ends at the
 * least of them over those copies (TcFuseOp.ends_main: one copy for each
 * distinct extent, none where no copy is partial, the loop then running
 * the whole row).  Extents are the same when they are the same
 * expressions (the tensor's extent, the origin, the tile's extent and
 * the tests of the dims the tile does not cover).  Plain columns are
 * dropped where the same columns tested on the row also bound the loop,
 * which is no looser.  With one such extent, the copies whose valid
 * columns are it have none inside past the main loop
 * (TcFuseOp.zero_past).
 */
#include "passes/passes.h"

#include "analysis/decide.h"

/* One comparison the main loop knows to hold: lhs < rhs. */
typedef struct Fact {
	TcExpr *lhs;       /* origin + index */
	const TcExpr *rhs; /* the tensor's extent there */
} Fact;

#define MAX_FACTS 32

typedef struct Versioner {
	TcArena *a;
	Fact facts[MAX_FACTS];
	int n; /* facts */
} Versioner;

/* Whether the run's element loop reads op's elements (the LOADs the edge
 * loop reads as zero past the tensor). */
static bool
in_loop(const TcFusion *F, const TcFuseOp *op)
{
	return op->kind == TC_FUSE_LOAD && (op->elided || op->rank == F->rank);
}

/* The facts of the main loop for nest map of run F. */
static void
main_facts(Versioner *V, const TcFusion *F, const TcFuseOp *map)
{
	V->n = 0;
	for (int k = 0; k < F->n; k++) {
		const TcFuseOp *op = &F->ops[k];
		if (!in_loop(F, op))
			continue;
		int R = op->buf->rank;
		for (int t = 0; t < R; t++) {
			/* t: the tile dim; the nest's var for it. */
			const TcVar *var = map->var[2 - R + t];
			if (!var || (R == 1 && map->rank == 2 && t != 0) ||
			    V->n + 2 > MAX_FACTS)
				continue;
			int vd = op->reg->dims[t];
			TcExpr *o = op->reg->origin[vd];
			TcExpr *v = tc_expr_var(V->a, (TcVar *)var, o->loc);
			const TcExpr *ext = op->reg->var->shape[vd];
			if (o->kind == TC_EX_INT && o->u.ival == 0) {
				V->facts[V->n++] = (Fact){ v, ext };
				continue;
			}
			V->facts[V->n++] = (Fact){
				tc_expr_binary(V->a, TC_OP_ADD, o, v, o->loc), ext
			};
			V->facts[V->n++] = (Fact){
				tc_expr_binary(V->a, TC_OP_ADD, v, o, o->loc), ext
			};
		}
	}
}

/* Whether a < b is a fact. */
static bool
is_fact(const Versioner *V, const TcExpr *a, const TcExpr *b)
{
	for (int i = 0; i < V->n; i++)
		if (tc_expr_equal(V->facts[i].lhs, a) &&
		    tc_expr_equal(V->facts[i].rhs, b))
			return true;
	return false;
}

/* The truth of comparison e in the main loop (decide.h): those of the
 * facts, either way round. */
static int
decide_fact(void *ctx, const TcExpr *e)
{
	const Versioner *V = ctx;
	const TcExpr *l = e->u.bin.lhs, *r = e->u.bin.rhs;
	switch (e->u.bin.op) {
	case TC_OP_LT: return is_fact(V, l, r) ? 1 : -1;
	case TC_OP_GT: return is_fact(V, r, l) ? 1 : -1;
	case TC_OP_GE: return is_fact(V, l, r) ? 0 : -1;
	case TC_OP_LE: return is_fact(V, r, l) ? 0 : -1;
	default: return -1;
	}
}

/* --- Where the main loop ends ------------------------------------------- */

/* The tensor dim that tile dim t of copy op runs along. */
static int
tensor_dim(const TcFuseOp *op, int t)
{
	return op->reg->dims[t];
}

/* Whether a tensor dim of op's region is one the tile does not cover
 * whose origin is not proven inside the tensor for every block: the copy
 * then tests it (and moves nothing where it fails). */
static bool
tested_dim(const TcKernel *k, const TcFuseOp *op, int vd)
{
	for (int t = 0; t < op->buf->rank; t++)
		if (tensor_dim(op, t) == vd)
			return false;
	return !tc_index_in_extent(k, op->reg->origin[vd],
				   op->reg->var->shape[vd]);
}

/* Whether copy op tests a dim its tile does not cover. */
static bool
has_tests(const TcKernel *k, const TcFuseOp *op)
{
	for (int d = 0; d < op->reg->var->rank; d++)
		if (tested_dim(k, op, d))
			return true;
	return false;
}

/* Whether the tests of the dims copies a and b do not cover are the same:
 * the same origins against the same extents, in order, with the same
 * lower tests. */
static bool
same_tests(const TcKernel *k, const TcFuseOp *a, const TcFuseOp *b)
{
	int da = 0, db = 0;
	int ra = a->reg->var->rank, rb = b->reg->var->rank;
	for (;;) {
		while (da < ra && !tested_dim(k, a, da))
			da++;
		while (db < rb && !tested_dim(k, b, db))
			db++;
		if (da == ra || db == rb)
			return da == ra && db == rb;
		const TcRegion *x = a->reg, *y = b->reg;
		bool nx = x->bounded && (x->nonneg >> da & 1);
		bool ny = y->bounded && (y->nonneg >> db & 1);
		if (nx != ny || !tc_expr_equal(x->origin[da], y->origin[db]) ||
		    !tc_expr_equal(x->var->shape[da], y->var->shape[db]))
			return false;
		da++;
		db++;
	}
}

/* Whether the tensor may end inside tile dim t of copy op (see the top
 * of this file). */
static bool
partial_dim(const TcKernel *k, const TcFuseOp *op, int t)
{
	int vd = tensor_dim(op, t);
	long long o, n, e = tc_var_extent(op->buf, t);
	bool inside = tc_expr_const(op->reg->origin[vd], &o) &&
		      tc_expr_const(op->reg->var->shape[vd], &n) && o >= 0 &&
		      o + e <= n;
	return !inside || (t == 0 && has_tests(k, op));
}

static bool
is_zero(const TcExpr *e)
{
	return e->kind == TC_EX_INT && e->u.ival == 0;
}

/* Whether the extents inside the tensor of tile dim ta of copy a and tb
 * of b are the same: one expression of the tensor's extent, the origin
 * and the tile's extent, and for the first dim the same tests. */
static bool
same_extent(const TcKernel *k, const TcFuseOp *a, int ta, const TcFuseOp *b,
	    int tb)
{
	int va = tensor_dim(a, ta), vb = tensor_dim(b, tb);
	const TcExpr *oa = a->reg->origin[va], *ob = b->reg->origin[vb];
	if (!tc_expr_equal(a->reg->var->shape[va], b->reg->var->shape[vb]) ||
	    !(tc_expr_equal(oa, ob) || (is_zero(oa) && is_zero(ob))) ||
	    !tc_expr_equal(a->buf->shape[ta], b->buf->shape[tb]))
		return false;
	/* The tests count with the first dim only. */
	if (ta == 0 && tb == 0)
		return same_tests(k, a, b);
	if (ta == 0)
		return !has_tests(k, a);
	if (tb == 0)
		return !has_tests(k, b);
	return true;
}

/* Whether copy op's rows of the tile may pass the tensor's (a rank-2
 * copy's first dim). */
static bool
rows_tested(const TcFuseOp *op)
{
	return op->buf->rank == 2 && op->partial_rows;
}

/* Whether the valid columns of a row (see the top of this file) of copies
 * a and b are the same: the same rows test, the same columns. */
static bool
same_valid(const TcKernel *k, const TcFuseOp *a, const TcFuseOp *b)
{
	int la = a->buf->rank - 1, lb = b->buf->rank - 1;
	if (rows_tested(a) != rows_tested(b) ||
	    (rows_tested(a) && !same_extent(k, a, 0, b, 0)) ||
	    a->partial_cols != b->partial_cols)
		return false;
	if (a->partial_cols)
		return same_extent(k, a, la, b, lb);
	return tc_expr_equal(a->buf->shape[la], b->buf->shape[lb]);
}

/* Whether the main loop's columns are all the valid ones of copy op of
 * run F, no more: it runs the whole row and so does op, or it ends at
 * op's columns (one copy bounds it: one without a rows test, or one whose
 * valid columns, rows test included, are op's). */
bool
tc_cpu_edge_covers(const TcKernel *k, const TcFusion *F, const TcFuseOp *op)
{
	const TcFuseOp *end = NULL;
	for (int o = 0; o < F->n; o++) {
		if (!F->ops[o].ends_main)
			continue;
		if (end)
			return false;
		end = &F->ops[o];
	}
	if (!end)
		return true;
	if (rows_tested(end))
		return same_valid(k, op, end);
	int l = op->buf->rank - 1;
	return op->partial_cols &&
	       same_extent(k, op, l, end, end->buf->rank - 1);
}

/* Mark the partial dims of run F's copies and the ops whose valid
 * columns end its main loop. */
static void
main_end(const TcKernel *k, TcFusion *F)
{
	int valid[64], n = 0;
	F->edged = true;
	for (int o = 0; o < F->n; o++) {
		TcFuseOp *op = &F->ops[o];
		op->ends_main = op->zero_past = false;
		if (op->kind != TC_FUSE_LOAD && op->kind != TC_FUSE_STORE)
			continue;
		int R = op->buf->rank;
		op->partial_rows = R == 2 && partial_dim(k, op, 0);
		op->partial_cols = partial_dim(k, op, R - 1);
		if (!in_loop(F, op) || !(rows_tested(op) || op->partial_cols))
			continue;
		bool seen = false;
		for (int i = 0; i < n && !seen; i++)
			seen = same_valid(k, &F->ops[valid[i]], op);
		if (!seen && n < 64)
			valid[n++] = o;
	}
	/* Plain columns go where the same columns tested on the row bound
	 * the loop too. */
	for (int i = 0; i < n; i++) {
		const TcFuseOp *op = &F->ops[valid[i]];
		bool looser = false;
		for (int j = 0; j < n && !looser && !rows_tested(op); j++) {
			const TcFuseOp *other = &F->ops[valid[j]];
			looser = j != i && rows_tested(other) &&
				 op->partial_cols && other->partial_cols &&
				 same_extent(k, op, op->buf->rank - 1, other,
					     other->buf->rank - 1);
		}
		if (!looser)
			F->ops[valid[i]].ends_main = true;
	}
	const TcFuseOp *end = NULL;
	int ends = 0;
	for (int o = 0; o < F->n; o++)
		if (F->ops[o].ends_main) {
			end = &F->ops[o];
			ends++;
		}
	for (int o = 0; o < F->n && ends == 1; o++) {
		TcFuseOp *op = &F->ops[o];
		op->zero_past = in_loop(F, op) && same_valid(k, op, end);
	}
}

bool
tc_cpu_edge(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d)
{
	(void)opt;
	(void)d;
	Versioner V = { .a = a };
	for (int i = 0; i < p->kernels.len; i++) {
		const TcKernel *k = p->kernels.items[i];
		for (int f = 0; f < k->fusions.len; f++) {
			TcFusion *F = k->fusions.items[f];
			for (int o = 0; o < F->n; o++) {
				TcFuseOp *op = &F->ops[o];
				if (op->kind != TC_FUSE_MAP)
					continue;
				op->main = NULL;
				main_facts(&V, F, op);
				if (V.n == 0)
					continue;
				TcDecider D = { .a = a, .decide = decide_fact,
						.ctx = &V };
				TcStmt *body = tc_stmt_new(a, TC_ST_BLOCK,
							   op->body->loc);
				tc_decide_block(&D, op->body, body);
				if (D.changed)
					op->main = body;
			}
			main_end(k, F);
		}
	}
	return true;
}
