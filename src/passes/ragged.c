/*
 * ragged.c - ragged copies and run-time loop extents become element code.
 *
 * Input: a checked program (any target).  Output: the same program with
 *
 *   - every tile_copy whose tensor operand is ragged (tile_bounded,
 *     tile_masked, tile_rows: TcRegion's bound, mask and rows) rewritten
 *     as a nest of tile_parallel loops over the whole-buffer operand, one
 *     element per iteration, each element tested: a load reads zero where
 *     the element is outside (past a bound, masked off, or its row, taken
 *     from the index buffer, outside the tensor), a store writes nothing
 *     there;
 *   - every tile_parallel(i, min(C, e)) (check.c accepts e unknown until
 *     run time) rewritten as tile_parallel(i, C) { if (i < e) body }.
 *
 * So no later pass or emitter meets a ragged region or a loop extent that
 * is not a constant: layout inference, thread binding and vectorization
 * treat the result as the element-wise code it is, on every backend.
 * On GPU targets a load into a shared tile whose rows are contiguous in
 * the tensor also says, on its column loop, that a row's runs of 16 bytes
 * may move as vectors, and which part of the test is the row's
 * (TcStmt loop.row_vec, row_in, col_in): the emitter checks each row at
 * run time (inside, aligned) and falls back to the elements.  The
 * reference interpreter runs the program before this pass, from the
 * constructs' own definitions (interp.c).
 *
 * The loops this pass makes get names no var of the kernel has.
 */
#include "analysis/range.h"
#include "ir/tilec_int.h"

#include <stdio.h>
#include <string.h>

typedef struct Ragged {
	TcArena *a;   /* the program's arena */
	const TcProgram *p; /* its tunables: names taken too */
	TcKernel *k;  /* the kernel being rewritten */
	const TcTarget *t; /* the target */
	TcRanges ranges;   /* the kernel's, for origins proven >= 0 */
} Ragged;

static TcExpr *
binary(Ragged *R, TcBinop op, TcExpr *l, TcExpr *r, TcLoc loc)
{
	return tc_expr_binary(R->a, op, l, r, loc);
}

/* l && r, where l may be NULL (true). */
static TcExpr *
both(Ragged *R, TcExpr *l, TcExpr *r, TcLoc loc)
{
	return l ? binary(R, TC_OP_LAND, l, r, loc) : r;
}

static TcExpr *
cast(Ragged *R, TcExpr *e, TcDtype t, TcLoc loc)
{
	if (e->dtype == t)
		return e;
	TcExpr *c = tc_expr_new(R->a, TC_EX_CAST, t, loc);
	c->u.cast.arg = e;
	return c;
}

static TcExpr *
load(Ragged *R, TcVar *v, TcExpr *const *idx, TcLoc loc)
{
	TcExpr *e = tc_expr_new(R->a, TC_EX_LOAD, v->dtype, loc);
	e->u.load.var = v;
	for (int i = 0; i < v->rank; i++)
		e->u.load.idx[i] = idx[i];
	return e;
}

static TcStmt *
block(Ragged *R, TcStmt *only, TcLoc loc)
{
	TcStmt *b = tc_stmt_new(R->a, TC_ST_BLOCK, loc);
	tc_vec_push(R->a, &b->u.block.body, only);
	return b;
}

static TcStmt *
parallel(Ragged *R, TcVar *var, const TcExpr *extent, TcStmt *body, TcLoc loc)
{
	TcStmt *s = tc_stmt_new(R->a, TC_ST_FOR, loc);
	s->u.loop.kind = TC_LOOP_PARALLEL;
	s->u.loop.var = var;
	s->u.loop.begin = tc_expr_int(R->a, 0, loc);
	s->u.loop.end = tc_expr_clone(R->a, extent);
	s->u.loop.step = tc_expr_int(R->a, 1, loc);
	s->u.loop.body = body->kind == TC_ST_BLOCK ? body : block(R, body, loc);
	return s;
}

/* The elements of one 16-byte vector of a load of tensor region reg into
 * tile, when the pass lets its rows move as vectors (TcStmt loop.row_vec):
 * on a GPU target, into a tile_shared buffer of the tensor's own dtype
 * (whole bytes), unmasked, the tile's last dim along the tensor's last
 * (rows contiguous) and a whole number of vectors, from a column origin
 * proven >= 0 (tc_range_nonneg: so every column test is an upper bound,
 * and holds for a run when it holds for its last column).  0 when not. */
