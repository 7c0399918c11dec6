/*
 * check.c - the meaning of a tile program: scopes, shapes, dtypes, races.
 *
 * Runs after specialize, so every tunable has its value and buffer shapes
 * are constants.  The parser already guaranteed form (operands are regions,
 * loops are canonical, names resolve); here we check what those forms mean:
 *
 *   - launch extents depend only on scalar parameters and tunables;
 *   - tensor extents depend only on scalar parameters and tunables;
 *   - tile operations are block-level statements, never inside tile_parallel;
 *   - a tile_parallel iteration writes only what it owns: a scalar declared
 *     outside the loop is never assigned inside it, and a buffer element
 *     written inside it is indexed by every enclosing parallel variable,
 *     directly or through locals whose value depends on it on every path;
 *     a read of an element another iteration writes is a warning;
 *   - const tensors are never written; tile ops see the scopes and dtypes
 *     they need; shapes of copies, gemms and reductions agree.
 *
 * Every problem is a located error; checking goes on after an error so one
 * run reports as much as it can (each statement at most once).
 */
#include "ir/tilec_int.h"

#include <stdio.h>
#include <string.h>

typedef struct Checker {
	TcArena *a;        /* for scratch text */
	TcDiags *d;        /* where errors go */
	TcKernel *k;       /* the kernel being checked */
	TcVar *par[16];    /* enclosing tile_parallel loop vars, outermost first */
	int npar;          /* how many */
	/* For each LOCAL (by var->index): how many tile_parallel loops
	 * enclosed its declaration.  Assigning it is race-free only at the
	 * same depth: inside deeper parallel loops every iteration would. */
	int *decl_par;
	/* For each LOCAL and LOOP var (by var->index): bit p set when its
	 * current value depends on par[p] on every path that reaches the
	 * statement being checked.  An element index that reads such a local
	 * selects by par[p] as if it named par[p] itself. */
	unsigned *deps;
	int nvars;         /* entries in decl_par and deps */
	/* The last value of each par[p]: its loop's constant extent less
	 * one, or -1 where the extent is known only at run time. */
	long long par_last[16];
	/* Conditions the statement or expression being checked is under
	 * (an if, a serial loop's body, a ?: arm, the right of && or ||):
	 * an index out of a buffer's bounds there may never be evaluated. */
	int guarded;
	bool quiet;        /* a pass that only computes deps: report nothing */
} Checker;

