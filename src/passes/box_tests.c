/*
 * box_tests.c - element loops whose index tests one test decides for the
 * whole tile (the CUDA target, after runs).
 *
 * Tile programs mask the elements of a tile that lie past an edge or on
 * the wrong side of a diagonal with a test on each element's indices:
 * attention's
 *
 *     tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N) {
 *         int q = bm * BLOCK_M + i, kv = n * BLOCK_N + j;
 *         bool keep = kv < S && (!CAUSAL || kv <= q);
 *         s[i][j] = keep ? s[i][j] * qk_scale : -INFINITY;
 *     }
 *
 * runs two compares and a select on every score, though for all but the
 * last key block (and, causal, the blocks on the diagonal) every test of
 * the tile holds.  A comparison whose two sides are affine in the nest's
 * indices (through the nest's locals that never change) holds for every
 * element of the tile's index box exactly when it holds at one corner of
 * the box: the one where the side that must be smaller is largest, found
 * from the signs of the indices' coefficients.  So the nest becomes
 *
 *     if (corner tests) { the nest with those comparisons decided }
 *     else { the nest as written }
 *
 * where the first copy has the decided comparisons folded away
 * (analysis/decide.c: selects keep their arm, locals that became
 * constants or unused go).  Each comparison is assumed to hold the way it
 * does at the first tile of a grid: indices and loop variables 0,
 * a tensor's extent and other run-time scalars large (so `kv < S` and
 * `kv <= q` are taken to hold, softmax's `c * BLOCK_N + j >= N` to fail);
 * one whose sides are not affine in the indices, or whose way cannot be
 * told so, stays in both copies.  The corner tests are uniform over the
 * block (they read no index of the nest), so the threads take one branch
 * together.
 *
 * Only nests of tile_parallel loops that follow register fragments
 * (anchored loops: each thread runs its own elements) whose statements
 * write only fragments in a matrix instruction's layout (gemm
 * accumulators and what shares their layout) and the nest's own locals
 * are versioned: nothing in them reaches shared memory, so the barriers
 * already placed stand.  Row kernels' blocked fragments are left as they
 * are: memory-bound, they would gain little for a second copy of the
 * loop.
 *
 * CUDA only, where it was measured (docs/perf-gpu.md): on gfx90a the
 * attention sample already holds 256 VGPRs, and the loop's second copy
 * took hiprtc's allocation into scratch memory.
 */
#include "passes/passes.h"

#include "analysis/decide.h"
#include "analysis/range.h"
#include "analysis/walk.h"

#include <string.h>

#define MAX_PAR 4
#define MAX_CAND 16
#define MAX_LOCALS 32

typedef struct Cand {
	const TcExpr *cmp; /* the comparison as written */
	bool holds;        /* the truth the fast copy assumes */
} Cand;

typedef struct Box {
	TcArena *a;
	const TcKernel *k;
	const TcRanges *r;
	const TcVar *par[MAX_PAR]; /* the nest's loop vars */
	long long ext[MAX_PAR];    /* their extents */
	const TcExpr *end[MAX_PAR]; /* as written */
	int npar;
	const TcVar *local[MAX_LOCALS]; /* the locals the nest declares */
	int nlocal;
	const TcStmt *nest;
	Cand cand[MAX_CAND];
	int ncand;
	int versioned;
} Box;

static int
par_index(const Box *B, const TcVar *v)
{
	for (int i = 0; i < B->npar; i++)
		if (B->par[i] == v)
			return i;
	return -1;
}

/* The initializer of a local that never changes (NULL: none, or not
 * such a local). */
static const TcExpr *
fixed_init(const Box *B, const TcVar *v)
{
	if (v->kind != TC_VAR_LOCAL || v->index < 0 || v->index >= B->k->vars.len)
		return NULL;
	return B->r->init[v->index];
}

static bool
nest_local(const Box *B, const TcVar *v)
{
	for (int i = 0; i < B->nlocal; i++)
		if (B->local[i] == v)
			return true;
	return false;
}

/* The initializer of a local the nest declares and never changes
 * (NULL: none, or not such a local). */
static const TcExpr *
local_init(const Box *B, const TcVar *v)
{
	return nest_local(B, v) ? fixed_init(B, v) : NULL;
}