static int
row_vector(const Ragged *R, const TcVar *tile, const TcRegion *reg)
{
	const TcVar *ten = reg->var;
	int n = tile->rank, bits = tc_dtype_storage_bits(tile->dtype);
	long long cols;
	if (!R->t->simt || tile->scope != TC_SCOPE_SHARED || n < 2 || reg->mask ||
	    tile->dtype != ten->dtype || tile->dtype == TC_DT_BOOL || bits < 8 ||
	    reg->dims[n - 1] != ten->rank - 1 ||
	    !tc_expr_const(tile->shape[n - 1], &cols) ||
	    !tc_range_nonneg(&R->ranges, reg->origin[ten->rank - 1]))
		return 0;
	int vec = 128 / bits;
	return cols % vec == 0 ? vec : 0;
}

/* The copy s between the whole buffer `tile` and the ragged tensor region
 * `reg`, as parallel loops over the tile (load: tile <- reg).  Where its
 * rows may move as vectors (row_vector), the column loop says so, with the
 * test split into what it asks of the row and of the column. */
static TcStmt *
lower_copy(Ragged *R, const TcStmt *s, TcVar *tile, const TcRegion *reg,
	   bool load_into_tile)
{
	TcLoc loc = s->loc;
	int n = tile->rank;
	static const char *const two[2] = { "row", "col" };
	TcVar *iv[TC_MAX_RANK];
	TcExpr *t[TC_MAX_RANK];
	for (int d = 0; d < n; d++) {
		char base[16];
		snprintf(base, sizeof base, "i%d", d);
		const char *name = tc_fresh_name(R->a, R->p, R->k, n == 1 ? "i" : n == 2 ? two[d] : base);
		iv[d] = tc_var_new(R->a, R->k, TC_VAR_LOOP, name, TC_DT_I32, loc);
		t[d] = tc_expr_var(R->a, iv[d], loc);
	}
	/* Inside: the bounds, the mask, then the tensor's extents at the
	 * element's index (rows[] read only where the rest holds).  For rows
	 * that move as vectors, the tests of the column apart (col_in). */
	int vec = load_into_tile ? row_vector(R, tile, reg) : 0;
	TcExpr *inside = NULL, *col_in = NULL;
	for (int d = 0; d < n && d < TC_MAX_RANK && reg->bound[d]; d++) {
		TcExpr *test = binary(R, TC_OP_LT, t[d],
				      tc_expr_clone(R->a, reg->bound[d]), loc);
		if (vec && d == n - 1)
			col_in = both(R, col_in, test, loc);
		else
			inside = both(R, inside, test, loc);
	}
	if (reg->mask) {
		TcExpr *mi[TC_MAX_RANK];
		for (int d = 0; d < reg->mask->rank; d++)
			mi[d] = t[d];
		inside = both(R, inside,
			      binary(R, TC_OP_NE, load(R, reg->mask, mi, loc),
				     tc_expr_int(R->a, 0, loc), loc),
			      loc);
	}
	const TcVar *ten = reg->var;
	TcExpr *idx[TC_MAX_RANK];
	for (int vd = 0; vd < ten->rank; vd++)
		idx[vd] = tc_expr_clone(R->a, reg->origin[vd]);
	for (int d = 0; d < n; d++) {
		int vd = reg->dims[d];
		TcExpr *at = t[d];
		if (d == 0 && reg->rows) {
			TcExpr *ri[1] = { t[0] };
			at = load(R, reg->rows, ri, loc);
		}
		long long o;
		idx[vd] = tc_expr_const(idx[vd], &o) && o == 0
				  ? at : binary(R, TC_OP_ADD, idx[vd], at, loc);
	}
	/* The tensor's extents; `0 <=` only where a constant origin of
	 * zero or more does not prove it. */
	for (int vd = 0; vd < ten->rank; vd++) {
		long long o;
		bool gathered = reg->rows && vd == reg->dims[0];
		bool run = vec && vd == ten->rank - 1; /* its origin >= 0 */
		if (!run && (gathered || !tc_expr_const(reg->origin[vd], &o) || o < 0))
			inside = both(R, inside,
				      binary(R, TC_OP_LE,
					     tc_expr_int(R->a, 0, loc),
					     tc_expr_clone(R->a, idx[vd]), loc),
				      loc);
		TcExpr *test = binary(R, TC_OP_LT, tc_expr_clone(R->a, idx[vd]),
				      tc_expr_clone(R->a, ten->shape[vd]), loc);
		if (vec && vd == ten->rank - 1)
			col_in = both(R, col_in, test, loc);
		else
			inside = both(R, inside, test, loc);
	}
	TcExpr *row_in = inside;
	if (col_in)
		inside = both(R, inside, col_in, loc);
	TcExpr *tile_el = load(R, tile, t, loc);
	TcExpr *ten_el = load(R, (TcVar *)ten, idx, loc);
	TcStmt *body;
	if (load_into_tile) {
		TcExpr *sel = tc_expr_new(R->a, TC_EX_SELECT, tile->dtype, loc);
		sel->u.sel.cond = inside;
		sel->u.sel.then = cast(R, ten_el, tile->dtype, loc);
		sel->u.sel.els = cast(R, tc_expr_int(R->a, 0, loc), tile->dtype,
				      loc);
		body = tc_stmt_new(R->a, TC_ST_ASSIGN, loc);
		body->u.assign.dst = tile_el;
		body->u.assign.value = sel;
	} else {
		TcStmt *st = tc_stmt_new(R->a, TC_ST_ASSIGN, loc);
		st->u.assign.dst = ten_el;
		st->u.assign.value = cast(R, tile_el, ten->dtype, loc);
		body = tc_stmt_new(R->a, TC_ST_IF, loc);
		body->u.cond.cond = inside;
		body->u.cond.then = block(R, st, loc);
	}
	for (int d = n - 1; d >= 0; d--) {
		body = parallel(R, iv[d], tile->shape[d], body, loc);
		if (d == n - 1 && vec) {
			body->u.loop.row_vec = vec;
			body->u.loop.row_in = row_in ? tc_expr_clone(R->a, row_in) : NULL;
			body->u.loop.col_in = col_in ? tc_expr_clone(R->a, col_in) : NULL;
		}
	}
	return body;
}