TC_PRINTF(3, 4)
static void
error(Checker *C, TcLoc loc, const char *fmt, ...)
{
	if (C->quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	tc_vdiag(C->d, TC_ERROR, loc, fmt, ap);
	va_end(ap);
}

/* --- Helpers ---------------------------------------------------------------- */

/* Does e use any var not allowed by `ok_kinds` (a bit per TcVarKind)?
 * Reports the first offender and returns false. */
static bool
uses_only(Checker *C, const TcExpr *e, unsigned ok_kinds, const char *what)
{
	switch (e->kind) {
	case TC_EX_INT:
	case TC_EX_FLOAT:
		return true;
	case TC_EX_VAR:
		if (ok_kinds & (1u << e->u.var->kind))
			return true;
		error(C, e->loc, "%s cannot depend on '%s' (a %s); use scalar "
		      "parameters, tunables and constants", what, e->u.var->name,
		      tc_varkind_name(e->u.var->kind));
		return false;
	case TC_EX_BINARY:
		return uses_only(C, e->u.bin.lhs, ok_kinds, what) &&
		       uses_only(C, e->u.bin.rhs, ok_kinds, what);
	case TC_EX_UNARY:
		return uses_only(C, e->u.un.arg, ok_kinds, what);
	case TC_EX_SELECT:
		return uses_only(C, e->u.sel.cond, ok_kinds, what) &&
		       uses_only(C, e->u.sel.then, ok_kinds, what) &&
		       uses_only(C, e->u.sel.els, ok_kinds, what);
	case TC_EX_CALL:
		for (int i = 0; i < e->u.call.nargs; i++)
			if (!uses_only(C, e->u.call.args[i], ok_kinds, what))
				return false;
		return true;
	case TC_EX_CAST:
		return uses_only(C, e->u.cast.arg, ok_kinds, what);
	case TC_EX_LOAD:
		error(C, e->loc, "%s cannot read tensor or buffer elements", what);
		return false;
	default:
		tc_unreachable();
	}
}

/* A launch computes tensor extents and the grid from the arguments
 * (docs/launch.md, "Expressions"): in integers, with C's integer
 * operators, integer casts, ceildiv, min and max only.  Reports the first
 * part it cannot compute. */
static bool
launch_computable(Checker *C, const TcExpr *e, const char *what)
{
	if (!tc_dtype_is_int(e->dtype)) {
		error(C, e->loc, "%s is computed by the launch from the "
		      "arguments, in integers (docs/launch.md): this part is "
		      "%s", what, tc_dtype_name(e->dtype));
		return false;
	}
	switch (e->kind) {
	case TC_EX_BINARY:
		return launch_computable(C, e->u.bin.lhs, what) &&
		       launch_computable(C, e->u.bin.rhs, what);
	case TC_EX_UNARY:
		return launch_computable(C, e->u.un.arg, what);
	case TC_EX_SELECT:
		return launch_computable(C, e->u.sel.cond, what) &&
		       launch_computable(C, e->u.sel.then, what) &&
		       launch_computable(C, e->u.sel.els, what);
	case TC_EX_CAST:
		return launch_computable(C, e->u.cast.arg, what);
	case TC_EX_CALL:
		if (e->u.call.fn != TC_FN_CEILDIV && e->u.call.fn != TC_FN_MIN &&
		    e->u.call.fn != TC_FN_MAX) {
			error(C, e->loc, "%s is computed by the launch from the "
			      "arguments (docs/launch.md), which knows ceildiv, "
			      "min and max but not %s", what,
			      tc_func_name(e->u.call.fn));
			return false;
		}
		for (int i = 0; i < e->u.call.nargs; i++)
			if (!launch_computable(C, e->u.call.args[i], what))
				return false;
		return true;
	default:
		return true;
	}
}

/* "128x32" for a buffer's shape. */
static const char *
shape_str(Checker *C, const TcVar *v)
{
	TcBuf b;
	tc_buf_init(&b);
	for (int i = 0; i < v->rank; i++)
		tc_buf_printf(&b, "%s%lld", i ? "x" : "", tc_var_extent(v, i));
	if (v->rank == 0)
		tc_buf_puts(&b, "scalar");
	char *s = tc_strdup(C->a, b.data);
	tc_buf_free(&b);
	return s;
}

/* --- Dependence on parallel variables ------------------------------------------ */

/* Which enclosing parallel variables e's value depends on (a bit per
 * depth in C->par): those it names, and those of the locals it reads. */
static unsigned
par_deps(const Checker *C, const TcExpr *e)
{
	if (!e)
		return 0;
	switch (e->kind) {
	case TC_EX_INT:
	case TC_EX_FLOAT:
		return 0;
	case TC_EX_VAR: {
		const TcVar *v = e->u.var;
		for (int p = 0; p < C->npar; p++)
			if (C->par[p] == v)
				return 1u << p;
		if ((v->kind == TC_VAR_LOCAL || v->kind == TC_VAR_LOOP) &&
		    v->index >= 0 && v->index < C->nvars)
			return C->deps[v->index];
		return 0;
	}
	case TC_EX_BINARY:
		return par_deps(C, e->u.bin.lhs) | par_deps(C, e->u.bin.rhs);
	case TC_EX_UNARY:
		return par_deps(C, e->u.un.arg);
	case TC_EX_SELECT:
		return par_deps(C, e->u.sel.cond) | par_deps(C, e->u.sel.then) |
		       par_deps(C, e->u.sel.els);
	case TC_EX_CALL: {
		unsigned m = 0;
		for (int i = 0; i < e->u.call.nargs; i++)
			m |= par_deps(C, e->u.call.args[i]);
		return m;
	}
	case TC_EX_CAST:
		return par_deps(C, e->u.cast.arg);
	case TC_EX_LOAD: {
		unsigned m = 0;
		for (int i = 0; i < e->u.load.var->rank; i++)
			m |= par_deps(C, e->u.load.idx[i]);
		return m;
	}
	default:
		tc_unreachable();
	}
}

/* v now holds a value that depends on the parallel variables in m. */
static void
set_deps(Checker *C, const TcVar *v, unsigned m)
{
	if (v->index >= 0 && v->index < C->nvars)
		C->deps[v->index] = m;
}

/* deps[] saved or merged around a branch or a loop. */
static unsigned *
deps_save(Checker *C)
{
	unsigned *copy = tc_alloc(C->a, sizeof *copy * (size_t)(C->nvars + 1));
	memcpy(copy, C->deps, sizeof *copy * (size_t)C->nvars);
	return copy;
}

/* What holds on every path: deps &= other; true when anything changed. */
static bool
deps_meet(Checker *C, const unsigned *other)
{
	bool changed = false;
	for (int i = 0; i < C->nvars; i++) {
		unsigned m = C->deps[i] & other[i];
		changed |= m != C->deps[i];
		C->deps[i] = m;
	}
	return changed;
}

/* --- Expressions --------------------------------------------------------------- */

/* The values e takes, when the only vars in it are enclosing
 * tile_parallel variables of constant extent: [*lo, *hi]. */
static bool
index_span(const Checker *C, const TcExpr *e, long long *lo, long long *hi)
{
	long long a0, a1, b0, b1;
	switch (e->kind) {
	case TC_EX_INT:
		*lo = *hi = e->u.ival;
		return true;
	case TC_EX_VAR:
		for (int p = 0; p < C->npar; p++)
			if (C->par[p] == e->u.var && C->par_last[p] >= 0) {
				*lo = 0;
				*hi = C->par_last[p];
				return true;
			}
		return false;
	case TC_EX_CAST:
		return tc_dtype_is_int(e->dtype) &&
		       index_span(C, e->u.cast.arg, lo, hi);
	case TC_EX_BINARY:
		if (!index_span(C, e->u.bin.lhs, &a0, &a1) ||
		    !index_span(C, e->u.bin.rhs, &b0, &b1))
			return false;
		/* Buffer extents and loop extents are small: no overflow. */
		switch (e->u.bin.op) {
		case TC_OP_ADD: *lo = a0 + b0; *hi = a1 + b1; return true;
		case TC_OP_SUB: *lo = a0 - b1; *hi = a1 - b0; return true;
		case TC_OP_MUL:
			if (b0 != b1 || b0 < 0)
				return false;
			*lo = a0 * b0;
			*hi = a1 * b0;
			return true;
		default:
			return false;
		}
	default:
		return false;
	}
}

/* An element of a buffer that an unconditional index takes out of its
 * bounds: the buffer's extents and the loops' are constants here, so
 * this is known now, where it would otherwise write past the buffer
 * (shared memory on the GPUs, the stack on the CPU). */
static void
check_buffer_index(Checker *C, const TcExpr *e)
{
	const TcVar *v = e->u.load.var;
	if (v->kind != TC_VAR_BUFFER || C->guarded)
		return;
	for (int d = 0; d < v->rank; d++) {
		long long n, lo, hi;
		const TcExpr *ix = e->u.load.idx[d];
		if (!tc_expr_const(v->shape[d], &n) || !index_span(C, ix, &lo, &hi))
			continue;
		if (lo >= 0 && hi < n)
			continue;
		const char *why = "";
		for (int p = C->npar - 1; p >= 0; p--)
			if (par_deps(C, ix) & (1u << p)) {
				why = tc_fmt(C->a, " (tile_parallel '%s' runs "
					     "to %lld)", C->par[p]->name,
					     C->par_last[p]);
				break;
			}
		error(C, ix->loc, "this index of '%s' reaches %lld%s, outside "
		      "its %lld elements along dim %d: guard it with an if, "
		      "or shrink the loop", v->name, lo < 0 ? lo : hi, why,
		      n, d);
		return;
	}
}

/* Walk an expression in statement context: nothing to reject today beyond
 * what the parser rejects, but indices must be integers. */
static void
check_expr(Checker *C, const TcExpr *e)
{
	if (!e)
		return;
	switch (e->kind) {
	case TC_EX_BINARY: {
		bool lazy = e->u.bin.op == TC_OP_LAND || e->u.bin.op == TC_OP_LOR;
		check_expr(C, e->u.bin.lhs);
		C->guarded += lazy;
		check_expr(C, e->u.bin.rhs);
		C->guarded -= lazy;
		if ((e->u.bin.op == TC_OP_REM || e->u.bin.op == TC_OP_SHL ||
		     e->u.bin.op == TC_OP_SHR || e->u.bin.op == TC_OP_BAND ||
		     e->u.bin.op == TC_OP_BOR || e->u.bin.op == TC_OP_BXOR) &&
		    (tc_dtype_is_float(e->u.bin.lhs->dtype) ||
		     tc_dtype_is_float(e->u.bin.rhs->dtype)))
			error(C, e->loc, "operator '%s' needs integer operands",
			      tc_binop_name(e->u.bin.op));
		break;
	}
	case TC_EX_UNARY:
		check_expr(C, e->u.un.arg);
		if (e->u.un.op == TC_UOP_BNOT && tc_dtype_is_float(e->u.un.arg->dtype))
			error(C, e->loc, "operator '~' needs an integer operand");
		break;
	case TC_EX_SELECT:
		check_expr(C, e->u.sel.cond);
		C->guarded++;
		check_expr(C, e->u.sel.then);
		check_expr(C, e->u.sel.els);
		C->guarded--;
		break;
	case TC_EX_CALL:
		for (int i = 0; i < e->u.call.nargs; i++)
			check_expr(C, e->u.call.args[i]);
		break;
	case TC_EX_CAST:
		check_expr(C, e->u.cast.arg);
		break;
	case TC_EX_LOAD:
		for (int i = 0; i < e->u.load.var->rank; i++)
			check_expr(C, e->u.load.idx[i]);
		check_buffer_index(C, e);
		break;
	default:
		break;
	}
}

/* --- Tile operations ----------------------------------------------------------- */

static bool
whole_buffer(Checker *C, const TcRegion *r, const char *op, const char *role)
{
	if (r->whole)
		return true;
	error(C, r->loc, "%s's %s must be a whole buffer, not a region of '%s'",
	      op, role, r->var->name);
	return false;
}

static bool
writable(Checker *C, const TcRegion *r, const char *op)
{
	if (r->var->kind == TC_VAR_TENSOR && r->var->is_const) {
		error(C, r->loc, "%s writes '%s', which is declared const", op,
		      r->var->name);
		return false;
	}
	return true;
}

/* A region of a buffer (not whole) must fit: constant origin, in bounds. */
static bool
buffer_region_fits(Checker *C, const TcRegion *r, const TcVar *tile)
{
	if (r->whole || r->var->kind != TC_VAR_BUFFER)
		return true;
	long long ext[TC_MAX_RANK];
	for (int i = 0; i < r->var->rank; i++)
		ext[i] = 1;
	for (int i = 0; i < r->ndims; i++)
		ext[r->dims[i]] = tc_var_extent(tile, i);
	for (int i = 0; i < r->var->rank; i++) {
		long long o;
		if (!tc_expr_const(r->origin[i], &o)) {
			error(C, r->loc, "a region of buffer '%s' needs a constant "
			      "origin", r->var->name);
			return false;
		}
		if (o < 0 || o + ext[i] > tc_var_extent(r->var, i)) {
			error(C, r->loc, "region [%lld, %lld) of dim %d is outside "
			      "buffer '%s' (extent %lld)", o, o + ext[i], i,
			      r->var->name, tc_var_extent(r->var, i));
			return false;
		}
	}
	return true;
}

/* The name of the first ragged form r is written in, for errors. */
static const char *
ragged_name(const TcRegion *r)
{
	return r->rows ? "tile_rows" : r->bound[0] ? "tile_bounded" : "tile_masked";
}

/* A ragged region (tile_bounded, tile_masked, tile_rows) of a tile_copy or
 * tile_atomic_add whose other operand is the whole buffer `tile`. */
static bool
check_ragged(Checker *C, const TcRegion *r, const TcVar *tile)
{
	if (!tc_region_ragged(r))
		return true;
	if (r->var->kind != TC_VAR_TENSOR) {
		error(C, r->loc, "%s takes a region of a tensor; '%s' is a "
		      "buffer", ragged_name(r), r->var->name);
		return false;
	}
	int n = 0;
	while (n < TC_MAX_RANK && r->bound[n])
		n++;
	if (n > tile->rank) {
		error(C, r->bound_loc, "tile_bounded gives %d extents but the "
		      "tile '%s' has %d dims", n, tile->name, tile->rank);
		return false;
	}
	for (int i = 0; i < n; i++) {
		check_expr(C, r->bound[i]);
		if (!tc_dtype_is_int(r->bound[i]->dtype)) {
			/* tile_bounded is variadic: C promoted a float to
			 * double; name the type the program wrote. */
			const TcExpr *e = r->bound[i];
			if (e->kind == TC_EX_CAST && e->dtype == TC_DT_F64 &&
			    tc_dtype_is_float(e->u.cast.arg->dtype))
				e = e->u.cast.arg;
			error(C, r->bound[i]->loc, "tile_bounded's extents are "
			      "integers, not %s", tc_dtype_name(e->dtype));
			return false;
		}
	}
	const TcVar *m = r->mask;
	if (m) {
		if (m == tile) {
			error(C, r->mask_loc, "the mask '%s' is the tile the copy "
			      "moves; use another buffer", m->name);
			return false;
		}
		if (!tc_dtype_is_int(m->dtype)) {
			error(C, r->mask_loc, "the mask '%s' is %s; a mask is "
			      "bool or an integer type (0 is false)", m->name,
			      tc_dtype_name(m->dtype));
			return false;
		}
		bool ok = m->rank == tile->rank || m->rank == 1;
		for (int i = 0; ok && i < m->rank; i++)
			ok = tc_var_extent(m, i) == tc_var_extent(tile, i);
		if (!ok) {
			error(C, r->mask_loc, "the mask '%s' is %s but the tile "
			      "'%s' is %s: a mask has the tile's shape, or the "
			      "extent of its dim 0 (a row mask)", m->name,
			      shape_str(C, m), tile->name, shape_str(C, tile));
			return false;
		}
	}
	const TcVar *x = r->rows;
	if (x) {
		if (x == tile) {
			error(C, r->rows_loc, "the index '%s' is the tile the copy "
			      "moves; use another buffer", x->name);
			return false;
		}
		if (x->dtype != TC_DT_I32 && x->dtype != TC_DT_I64) {
			error(C, r->rows_loc, "the index '%s' of tile_rows is %s; "
			      "it must be i32 or i64", x->name,
			      tc_dtype_name(x->dtype));
			return false;
		}
		if (x->rank != 1 || tc_var_extent(x, 0) != tc_var_extent(tile, 0)) {
			error(C, r->rows_loc, "the index '%s' of tile_rows is %s "
			      "but the tile '%s' is %s: it needs one row index per "
			      "tile row (%lld)", x->name, shape_str(C, x),
			      tile->name, shape_str(C, tile),
			      tc_var_extent(tile, 0));
			return false;
		}
	}
	return true;
}

/* Ragged regions are operands of copies only. */
static bool
not_ragged(Checker *C, const TcRegion *r, const char *op)
{
	if (!r->var || !tc_region_ragged(r))
		return true;
	error(C, r->loc, "%s is an operand of tile_copy only, not of %s",
	      ragged_name(r), op);
	return false;
}

static void
check_copy(Checker *C, TcStmt *s)
{
	TcRegion *dst = &s->u.copy.dst, *src = &s->u.copy.src;
	bool atomic = s->kind == TC_ST_ATOMIC_ADD;
	const char *op = atomic ? "tile_atomic_add" : "tile_copy";
	if (!writable(C, dst, op))
		return;
	for (int i = 0; i < dst->var->rank; i++)
		check_expr(C, dst->origin[i]);
	for (int i = 0; i < src->var->rank; i++)
		check_expr(C, src->origin[i]);
	if (atomic) {
		if (dst->var->kind != TC_VAR_TENSOR) {
			error(C, dst->loc, "tile_atomic_add adds into a tensor "
			      "region; '%s' is a buffer", dst->var->name);
			return;
		}
		if (!whole_buffer(C, src, op, "source"))
			return;
		if (!tc_dtype_is_float(dst->var->dtype) &&
		    dst->var->dtype != TC_DT_I32) {
			error(C, dst->loc, "tile_atomic_add supports f32, f16, "
			      "bf16, f64 and i32 tensors, not %s",
			      tc_dtype_name(dst->var->dtype));
			return;
		}
	}
	const TcVar *tile = src->whole ? src->var : dst->var;
	if (dst->whole && src->whole) {
		if (dst->var->rank != src->var->rank) {
			error(C, s->loc, "%s: '%s' has %d dims but '%s' has %d", op,
			      dst->var->name, dst->var->rank, src->var->name,
			      src->var->rank);
			return;
		}
		for (int i = 0; i < dst->var->rank; i++)
			if (tc_var_extent(dst->var, i) !=
			    tc_var_extent(src->var, i)) {
				error(C, s->loc, "%s: shapes differ: '%s' is %s, "
				      "'%s' is %s", op, dst->var->name,
				      shape_str(C, dst->var), src->var->name,
				      shape_str(C, src->var));
				return;
			}
	}
	if (atomic && (tc_region_ragged(src) || tc_region_ragged(dst))) {
		const TcRegion *r = tc_region_ragged(dst) ? dst : src;
		error(C, r->loc, "%s is not supported in tile_atomic_add yet; "
		      "it is an operand of tile_copy", ragged_name(r));
		return;
	}
	if (!check_ragged(C, dst, tile) || !check_ragged(C, src, tile))
		return;
	if (!buffer_region_fits(C, dst, tile))
		return;
	buffer_region_fits(C, src, tile);
}

static bool
gemm_dtype_ok(TcDtype t)
{
	return t == TC_DT_F16 || t == TC_DT_BF16 || t == TC_DT_F32 ||
	       t == TC_DT_F64 || t == TC_DT_FP8E4M3 || t == TC_DT_FP8E5M2 ||
	       t == TC_DT_I8;
}

static void
check_gemm(Checker *C, TcStmt *s)
{
	TcRegion *c = &s->u.gemm.c, *a = &s->u.gemm.a, *b = &s->u.gemm.b;
	if (!whole_buffer(C, c, "tile_gemm", "accumulator") ||
	    !whole_buffer(C, a, "tile_gemm", "A operand") ||
	    !whole_buffer(C, b, "tile_gemm", "B operand"))
		return;
	if (c->var->scope != TC_SCOPE_FRAGMENT) {
		error(C, c->loc, "tile_gemm's accumulator '%s' must be a "
		      "tile_fragment buffer, not %s", c->var->name,
		      tc_scope_name(c->var->scope));
		return;
	}
	const TcRegion *ops[2] = { a, b };
	for (int i = 0; i < 2; i++)
		if (ops[i]->var->scope == TC_SCOPE_LOCAL) {
			error(C, ops[i]->loc, "tile_gemm's operand '%s' must be "
			      "shared or fragment, not local", ops[i]->var->name);
			return;
		}
	if (c->var->rank != 2 || a->var->rank != 2 || b->var->rank != 2) {
		const TcRegion *bad = c->var->rank != 2 ? c :
				      a->var->rank != 2 ? a : b;
		error(C, bad->loc, "tile_gemm needs 2-dim operands; '%s' has %d "
		      "dims", bad->var->name, bad->var->rank);
		return;
	}
	if (!tc_dtype_is_float(c->var->dtype) && c->var->dtype != TC_DT_I32) {
		error(C, c->loc, "tile_gemm accumulates in f32, f16, f64 or i32, "
		      "not %s", tc_dtype_name(c->var->dtype));
		return;
	}
	if (!gemm_dtype_ok(a->var->dtype) || !gemm_dtype_ok(b->var->dtype)) {
		const TcRegion *bad = gemm_dtype_ok(a->var->dtype) ? b : a;
		error(C, bad->loc, "tile_gemm does not support %s operands",
		      tc_dtype_name(bad->var->dtype));
		return;
	}
	/* An integer sum of float products would need each product rounded
	 * somewhere; no backend has such an instruction. */
	if (c->var->dtype == TC_DT_I32 && tc_dtype_is_float(a->var->dtype)) {
		error(C, c->loc, "tile_gemm accumulates %s operands in a float "
		      "type, not i32 ('%s'); i32 takes i8 operands",
		      tc_dtype_name(a->var->dtype), c->var->name);
		return;
	}
	if (a->var->dtype != b->var->dtype) {
		error(C, s->loc, "tile_gemm operands differ in dtype: '%s' is %s, "
		      "'%s' is %s", a->var->name, tc_dtype_name(a->var->dtype),
		      b->var->name, tc_dtype_name(b->var->dtype));
		return;
	}
	bool ta = s->u.gemm.trans_a, tb = s->u.gemm.trans_b;
	long long M = tc_var_extent(c->var, 0), N = tc_var_extent(c->var, 1);
	long long am = tc_var_extent(a->var, ta ? 1 : 0);
	long long ak = tc_var_extent(a->var, ta ? 0 : 1);
	long long bk = tc_var_extent(b->var, tb ? 1 : 0);
	long long bn = tc_var_extent(b->var, tb ? 0 : 1);
	if (am != M || bn != N || ak != bk)
		error(C, s->loc, "tile_gemm shapes do not match: %s '%s' is %s, "
		      "A '%s' is %s%s, B '%s' is %s%s (need C MxN, A %s, B %s)",
		      "C", c->var->name, shape_str(C, c->var), a->var->name,
		      shape_str(C, a->var), ta ? " (transposed)" : "",
		      b->var->name, shape_str(C, b->var),
		      tb ? " (transposed)" : "", ta ? "KxM" : "MxK",
		      tb ? "NxK" : "KxN");
}

static void
check_fill(Checker *C, TcStmt *s)
{
	if (!whole_buffer(C, &s->u.fill.dst, "tile_fill", "destination"))
		return;
	check_expr(C, s->u.fill.value);
}

static void
check_reduce(Checker *C, TcStmt *s)
{
	TcRegion *dst = &s->u.reduce.dst, *src = &s->u.reduce.src;
	const char *op = tc_reduce_name(s->u.reduce.op);
	if (!whole_buffer(C, dst, "tile_reduce", "destination") ||
	    !whole_buffer(C, src, "tile_reduce", "source"))
		return;
	int dim = s->u.reduce.dim;
	if (dim < 0 || dim >= src->var->rank) {
		error(C, s->loc, "tile_reduce_%s: dim %d is out of range for "
		      "'%s' (%d dims)", op, dim, src->var->name, src->var->rank);
		return;
	}
	if (dst->var->rank != src->var->rank - 1) {
		error(C, dst->loc, "tile_reduce_%s along dim %d of '%s' (%s) "
		      "gives %d dims, but '%s' has %d", op, dim, src->var->name,
		      shape_str(C, src->var), src->var->rank - 1, dst->var->name,
		      dst->var->rank);
		return;
	}
	for (int i = 0, j = 0; i < src->var->rank; i++) {
		if (i == dim)
			continue;
		if (tc_var_extent(src->var, i) != tc_var_extent(dst->var, j)) {
			error(C, dst->loc, "tile_reduce_%s along dim %d of '%s' "
			      "(%s) does not fit '%s' (%s)", op, dim,
			      src->var->name, shape_str(C, src->var),
			      dst->var->name, shape_str(C, dst->var));
			return;
		}
		j++;
	}
}

/* tile_reduce_argmax / argmin(dst, index, src, dim): three distinct whole
 * buffers; dst and index have src's dims without dim, index an i32 or
 * i64 that holds every index along dim. */
static void
check_arg_reduce(Checker *C, TcStmt *s)
{
	TcRegion *dst = &s->u.arg_reduce.dst, *idx = &s->u.arg_reduce.index,
		 *src = &s->u.arg_reduce.src;
	bool topk = s->u.arg_reduce.topk;
	const char *op = topk ? "tile_reduce_topk" : s->u.arg_reduce.min ?
			 "tile_reduce_argmin" : "tile_reduce_argmax";
	if (!whole_buffer(C, dst, op, "value destination") ||
	    !whole_buffer(C, idx, op, "index destination") ||
	    !whole_buffer(C, src, op, "source"))
		return;
	if (dst->var == idx->var || dst->var == src->var ||
	    idx->var == src->var) {
		/* Point at the later operand of the two. */
		const TcRegion *twice = dst->var == idx->var ? idx : src;
		error(C, twice->loc, "%s needs three different buffers; '%s' "
		      "is named twice", op, twice->var->name);
		return;
	}
	int dim = s->u.arg_reduce.dim;
	const TcVar *sv = src->var;
	if (dim < 0 || dim >= sv->rank) {
		error(C, s->loc, "%s: dim %d is out of range for '%s' (%d dims)",
		      op, dim, sv->name, sv->rank);
		return;
	}
	if (sv->rank < 2 && !topk) {
		error(C, src->loc, "%s along the only dim of '%s' leaves no "
		      "dims for the results; reduce a [1][N] tile along dim 1",
		      op, sv->name);
		return;
	}
	const TcRegion *outs[2] = { dst, idx };
	for (int k = 0; k < 2; k++) {
		const TcVar *ov = outs[k]->var;
		bool fits = ov->rank == sv->rank - !topk;
		for (int i = 0, j = 0; fits && i < sv->rank; i++)
			if (i != dim)
				fits = tc_var_extent(sv, i) == tc_var_extent(ov, j++);
			else if (topk)
				j++;
		if (fits && topk && k == 1 &&
		    tc_var_extent(idx->var, dim) != tc_var_extent(dst->var, dim))
			fits = false;
		if (!fits) {
			error(C, outs[k]->loc, "%s along dim %d of '%s' (%s) does "
			      "not fit '%s' (%s)", op, dim, sv->name,
			      shape_str(C, sv), ov->name, shape_str(C, ov));
			return;
		}
	}
	if (idx->var->dtype != TC_DT_I32 && idx->var->dtype != TC_DT_I64) {
		error(C, idx->loc, "%s's indices go into an i32 or i64 buffer; "
		      "'%s' is %s", op, idx->var->name,
		      tc_dtype_name(idx->var->dtype));
		return;
	}
	if (topk && tc_var_extent(dst->var, dim) > tc_var_extent(sv, dim)) {
		error(C, dst->loc, "%s keeps k = %lld elements ('%s' along dim "
		      "%d) of the %lld along dim %d of '%s'; k must be at most "
		      "the dim's extent", op, tc_var_extent(dst->var, dim),
		      dst->var->name, dim, tc_var_extent(sv, dim), dim, sv->name);
		return;
	}
}

/* --- Statements ------------------------------------------------------------------ */

static void check_stmt(Checker *C, TcStmt *s);

/* A loop counts in integers: its begin, bound and step are integer
 * expressions (C would compare an int counter with a float bound in
 * float; the language keeps loop trip counts exact). */
static bool
loop_bounds_int(Checker *C, const TcStmt *s)
{
	const TcExpr *parts[3] = { s->u.loop.begin, s->u.loop.end,
				   s->u.loop.step };
	static const char *const what[3] = { "start", "bound", "step" };
	for (int i = 0; i < 3; i++) {
		const TcExpr *e = parts[i];
		if (!e || !tc_dtype_is_float(e->dtype))
			continue;
		error(C, e->loc, "the %s of loop '%s' is %s; loop %ss must "
		      "be integers", what[i], s->u.loop.var->name,
		      tc_dtype_name(e->dtype), what[i]);
		return false;
	}
	return true;
}

/* A run-time extent e of parallel loop s reads nothing the loop writes:
 * its value is the same for every iteration (the ragged pass tests it in
 * each). */
typedef struct ExtentRead {
	const TcStmt *loop; /* the loop */
	const TcVar *bad;   /* the first var e reads that the loop writes */
} ExtentRead;

static void
extent_read(void *ctx, const TcVar *v, int how)
{
	ExtentRead *x = ctx;
	if (!x->bad && (how & TC_ROLE_READ) &&
	    (tc_stmt_touches(x->loop->u.loop.body, NULL, v) & TC_ROLE_WRITE))
		x->bad = v;
}

static bool
extent_stays(Checker *C, const TcExpr *e, const TcStmt *s)
{
	ExtentRead x = { s, NULL };
	tc_expr_access(e, extent_read, &x);
	if (!x.bad)
		return true;
	error(C, e->loc, "the extent of tile_parallel loop '%s' reads '%s', "
	      "which the loop writes", s->u.loop.var->name, x.bad->name);
	return false;
}

static void
check_block(Checker *C, TcStmt *b)
{
	for (int i = 0; i < b->u.block.body.len; i++)
		check_stmt(C, b->u.block.body.items[i]);
}

static void
check_assign(Checker *C, TcStmt *s)
{
	TcExpr *dst = s->u.assign.dst;
	check_expr(C, s->u.assign.value);
	if (dst->kind == TC_EX_VAR && dst->u.var->kind == TC_VAR_TUNABLE) {
		error(C, dst->loc, "'%s' is a tunable, a constant: it cannot be "
		      "assigned", dst->u.var->name);
		return;
	}
	if (dst->kind == TC_EX_VAR) {
		TcVar *v = dst->u.var;
		if (C->decl_par[v->index] != C->npar)
			error(C, dst->loc, "'%s' is declared outside this "
			      "tile_parallel loop and assigned inside it: "
			      "iterations would race; declare it inside the loop, "
			      "or keep per-iteration values in a buffer", v->name);
		else
			set_deps(C, v, par_deps(C, s->u.assign.value));
		return;
	}
	TcVar *v = dst->u.load.var;
	for (int i = 0; i < v->rank; i++)
		check_expr(C, dst->u.load.idx[i]);
	check_buffer_index(C, dst);
	if (v->kind == TC_VAR_TENSOR && v->is_const) {
		error(C, dst->loc, "cannot write to '%s': it is declared const",
		      v->name);
		return;
	}
	/* Every enclosing parallel variable must select the element written,
	 * or two iterations would write the same one. */
	unsigned used = 0;
	for (int i = 0; i < v->rank; i++)
		used |= par_deps(C, dst->u.load.idx[i]);
	for (int p = 0; p < C->npar; p++) {
		if (!(used & (1u << p))) {
			error(C, dst->loc, "every iteration of tile_parallel loop "
			      "'%s' writes the same element of '%s': index it by "
			      "'%s', or move the write out of the loop",
			      C->par[p]->name, v->name, C->par[p]->name);
			return;
		}
	}
}

/* --- Reads of what other iterations write ---------------------------------- */

/* The elements a tile_parallel loop's body writes, and the check of its
 * reads against them. */
typedef struct Race {
	Checker *C;
	const TcVar *p;         /* the loop's variable */
	const TcExpr *w[32];    /* the destinations assigned in its body */
	int nw;
	bool reported;          /* one warning a loop */
} Race;

static TcVisit
race_write(void *ctx, const TcStmt *s)
{
	Race *r = ctx;
	if (s->kind == TC_ST_ASSIGN && s->u.assign.dst->kind == TC_EX_LOAD &&
	    r->nw < (int)(sizeof r->w / sizeof *r->w))
		r->w[r->nw++] = s->u.assign.dst;
	return TC_VISIT_INTO;
}

static bool
is_the_var(const TcExpr *e, const TcVar *v)
{
	return e->kind == TC_EX_VAR && e->u.var == v;
}

/* A read of an element that another iteration may write: some write of
 * the same buffer or tensor selects by the loop's variable itself in a
 * dim where the read selects by anything else. */
static TcVisit
race_read(void *ctx, const TcExpr *e)
{
	Race *r = ctx;
	if (r->reported || e->kind != TC_EX_LOAD)
		return TC_VISIT_INTO;
	for (int i = 0; i < r->nw; i++)
		if (r->w[i] == e)
			return TC_VISIT_INTO; /* a destination, not a read */
	for (int i = 0; i < r->nw; i++) {
		const TcExpr *w = r->w[i];
		if (w->u.load.var != e->u.load.var)
			continue;
		for (int d = 0; d < w->u.load.var->rank; d++) {
			if (!is_the_var(w->u.load.idx[d], r->p) ||
			    is_the_var(e->u.load.idx[d], r->p))
				continue;
			tc_diag(r->C->d, TC_WARNING, e->loc, "this reads an "
				"element of '%s' that another iteration of "
				"tile_parallel loop '%s' may write (the "
				"assignment at %d:%d): iterations run "
				"concurrently, so what it reads depends on their "
				"order; read it in a loop after this one",
				e->u.load.var->name, r->p->name, w->loc.line,
				w->loc.col);
			r->reported = true;
			return TC_VISIT_STOP;
		}
	}
	return TC_VISIT_INTO;
}

static void
check_races(Checker *C, const TcStmt *loop)
{
	if (C->quiet)
		return;
	Race r = { .C = C, .p = loop->u.loop.var };
	TcVisitor vw = { .stmt = race_write, .ctx = &r };
	tc_stmt_visit(loop->u.loop.body, &vw);
	if (!r.nw)
		return;
	TcVisitor vr = { .expr = race_read, .ctx = &r };
	tc_stmt_visit(loop->u.loop.body, &vr);
}

/* A serial loop's body runs with the deps that hold at its head on every
 * iteration: the entry's, met with what each pass through the body
 * leaves, to a fixed point (deps only shrink, so this ends), found
 * quietly before the body is checked once with reporting on.  Outside
 * tile_parallel loops nothing depends on a parallel variable and one
 * pass suffices. */
static void
check_serial_body(Checker *C, TcStmt *s)
{
	set_deps(C, s->u.loop.var, par_deps(C, s->u.loop.begin));
	if (C->npar > 0) {
		bool quiet = C->quiet;
		C->quiet = true;
		for (;;) {
			unsigned *head = deps_save(C);
			check_block(C, s->u.loop.body);
			unsigned *out = deps_save(C);
			memcpy(C->deps, head, sizeof *head * (size_t)C->nvars);
			if (!deps_meet(C, out))
				break;
		}
		C->quiet = quiet;
	}
	unsigned *head = deps_save(C);
	C->guarded++; /* a body that may run no trips */
	check_block(C, s->u.loop.body);
	C->guarded--;
	/* Zero trips leave the head's deps; more leave the body's. */
	deps_meet(C, head);
}

static void
check_stmt(Checker *C, TcStmt *s)
{
	bool tile_op = s->kind == TC_ST_COPY || s->kind == TC_ST_GEMM ||
		       s->kind == TC_ST_FILL || s->kind == TC_ST_REDUCE ||
		       s->kind == TC_ST_REDUCE_ALL || s->kind == TC_ST_ARG_REDUCE ||
		       s->kind == TC_ST_ATOMIC_ADD;
	if (tile_op && C->npar > 0) {
		error(C, s->loc, "tile operations act on whole tiles and cannot "
		      "be inside tile_parallel loop '%s'", C->par[C->npar - 1]->name);
		return;
	}
	switch (s->kind) {
	case TC_ST_GEMM:
		if (!not_ragged(C, &s->u.gemm.c, "tile_gemm") ||
		    !not_ragged(C, &s->u.gemm.a, "tile_gemm") ||
		    !not_ragged(C, &s->u.gemm.b, "tile_gemm"))
			return;
		break;
	case TC_ST_FILL:
		if (!not_ragged(C, &s->u.fill.dst, "tile_fill"))
			return;
		break;
	case TC_ST_REDUCE:
		if (!not_ragged(C, &s->u.reduce.dst, "a reduction") ||
		    !not_ragged(C, &s->u.reduce.src, "a reduction"))
			return;
		break;
	case TC_ST_REDUCE_ALL:
		if (!not_ragged(C, &s->u.reduce_all.src, "a reduction"))
			return;
		break;
	case TC_ST_ARG_REDUCE:
		if (!not_ragged(C, &s->u.arg_reduce.dst, "an arg-reduction") ||
		    !not_ragged(C, &s->u.arg_reduce.index, "an arg-reduction") ||
		    !not_ragged(C, &s->u.arg_reduce.src, "an arg-reduction"))
			return;
		break;
	default:
		break;
	}
	switch (s->kind) {
	case TC_ST_BLOCK:
		check_block(C, s);
		break;
	case TC_ST_DECL: {
		TcVar *v = s->u.decl.var;
		if (v->kind == TC_VAR_BUFFER && C->npar > 0) {
			error(C, s->loc, "buffer '%s' is declared inside a "
			      "tile_parallel loop; declare buffers at block level",
			      v->name);
			break;
		}
		if (v->kind == TC_VAR_LOCAL) {
			C->decl_par[v->index] = C->npar;
			set_deps(C, v, par_deps(C, s->u.decl.init));
		}
		if (s->u.decl.init)
			check_expr(C, s->u.decl.init);
		break;
	}
	case TC_ST_ASSIGN:
		check_assign(C, s);
		break;
	case TC_ST_FOR: {
		TcLoopKind kind = s->u.loop.kind;
		check_expr(C, s->u.loop.begin);
		check_expr(C, s->u.loop.end);
		check_expr(C, s->u.loop.step);
		if (!loop_bounds_int(C, s))
			break;
		if (kind == TC_LOOP_PIPELINED && C->npar > 0) {
			error(C, s->loc, "tile_pipelined cannot be inside a "
			      "tile_parallel loop");
			break;
		}
		if (kind == TC_LOOP_PARALLEL) {
			long long c;
			const TcExpr *rest = tc_parallel_bound(s->u.loop.end, &c);
			if (rest && !extent_stays(C, rest, s))
				break;
			if ((size_t)C->npar == sizeof C->par / sizeof *C->par) {
				error(C, s->loc, "tile_parallel loops nest too deep");
				break;
			}
			long long first = 0, end = 0;
			C->par_last[C->npar] = !rest &&
				tc_expr_const(s->u.loop.end, &end) &&
				(!s->u.loop.begin ||
				 tc_expr_const(s->u.loop.begin, &first)) &&
				first == 0 ? end - 1 : -1;
			C->par[C->npar++] = s->u.loop.var;
			check_block(C, s->u.loop.body);
			C->npar--;
			check_races(C, s);
		} else {
			if (s->u.loop.step) {
				long long st;
				if (tc_expr_const(s->u.loop.step, &st) && st <= 0)
					error(C, s->u.loop.step->loc, "loop step "
					      "must be positive");
			}
			check_serial_body(C, s);
		}
		break;
	}
	case TC_ST_IF: {
		check_expr(C, s->u.cond.cond);
		unsigned *before = deps_save(C);
		C->guarded++;
		check_block(C, s->u.cond.then);
		unsigned *after_then = deps_save(C);
		memcpy(C->deps, before, sizeof *before * (size_t)C->nvars);
		if (s->u.cond.els)
			check_block(C, s->u.cond.els);
		C->guarded--;
		deps_meet(C, after_then);
		break;
	}
	case TC_ST_COPY:
	case TC_ST_ATOMIC_ADD:
		check_copy(C, s);
		break;
	case TC_ST_GEMM:
		check_gemm(C, s);
		break;
	case TC_ST_FILL:
		check_fill(C, s);
		break;
	case TC_ST_REDUCE:
		check_reduce(C, s);
		break;
	case TC_ST_REDUCE_ALL:
		/* A block-level value: uniform over the block. */
		set_deps(C, s->u.reduce_all.dst, 0);
		break;
	case TC_ST_ARG_REDUCE:
		check_arg_reduce(C, s);
		break;
	default:
		tc_unreachable();
	}
}

static void
check_kernel(Checker *C, TcKernel *k)
{
	const unsigned launch_ok = (1u << TC_VAR_SCALAR) | (1u << TC_VAR_TUNABLE);
	C->k = k;
	C->npar = 0;
	C->nvars = k->vars.len;
	C->decl_par = tc_alloc(C->a, sizeof(int) * (size_t)(k->vars.len + 1));
	C->deps = tc_alloc(C->a, sizeof(unsigned) * (size_t)(k->vars.len + 1));
	memset(C->deps, 0, sizeof(unsigned) * (size_t)(k->vars.len + 1));
	for (int i = 0; i < k->params.len; i++) {
		TcVar *v = k->params.items[i];
		for (int j = 0; j < v->rank; j++)
			if (uses_only(C, v->shape[j], launch_ok, "a tensor extent"))
				launch_computable(C, v->shape[j], "a tensor extent");
	}
	static const char *const dim_names[3] = { "x", "y", "z" };
	for (int d = 0; d < 3; d++) {
		if (!k->grid[d])
			continue;
		char what[32];
		snprintf(what, sizeof what, "the grid extent along %s",
			 dim_names[d]);
		if (uses_only(C, k->grid[d], launch_ok, what))
			launch_computable(C, k->grid[d], what);
	}
	if (k->threads)
		uses_only(C, k->threads, 1u << TC_VAR_TUNABLE, "the thread count");
	if (k->rasterize)
		uses_only(C, k->rasterize, 1u << TC_VAR_TUNABLE,
			  "the rasterization group");
	check_block(C, k->body);
}

bool
tc_check(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d)
{
	(void)opt;
	Checker C = { .a = a, .d = d };
	int before = d->errors;
	for (int i = 0; i < p->kernels.len; i++)
		check_kernel(&C, p->kernels.items[i]);
	return d->errors == before;
}