/* --- Affine forms ---------------------------------------------------------- */

/* Whether converting any value of integer dtype `from` to `to` keeps it:
 * a cast that changes no value is the identity in an affine form, one
 * that wraps is not ((i4)i runs 0 .. 7, -8 .. -1, 0 .. as i counts
 * up, so no corner decides a test on it). */
static bool
keeps_value(TcDtype to, TcDtype from)
{
	if (!tc_dtype_is_int(to) || to == TC_DT_BOOL || !tc_dtype_is_int(from))
		return false;
	int bt = tc_dtype_bits(to), bf = tc_dtype_bits(from);
	if (from == TC_DT_BOOL || tc_dtype_is_unsigned(from))
		return tc_dtype_is_unsigned(to) ? bf <= bt : bf < bt;
	return !tc_dtype_is_unsigned(to) && bf <= bt;
}

/* The coefficient of each of the nest's indices in e (coef[]), when e is
 * affine in them: sums, differences, negations and products by a
 * constant of the indices, casts that keep every value, the nest's
 * unchanging locals (through their initializers) and terms that name no
 * index. */
static bool
affine(const Box *B, const TcExpr *e, long long coef[MAX_PAR], int depth)
{
	memset(coef, 0, sizeof(long long) * MAX_PAR);
	if (depth > 16)
		return false;
	long long l[MAX_PAR], r[MAX_PAR], c;
	switch (e->kind) {
	case TC_EX_INT:
	case TC_EX_SMS:
		return true;
	case TC_EX_VAR: {
		int p = par_index(B, e->u.var);
		if (p >= 0) {
			coef[p] = 1;
			return true;
		}
		if (nest_local(B, e->u.var)) {
			const TcExpr *init = local_init(B, e->u.var);
			return init && affine(B, init, coef, depth + 1);
		}
		/* Block, loop and scalar vars, tunables, the locals of the
		 * code around the nest: none changes inside it. */
		return e->u.var->kind != TC_VAR_BUFFER &&
		       e->u.var->kind != TC_VAR_TENSOR;
	}
	case TC_EX_UNARY:
		if (e->u.un.op != TC_UOP_NEG || !affine(B, e->u.un.arg, l, depth + 1))
			return false;
		for (int i = 0; i < B->npar; i++)
			coef[i] = -l[i];
		return true;
	case TC_EX_CAST:
		return keeps_value(e->dtype, e->u.cast.arg->dtype) &&
		       affine(B, e->u.cast.arg, coef, depth + 1);
	case TC_EX_BINARY: {
		TcBinop op = e->u.bin.op;
		if (!affine(B, e->u.bin.lhs, l, depth + 1) ||
		    !affine(B, e->u.bin.rhs, r, depth + 1))
			return false;
		bool lz = true, rz = true;
		for (int i = 0; i < B->npar; i++) {
			lz = lz && l[i] == 0;
			rz = rz && r[i] == 0;
		}
		if (lz && rz)
			return true; /* names no index */
		if (op == TC_OP_ADD || op == TC_OP_SUB) {
			for (int i = 0; i < B->npar; i++)
				coef[i] = op == TC_OP_ADD ? l[i] + r[i] : l[i] - r[i];
			return true;
		}
		if (op == TC_OP_MUL && rz && tc_expr_const(e->u.bin.rhs, &c)) {
			for (int i = 0; i < B->npar; i++)
				coef[i] = l[i] * c;
			return true;
		}
		if (op == TC_OP_MUL && lz && tc_expr_const(e->u.bin.lhs, &c)) {
			for (int i = 0; i < B->npar; i++)
				coef[i] = r[i] * c;
			return true;
		}
		return false;
	}
	case TC_EX_CALL:
	case TC_EX_SELECT:
		/* Allowed only when they name no index. */
		for (int i = 0; i < B->npar; i++)
			if (tc_expr_mentions(e, B->par[i]))
				return false;
		return tc_range_invariant(B->r, e);
	default:
		return false;
	}
}

/* --- Which way a comparison goes at the grid's first tile -------------- */

/* e's value at the first tile: indices, loop and block vars 0, scalars
 * (tensor extents, run-time sizes) large: big * L + c for a large L. */
typedef struct Value {
	long long big, c;
} Value;

