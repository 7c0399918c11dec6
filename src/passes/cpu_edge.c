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
 */
#include "passes/passes.h"

/* One comparison the main loop knows to hold: lhs < rhs. */
typedef struct Fact {
	TcExpr *lhs;       /* origin + index */
	const TcExpr *rhs; /* the tensor's extent there */
} Fact;

#define MAX_FACTS 32

typedef struct Versioner {
	TcArena *a;
	Fact facts[MAX_FACTS];
	int n;        /* facts */
	bool changed; /* the body simplified differs from the nest's */
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

static bool
const_truth(const TcExpr *e, bool *v)
{
	long long c;
	if (e->kind != TC_EX_INT || !tc_expr_const(e, &c))
		return false;
	*v = c != 0;
	return true;
}

/* A literal truth value that replaces e. */
static TcExpr *
truth(Versioner *V, bool v, const TcExpr *e)
{
	V->changed = true;
	return tc_expr_int(V->a, v, e->loc);
}

/* What replaces e: a subexpression of it that it folds to. */
static TcExpr *
folded(Versioner *V, TcExpr *to)
{
	V->changed = true;
	return to;
}

/* A copy of e with the facts' comparisons replaced by their truth, and
 * what that decides folded (selects, !, &&, ||). */
static TcExpr *
simplify_expr(Versioner *V, const TcExpr *e)
{
	if (!e)
		return NULL;
	TcExpr *c = tc_expr_clone(V->a, e);
	bool v = false, w = false;
	switch (e->kind) {
	case TC_EX_BINARY: {
		const TcExpr *l = e->u.bin.lhs, *r = e->u.bin.rhs;
		switch (e->u.bin.op) {
		case TC_OP_LT:
			if (is_fact(V, l, r))
				return truth(V, true, e);
			break;
		case TC_OP_GT:
			if (is_fact(V, r, l))
				return truth(V, true, e);
			break;
		case TC_OP_GE:
			if (is_fact(V, l, r))
				return truth(V, false, e);
			break;
		case TC_OP_LE:
			if (is_fact(V, r, l))
				return truth(V, false, e);
			break;
		default:
			break;
		}
		c->u.bin.lhs = simplify_expr(V, l);
		c->u.bin.rhs = simplify_expr(V, r);
		bool lc = const_truth(c->u.bin.lhs, &v);
		bool rc = const_truth(c->u.bin.rhs, &w);
		bool logic = e->u.bin.op == TC_OP_LAND || e->u.bin.op == TC_OP_LOR;
		if (e->u.bin.op == TC_OP_LAND && ((lc && !v) || (rc && !w)))
			return truth(V, false, e);
		if (e->u.bin.op == TC_OP_LOR && ((lc && v) || (rc && w)))
			return truth(V, true, e);
		if (logic && lc)
			return folded(V, c->u.bin.rhs);
		if (logic && rc)
			return folded(V, c->u.bin.lhs);
		return c;
	}
	case TC_EX_UNARY:
		c->u.un.arg = simplify_expr(V, e->u.un.arg);
		if (e->u.un.op == TC_UOP_NOT && const_truth(c->u.un.arg, &v))
			return truth(V, !v, e);
		return c;
	case TC_EX_SELECT:
		c->u.sel.cond = simplify_expr(V, e->u.sel.cond);
		if (const_truth(c->u.sel.cond, &v))
			return folded(V, simplify_expr(V, v ? e->u.sel.then
							    : e->u.sel.els));
		c->u.sel.then = simplify_expr(V, e->u.sel.then);
		c->u.sel.els = simplify_expr(V, e->u.sel.els);
		return c;
	case TC_EX_CALL:
		for (int i = 0; i < e->u.call.nargs; i++)
			c->u.call.args[i] = simplify_expr(V, e->u.call.args[i]);
		return c;
	case TC_EX_CAST:
		c->u.cast.arg = simplify_expr(V, e->u.cast.arg);
		return c;
	default:
		return c;
	}
}

/* Append to out the statements of block s, simplified: an if whose test
 * is decided becomes the statements of its branch. */
static void
simplify_block(Versioner *V, const TcStmt *s, TcStmt *out)
{
	for (int i = 0; i < s->u.block.body.len; i++) {
		const TcStmt *st = s->u.block.body.items[i];
		TcStmt *c = tc_alloc(V->a, sizeof *c);
		*c = *st;
		bool v;
		switch (st->kind) {
		case TC_ST_DECL:
			c->u.decl.init = simplify_expr(V, st->u.decl.init);
			break;
		case TC_ST_ASSIGN:
			c->u.assign.value = simplify_expr(V, st->u.assign.value);
			/* x = cond ? x : y with cond known: nothing left. */
			if (tc_expr_equal(c->u.assign.value, st->u.assign.dst)) {
				V->changed = true;
				continue;
			}
			break;
		case TC_ST_IF:
			c->u.cond.cond = simplify_expr(V, st->u.cond.cond);
			if (const_truth(c->u.cond.cond, &v)) {
				V->changed = true;
				if (v)
					simplify_block(V, st->u.cond.then, out);
				else if (st->u.cond.els)
					simplify_block(V, st->u.cond.els, out);
				continue;
			}
			c->u.cond.then = tc_stmt_new(V->a, TC_ST_BLOCK, st->loc);
			simplify_block(V, st->u.cond.then, c->u.cond.then);
			if (st->u.cond.els) {
				c->u.cond.els =
					tc_stmt_new(V->a, TC_ST_BLOCK, st->loc);
				simplify_block(V, st->u.cond.els,
					       c->u.cond.els);
			}
			break;
		default:
			break;
		}
		tc_vec_push(V->a, &out->u.block.body, c);
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
			const TcFusion *F = k->fusions.items[f];
			for (int o = 0; o < F->n; o++) {
				TcFuseOp *op = &F->ops[o];
				if (op->kind != TC_FUSE_MAP)
					continue;
				op->main = NULL;
				main_facts(&V, F, op);
				if (V.n == 0)
					continue;
				V.changed = false;
				TcStmt *body = tc_stmt_new(a, TC_ST_BLOCK,
							   op->body->loc);
				simplify_block(&V, op->body, body);
				if (V.changed)
					op->main = body;
			}
		}
	}
	return true;
}