/* tile_parallel(i, min(C, e)) -> tile_parallel(i, C) { if (i < e) ... } */
static void
lower_extent(Ragged *R, TcStmt *s)
{
	long long c;
	const TcExpr *e = s->u.loop.end;
	if (tc_expr_const(e, &c) && c > 0)
		return;
	const TcExpr *rest = tc_parallel_bound(e, &c);
	tc_assert(rest); /* specialize.c accepts no other form */
	const TcExpr *bound = e->u.call.args[e->u.call.args[0] == rest];
	TcLoc loc = e->loc;
	TcStmt *guard = tc_stmt_new(R->a, TC_ST_IF, loc);
	guard->u.cond.cond = binary(R, TC_OP_LT,
				    tc_expr_var(R->a, s->u.loop.var, loc),
				    tc_expr_clone(R->a, rest), loc);
	guard->u.cond.then = s->u.loop.body;
	s->u.loop.body = block(R, guard, loc);
	s->u.loop.end = tc_expr_clone(R->a, bound);
}

static TcStmt *
rewrite(Ragged *R, TcStmt *s)
{
	if (!s)
		return s;
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++)
			s->u.block.body.items[i] =
				rewrite(R, s->u.block.body.items[i]);
		return s;
	case TC_ST_FOR:
		s->u.loop.body = rewrite(R, s->u.loop.body);
		if (s->u.loop.kind == TC_LOOP_PARALLEL)
			lower_extent(R, s);
		return s;
	case TC_ST_IF:
		s->u.cond.then = rewrite(R, s->u.cond.then);
		s->u.cond.els = rewrite(R, s->u.cond.els);
		return s;
	case TC_ST_COPY: {
		TcRegion *dst = &s->u.copy.dst, *src = &s->u.copy.src;
		if (tc_region_ragged(src))
			return lower_copy(R, s, dst->var, src, true);
		if (tc_region_ragged(dst))
			return lower_copy(R, s, src->var, dst, false);
		return s;
	}
	default:
		return s;
	}
}

bool
tc_ragged(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d)
{
	(void)d;
	Ragged R = { .a = a, .p = p, .t = &opt->target };
	for (int i = 0; i < p->kernels.len; i++) {
		R.k = p->kernels.items[i];
		tc_ranges_init(&R.ranges, a, R.k);
		R.k->body = rewrite(&R, R.k->body);
	}
	return true;
}