static bool
first_value(const Box *B, const TcExpr *e, Value *v, int depth)
{
	long long k;
	*v = (Value){ 0, 0 };
	if (depth > 16)
		return false;
	if (tc_expr_const(e, &k)) {
		v->c = k;
		return true;
	}
	Value l, r;
	switch (e->kind) {
	case TC_EX_VAR: {
		const TcVar *x = e->u.var;
		if (x->kind == TC_VAR_LOOP || x->kind == TC_VAR_BLOCK)
			return true;
		if (x->kind == TC_VAR_SCALAR) {
			v->big = 1;
			return true;
		}
		const TcExpr *init = fixed_init(B, x);
		return init && first_value(B, init, v, depth + 1);
	}
	case TC_EX_UNARY:
		if (e->u.un.op != TC_UOP_NEG || !first_value(B, e->u.un.arg, &l, depth + 1))
			return false;
		*v = (Value){ -l.big, -l.c };
		return true;
	case TC_EX_CAST:
		return keeps_value(e->dtype, e->u.cast.arg->dtype) &&
		       first_value(B, e->u.cast.arg, v, depth + 1);
	case TC_EX_BINARY:
		if (!first_value(B, e->u.bin.lhs, &l, depth + 1) ||
		    !first_value(B, e->u.bin.rhs, &r, depth + 1))
			return false;
		switch (e->u.bin.op) {
		case TC_OP_ADD: *v = (Value){ l.big + r.big, l.c + r.c }; return true;
		case TC_OP_SUB: *v = (Value){ l.big - r.big, l.c - r.c }; return true;
		case TC_OP_MUL:
			if (l.big == 0 && r.big == 0)
				*v = (Value){ 0, l.c * r.c };
			else if (l.big == 0 && l.c > 0)
				*v = (Value){ r.big * l.c, r.c * l.c };
			else if (r.big == 0 && r.c > 0)
				*v = (Value){ l.big * r.c, l.c * r.c };
			else
				return false;
			return true;
		default:
			return false;
		}
	case TC_EX_CALL:
		if ((e->u.call.fn != TC_FN_MIN && e->u.call.fn != TC_FN_MAX) ||
		    e->u.call.nargs != 2 ||
		    !first_value(B, e->u.call.args[0], &l, depth + 1) ||
		    !first_value(B, e->u.call.args[1], &r, depth + 1))
			return false;
		{
			bool lt = l.big != r.big ? l.big < r.big : l.c < r.c;
			bool min = e->u.call.fn == TC_FN_MIN;
			*v = lt == min ? l : r;
		}
		return true;
	case TC_EX_SELECT:
		if (!tc_expr_const(e->u.sel.cond, &k))
			return false;
		return first_value(B, k ? e->u.sel.then : e->u.sel.els, v, depth + 1);
	default:
		return false;
	}
}

/* --- Candidates ------------------------------------------------------------ */

static bool
comparison(TcBinop op)
{
	return op == TC_OP_LT || op == TC_OP_LE || op == TC_OP_GT ||
	       op == TC_OP_GE;
}

/* Comparison e as `lo OP hi` with OP < or <= (strict says which). */
static void
normalize(const TcExpr *e, const TcExpr **lo, const TcExpr **hi, bool *strict)
{
	bool swap = e->u.bin.op == TC_OP_GT || e->u.bin.op == TC_OP_GE;
	*lo = swap ? e->u.bin.rhs : e->u.bin.lhs;
	*hi = swap ? e->u.bin.lhs : e->u.bin.rhs;
	*strict = e->u.bin.op == TC_OP_LT || e->u.bin.op == TC_OP_GT;
}

static void
consider(Box *B, const TcExpr *e)
{
	if (B->ncand == MAX_CAND || !tc_dtype_is_int(e->u.bin.lhs->dtype) ||
	    !tc_dtype_is_int(e->u.bin.rhs->dtype))
		return;
	const TcExpr *lo, *hi;
	bool strict;
	normalize(e, &lo, &hi, &strict);
	long long cl[MAX_PAR], ch[MAX_PAR];
	if (!affine(B, lo, cl, 0) || !affine(B, hi, ch, 0))
		return;
	bool indexed = false;
	for (int i = 0; i < B->npar; i++)
		indexed = indexed || cl[i] != ch[i];
	Value vl, vh;
	if (!indexed || !first_value(B, lo, &vl, 0) || !first_value(B, hi, &vh, 0))
		return;
	long long big = vl.big - vh.big, c = vl.c - vh.c;
	bool holds = big != 0 ? big < 0 : strict ? c < 0 : c <= 0;
	for (int i = 0; i < B->ncand; i++)
		if (B->cand[i].cmp == e)
			return;
	B->cand[B->ncand++] = (Cand){ e, holds };
}

/* The comparisons of e that its constant parts do not make moot. */
static void
collect_expr(Box *B, const TcExpr *e, int depth)
{
	long long k;
	if (!e || depth > 16 || tc_expr_const(e, &k))
		return;
	switch (e->kind) {
	case TC_EX_VAR: {
		/* A local of the nest: its initializer's comparisons. */
		const TcExpr *init = local_init(B, e->u.var);
		if (init && e->u.var->dtype == TC_DT_BOOL)
			collect_expr(B, init, depth + 1);
		return;
	}
	case TC_EX_BINARY: {
		TcBinop op = e->u.bin.op;
		const TcExpr *l = e->u.bin.lhs, *r = e->u.bin.rhs;
		if (comparison(op)) {
			consider(B, e);
			return;
		}
		if ((op == TC_OP_LOR || op == TC_OP_LAND) && tc_expr_const(l, &k)) {
			if ((op == TC_OP_LOR) != (k != 0))
				collect_expr(B, r, depth + 1);
			return;
		}
		collect_expr(B, l, depth + 1);
		collect_expr(B, r, depth + 1);
		return;
	}
	case TC_EX_UNARY:
		collect_expr(B, e->u.un.arg, depth + 1);
		return;
	case TC_EX_CAST:
		collect_expr(B, e->u.cast.arg, depth + 1);
		return;
	case TC_EX_SELECT:
		if (tc_expr_const(e->u.sel.cond, &k)) {
			collect_expr(B, k ? e->u.sel.then : e->u.sel.els, depth + 1);
			return;
		}
		collect_expr(B, e->u.sel.cond, depth + 1);
		collect_expr(B, e->u.sel.then, depth + 1);
		collect_expr(B, e->u.sel.els, depth + 1);
		return;
	case TC_EX_CALL:
		for (int i = 0; i < e->u.call.nargs; i++)
			collect_expr(B, e->u.call.args[i], depth + 1);
		return;
	default:
		return;
	}
}

/* The tests of the statements' values and conditions (a local's
 * initializer is read where the local is). */
static void
collect_stmt(void *ctx, TcStmt *s, int par_depth)
{
	Box *B = ctx;
	(void)par_depth;
	switch (s->kind) {
	case TC_ST_ASSIGN:
		collect_expr(B, s->u.assign.value, 0);
		break;
	case TC_ST_IF:
		collect_expr(B, s->u.cond.cond, 0);
		break;
	default:
		break;
	}
}

/* The fast copy's truth of comparison e: a candidate's assumed one, a
 * constant comparison's value. */
static int
decide_box(void *ctx, const TcExpr *e)
{
	const Box *B = ctx;
	long long k;
	if (tc_expr_const(e, &k))
		return k != 0;
	for (int i = 0; i < B->ncand; i++)
		if (B->cand[i].cmp == e)
			return B->cand[i].holds;
	return -1;
}

/* --- Corner tests ------------------------------------------------------------ */

/* e with each index replaced by its value at the corner (at[]: 0, or
 * its loop's end less 1, as written) and the nest's locals by their
 * initializers. */
static TcExpr *
at_corner(const Box *B, const TcExpr *e, const bool at[MAX_PAR])
{
	TcExpr *c;
	switch (e->kind) {
	case TC_EX_VAR: {
		int p = par_index(B, e->u.var);
		if (p >= 0 && !at[p])
			return tc_expr_int(B->a, 0, e->loc);
		if (p >= 0 && B->end[p]->kind == TC_EX_INT)
			return tc_expr_int(B->a, B->ext[p] - 1, e->loc);
		if (p >= 0)
			return tc_expr_binary(B->a, TC_OP_SUB,
					      tc_expr_clone(B->a, B->end[p]),
					      tc_expr_int(B->a, 1, e->loc), e->loc);
		const TcExpr *init = local_init(B, e->u.var);
		if (init)
			return at_corner(B, init, at);
		return tc_expr_clone(B->a, e);
	}
	case TC_EX_UNARY:
		c = tc_expr_clone(B->a, e);
		c->u.un.arg = at_corner(B, e->u.un.arg, at);
		return c;
	case TC_EX_CAST:
		c = tc_expr_clone(B->a, e);
		c->u.cast.arg = at_corner(B, e->u.cast.arg, at);
		return c;
	case TC_EX_BINARY: {
		TcExpr *l = at_corner(B, e->u.bin.lhs, at);
		TcExpr *r = at_corner(B, e->u.bin.rhs, at);
		long long k;
		/* x + 0, 0 + x, x - 0, x * 1: what the corner made. */
		if ((e->u.bin.op == TC_OP_ADD || e->u.bin.op == TC_OP_SUB) &&
		    r->kind == TC_EX_INT && tc_expr_const(r, &k) && k == 0)
			return l;
		if (e->u.bin.op == TC_OP_ADD && l->kind == TC_EX_INT &&
		    tc_expr_const(l, &k) && k == 0)
			return r;
		if (e->u.bin.op == TC_OP_MUL && r->kind == TC_EX_INT &&
		    tc_expr_const(r, &k) && k == 1)
			return l;
		return tc_expr_binary(B->a, e->u.bin.op, l, r, e->loc);
	}
	default:
		return tc_expr_clone(B->a, e);
	}
}

/* The test that candidate c holds (or fails, as it assumes) over the
 * whole box: `lo < hi` (<=) at the corner where lo - hi is largest, or
 * `hi <= lo` (<) where it is smallest; with `negate`, the opposite
 * (`hi <= lo`, `lo < hi`) at the same corner: some element's test goes
 * the other way. */
static TcExpr *
corner_test(const Box *B, const Cand *c, bool negate)
{
	const TcExpr *lo, *hi;
	bool strict;
	normalize(c->cmp, &lo, &hi, &strict);
	long long cl[MAX_PAR], ch[MAX_PAR];
	bool at[MAX_PAR];
	affine(B, lo, cl, 0);
	affine(B, hi, ch, 0);
	for (int i = 0; i < B->npar; i++) {
		long long d = cl[i] - ch[i];
		at[i] = c->holds ? d > 0 : d < 0;
	}
	TcExpr *l = at_corner(B, lo, at), *h = at_corner(B, hi, at);
	/* `lo < hi` (or <=) as written, or its negation `hi <= lo` (<). */
	bool lo_first = c->holds != negate;
	bool lt = lo_first ? strict : !strict;
	return tc_expr_binary(B->a, lt ? TC_OP_LT : TC_OP_LE, lo_first ? l : h,
			      lo_first ? h : l, c->cmp->loc);
}

/* Drop the loops of block s whose bodies are empty, innermost first. */
static void
drop_empty_loops(TcStmt *s)
{
	TcVec *list = &s->u.block.body;
	int n = 0;
	for (int i = 0; i < list->len; i++) {
		TcStmt *st = list->items[i];
		if (st->kind == TC_ST_FOR) {
			drop_empty_loops(st->u.loop.body);
			if (st->u.loop.body->u.block.body.len == 0)
				continue;
		}
		list->items[n++] = st;
	}
	list->len = n;
}

/* --- Nests ------------------------------------------------------------------ */

/* Whether s (in the nest) is one the pass versions: anchored parallel
 * loops of constant extents, element assignments to register fragments
 * and locals, locals, ifs.  Gathers the loops' vars. */
static bool
nest_ok(Box *B, const TcStmt *s)
{
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++)
			if (!nest_ok(B, s->u.block.body.items[i]))
				return false;
		return true;
	case TC_ST_FOR: {
		long long n;
		if (s->u.loop.kind != TC_LOOP_PARALLEL || !s->u.loop.anchor ||
		    !tc_expr_const(s->u.loop.end, &n) || n <= 0 ||
		    B->npar == MAX_PAR)
			return false;
		B->par[B->npar] = s->u.loop.var;
		B->end[B->npar] = s->u.loop.end;
		B->ext[B->npar++] = n;
		return nest_ok(B, s->u.loop.body);
	}
	case TC_ST_DECL:
		if (s->u.decl.var->kind != TC_VAR_LOCAL || B->nlocal == MAX_LOCALS)
			return false;
		B->local[B->nlocal++] = s->u.decl.var;
		return true;
	case TC_ST_ASSIGN: {
		const TcExpr *dst = s->u.assign.dst;
		if (dst->kind == TC_EX_VAR)
			return nest_local(B, dst->u.var);
		const TcVar *v = dst->u.load.var;
		return v->kind == TC_VAR_BUFFER && tc_layout_is_matrix(v->layout.kind);
	}
	case TC_ST_IF:
		return nest_ok(B, s->u.cond.then) &&
		       (!s->u.cond.els || nest_ok(B, s->u.cond.els));
	default:
		return false;
	}
}

/* Nest `s`, versioned: an IF of the corner tests, the decided copy, then
 * the nest; NULL when it has no candidate. */
static TcStmt *
version(Box *B, TcStmt *s)
{
	B->npar = 0;
	B->nlocal = 0;
	B->ncand = 0;
	B->nest = s;
	if (!nest_ok(B, s))
		return NULL;
	tc_walk_stmts(s, 0, collect_stmt, B);
	if (B->ncand == 0)
		return NULL;
	TcDecider D = { .a = B->a, .decide = decide_box, .ctx = B,
			.locals = true, .constants = true };
	tc_decide_locals(&D, B->k);
	TcStmt *wrap = tc_stmt_new(B->a, TC_ST_BLOCK, s->loc);
	TcStmt *in = tc_stmt_new(B->a, TC_ST_BLOCK, s->loc);
	tc_vec_push(B->a, &in->u.block.body, s);
	tc_decide_block(&D, in, wrap);
	if (!D.changed)
		return NULL;
	tc_decide_drop_unused(&D, wrap);
	drop_empty_loops(wrap);
	/* Where the decided copy does nothing, the loop runs only where
	 * some test may go the other way: `if (any corner fails) loop`. */
	bool nothing = wrap->u.block.body.len == 0;
	TcExpr *test = NULL;
	for (int i = 0; i < B->ncand; i++) {
		TcExpr *t = corner_test(B, &B->cand[i], nothing);
		test = !test ? t : tc_expr_binary(B->a, nothing ? TC_OP_LOR :
						  TC_OP_LAND, test, t, s->loc);
	}
	TcStmt *iff = tc_stmt_new(B->a, TC_ST_IF, s->loc);
	iff->u.cond.cond = test;
	iff->u.cond.then = nothing ? in : wrap;
	iff->u.cond.els = nothing ? NULL : in;
	iff->u.cond.box = true;
	B->versioned++;
	return iff;
}

/* The nests to version: parallel loops in blocks outside any. */
typedef struct Site {
	TcStmt *block;
	int at;
} Site;

typedef struct Sites {
	TcArena *a;
	TcVec list; /* Site * */
} Sites;

static void
find_nests(void *ctx, TcStmt *s, int par_depth)
{
	Sites *S = ctx;
	if (s->kind != TC_ST_BLOCK || par_depth > 0)
		return;
	for (int i = 0; i < s->u.block.body.len; i++) {
		const TcStmt *st = s->u.block.body.items[i];
		if (st->kind != TC_ST_FOR || st->u.loop.kind != TC_LOOP_PARALLEL)
			continue;
		Site *site = tc_alloc(S->a, sizeof *site);
		*site = (Site){ s, i };
		tc_vec_push(S->a, &S->list, site);
	}
}

bool
tc_box_tests(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d)
{
	(void)opt;
	(void)d;
	for (int i = 0; i < p->kernels.len; i++) {
		TcKernel *k = p->kernels.items[i];
		TcRanges r;
		tc_ranges_init(&r, a, k);
		Box B = { .a = a, .k = k, .r = &r };
		Sites S = { .a = a };
		tc_walk_stmts(k->body, 0, find_nests, &S);
		for (int j = 0; j < S.list.len; j++) {
			Site *site = S.list.items[j];
			TcStmt **at = (TcStmt **)&site->block->u.block.body.items[site->at];
			TcStmt *v = version(&B, *at);
			if (v)
				*at = v;
		}
	}
	return true;
}
