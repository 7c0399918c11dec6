/*
 * layout.c - layout inference for GPU targets: which thread holds which
 * element of each fragment.
 *
 * Input: a checked, specialized program.  Output: every fragment and local
 * buffer has var->layout set, and every tile_parallel loop that walks an
 * MMA fragment has loop.anchor / anchor_dim set.
 *
 * Two layouts exist today:
 *
 *   MMA   registers, in the accumulator layout of mma.sync m16n8k16: the
 *         block's warps form a warps_m x warps_n grid over the tile, each
 *         warp owns tiles_m x tiles_n m16n8 tiles, each thread 4 elements
 *         of each (rows lane/4 and lane/4 + 8, columns 2*(lane%4) + 0/1).
 *   SMEM  shared memory: any thread reaches any element.
 *
 * A tile_gemm accumulator (f32, f16/bf16 operands, shapes multiples of the
 * instruction) starts as MMA.  It stays MMA only if every use can be done
 * by the threads that own the elements: fills, copies, being gemm's C,
 * reductions, and tile_parallel nests that index it exactly by their loop
 * variables (F[i][j] inside tile_parallel(i, M) tile_parallel(j, N)).  Such
 * a nest then follows F's layout: each thread visits the rows and columns
 * it owns (the row loop runs redundantly in the threads sharing a row).
 * Any other use demotes F to SMEM; every other fragment is SMEM.  SMEM is
 * always correct; MMA is what makes gemm-heavy kernels fast.
 *
 * All MMA fragments of a kernel share one warp grid so that a row loop
 * visits the same rows in each of them.
 */
#include "tilec_int.h"

#include <string.h>

typedef struct Layouter {
	TcKernel *k;      /* the kernel */
	int warps;        /* warps per block */
	bool changed;     /* a demotion happened in this sweep */
	bool row_reduce;  /* some MMA fragment is reduced along its rows */
} Layouter;

static long long
ext(const TcVar *v, int i)
{
	long long n = 0;
	tc_expr_const(v->shape[i], &n);
	return n;
}

static bool
is_mma(const TcVar *v)
{
	return v && v->kind == TC_VAR_BUFFER && v->layout.kind == TC_LAYOUT_MMA;
}

static void
demote(Layouter *L, TcVar *v)
{
	if (is_mma(v)) {
		v->layout.kind = TC_LAYOUT_SMEM;
		L->changed = true;
	}
}

/* --- Candidates ------------------------------------------------------------- */

static void
candidates(Layouter *L, TcStmt *s)
{
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++)
			candidates(L, s->u.block.body.items[i]);
		break;
	case TC_ST_FOR:
		candidates(L, s->u.loop.body);
		break;
	case TC_ST_IF:
		candidates(L, s->u.cond.then);
		if (s->u.cond.els)
			candidates(L, s->u.cond.els);
		break;
	case TC_ST_GEMM: {
		TcVar *c = s->u.gemm.c.var, *a = s->u.gemm.a.var;
		bool ok = c->scope == TC_SCOPE_FRAGMENT &&
			  c->dtype == TC_DT_F32 &&
			  (a->dtype == TC_DT_F16 || a->dtype == TC_DT_BF16) &&
			  ext(c, 0) % 16 == 0 && ext(c, 1) % 8 == 0 &&
			  ext(a, s->u.gemm.trans_a ? 0 : 1) % 16 == 0;
		if (ok && c->layout.kind == TC_LAYOUT_SMEM)
			c->layout.kind = TC_LAYOUT_MMA;
		break;
	}
	default:
		break;
	}
}

/* --- Uses that MMA fragments allow ------------------------------------------- */

/* Is e exactly the loop var of an enclosing parallel loop? */
static TcStmt *
par_loop_of(TcStmt **par, int npar, const TcExpr *e)
{
	if (e->kind != TC_EX_VAR)
		return NULL;
	for (int i = npar - 1; i >= 0; i--)
		if (par[i]->u.loop.var == e->u.var)
			return par[i];
	return NULL;
}

typedef struct Walk {
	Layouter *L;
	TcStmt *par[16]; /* enclosing parallel loops, outermost first */
	int npar;
} Walk;

/* An element access F[a][b] of an MMA fragment inside parallel loops:
 * allowed when a and b are the vars of loops over F's rows and columns,
 * the column loop inside the row loop. */
static void
element_use(Walk *W, TcVar *f, TcExpr *const *idx, bool write)
{
	(void)write;
	if (!is_mma(f))
		return;
	TcStmt *row = W->npar ? par_loop_of(W->par, W->npar, idx[0]) : NULL;
	TcStmt *col = W->npar ? par_loop_of(W->par, W->npar, idx[1]) : NULL;
	bool ok = row && col && row != col;
	if (ok) {
		long long re = 0, ce = 0;
		tc_expr_const(row->u.loop.end, &re);
		tc_expr_const(col->u.loop.end, &ce);
		ok = re == ext(f, 0) && ce == ext(f, 1);
	}
	/* The row loop must enclose the column loop. */
	if (ok) {
		int ri = -1, ci = -1;
		for (int i = 0; i < W->npar; i++) {
			if (W->par[i] == row)
				ri = i;
			if (W->par[i] == col)
				ci = i;
		}
		ok = ri < ci;
	}
	if (!ok)
		demote(W->L, f);
}

static void walk_expr(Walk *W, TcExpr *e);

static void
walk_expr(Walk *W, TcExpr *e)
{
	if (!e)
		return;
	switch (e->kind) {
	case TC_EX_BINARY:
		walk_expr(W, e->u.bin.lhs);
		walk_expr(W, e->u.bin.rhs);
		break;
	case TC_EX_UNARY:
		walk_expr(W, e->u.un.arg);
		break;
	case TC_EX_SELECT:
		walk_expr(W, e->u.sel.cond);
		walk_expr(W, e->u.sel.then);
		walk_expr(W, e->u.sel.els);
		break;
	case TC_EX_CALL:
		for (int i = 0; i < e->u.call.nargs; i++)
			walk_expr(W, e->u.call.args[i]);
		break;
	case TC_EX_CAST:
		walk_expr(W, e->u.cast.arg);
		break;
	case TC_EX_LOAD:
		for (int i = 0; i < e->u.load.var->rank; i++)
			walk_expr(W, e->u.load.idx[i]);
		if (e->u.load.var->kind == TC_VAR_BUFFER)
			element_use(W, e->u.load.var, e->u.load.idx, false);
		break;
	default:
		break;
	}
}

static void
walk(Walk *W, TcStmt *s)
{
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++)
			walk(W, s->u.block.body.items[i]);
		break;
	case TC_ST_DECL:
		walk_expr(W, s->u.decl.init);
		break;
	case TC_ST_ASSIGN:
		walk_expr(W, s->u.assign.value);
		if (s->u.assign.dst->kind == TC_EX_LOAD) {
			TcExpr *d = s->u.assign.dst;
			for (int i = 0; i < d->u.load.var->rank; i++)
				walk_expr(W, d->u.load.idx[i]);
			if (d->u.load.var->kind == TC_VAR_BUFFER)
				element_use(W, d->u.load.var, d->u.load.idx, true);
		}
		break;
	case TC_ST_FOR:
		walk_expr(W, s->u.loop.begin);
		walk_expr(W, s->u.loop.end);
		if (s->u.loop.kind == TC_LOOP_PARALLEL &&
		    W->npar < (int)(sizeof W->par / sizeof *W->par)) {
			W->par[W->npar++] = s;
			walk(W, s->u.loop.body);
			W->npar--;
		} else {
			walk(W, s->u.loop.body);
		}
		break;
	case TC_ST_IF:
		walk_expr(W, s->u.cond.cond);
		walk(W, s->u.cond.then);
		if (s->u.cond.els)
			walk(W, s->u.cond.els);
		break;
	case TC_ST_GEMM:
		/* As an operand, a fragment is read through shared memory. */
		demote(W->L, s->u.gemm.a.var);
		demote(W->L, s->u.gemm.b.var);
		break;
	case TC_ST_REDUCE:
		demote(W->L, s->u.reduce.dst.var);
		if (is_mma(s->u.reduce.src.var) && s->u.reduce.dim == 1)
			W->L->row_reduce = true;
		break;
	case TC_ST_COPY:
	case TC_ST_ATOMIC_ADD:
		/* A region of an MMA fragment (not the whole) is not held by
		 * the right threads. */
		if (!s->u.copy.dst.whole)
			demote(W->L, s->u.copy.dst.var);
		if (!s->u.copy.src.whole)
			demote(W->L, s->u.copy.src.var);
		break;
	default:
		break;
	}
}

/* --- Warp grid ------------------------------------------------------------------ */

static bool
grid_fits(Layouter *L, int wm, int wn)
{
	for (int i = 0; i < L->k->vars.len; i++) {
		TcVar *v = L->k->vars.items[i];
		if (is_mma(v) && (ext(v, 0) % (16 * wm) || ext(v, 1) % (8 * wn)))
			return false;
	}
	return true;
}

/* Choose warps_m x warps_n = warps: rows only when some fragment is reduced
 * along rows (the reduction then stays inside a warp), otherwise the most
 * square warp tiles. */
static void
choose_grid(Layouter *L)
{
	TcVar *first = NULL;
	for (int i = 0; i < L->k->vars.len && !first; i++)
		if (is_mma(L->k->vars.items[i]))
			first = L->k->vars.items[i];
	if (!first)
		return;
	int best_m = 0;
	long long best_cost = -1;
	for (int wm = 1; wm <= L->warps; wm *= 2) {
		int wn = L->warps / wm;
		if (wm * wn != L->warps || !grid_fits(L, wm, wn))
			continue;
		long long tm = ext(first, 0) / wm, tn = ext(first, 1) / wn;
		/* Per k-step, a warp reads tm + tn operand rows. */
		long long cost = tm + tn + (L->row_reduce && wn > 1 ? 1 << 20 : 0);
		if (best_cost < 0 || cost < best_cost) {
			best_cost = cost;
			best_m = wm;
		}
	}
	for (int i = 0; i < L->k->vars.len; i++) {
		TcVar *v = L->k->vars.items[i];
		if (!is_mma(v))
			continue;
		if (!best_m) {
			v->layout.kind = TC_LAYOUT_SMEM;
			continue;
		}
		v->layout.warps_m = best_m;
		v->layout.warps_n = L->warps / best_m;
		v->layout.tiles_m = (int)(ext(v, 0) / (16 * v->layout.warps_m));
		v->layout.tiles_n = (int)(ext(v, 1) / (8 * v->layout.warps_n));
	}
}

/* --- Anchoring parallel loops ------------------------------------------------------ */

static void
anchor_expr(TcStmt **par, int npar, const TcExpr *e)
{
	if (!e)
		return;
	switch (e->kind) {
	case TC_EX_BINARY:
		anchor_expr(par, npar, e->u.bin.lhs);
		anchor_expr(par, npar, e->u.bin.rhs);
		break;
	case TC_EX_UNARY:
		anchor_expr(par, npar, e->u.un.arg);
		break;
	case TC_EX_SELECT:
		anchor_expr(par, npar, e->u.sel.cond);
		anchor_expr(par, npar, e->u.sel.then);
		anchor_expr(par, npar, e->u.sel.els);
		break;
	case TC_EX_CALL:
		for (int i = 0; i < e->u.call.nargs; i++)
			anchor_expr(par, npar, e->u.call.args[i]);
		break;
	case TC_EX_CAST:
		anchor_expr(par, npar, e->u.cast.arg);
		break;
	case TC_EX_LOAD:
		if (is_mma(e->u.load.var))
			for (int d = 0; d < 2; d++) {
				TcStmt *l = par_loop_of(par, npar, e->u.load.idx[d]);
				if (l && !l->u.loop.anchor) {
					l->u.loop.anchor = e->u.load.var;
					l->u.loop.anchor_dim = d;
				}
			}
		break;
	default:
		break;
	}
}

static void
anchor(TcStmt **par, int npar, TcStmt *s)
{
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++)
			anchor(par, npar, s->u.block.body.items[i]);
		break;
	case TC_ST_DECL:
		anchor_expr(par, npar, s->u.decl.init);
		break;
	case TC_ST_ASSIGN:
		anchor_expr(par, npar, s->u.assign.dst);
		anchor_expr(par, npar, s->u.assign.value);
		break;
	case TC_ST_FOR:
		if (s->u.loop.kind == TC_LOOP_PARALLEL && npar < 16) {
			par[npar] = s;
			anchor(par, npar + 1, s->u.loop.body);
		} else {
			anchor(par, npar, s->u.loop.body);
		}
		break;
	case TC_ST_IF:
		anchor_expr(par, npar, s->u.cond.cond);
		anchor(par, npar, s->u.cond.then);
		if (s->u.cond.els)
			anchor(par, npar, s->u.cond.els);
		break;
	default:
		break;
	}
}

/* Buffers written by statements directly in a row loop (not in a column
 * loop) are written once per row by one thread of those sharing the row;
 * the others must not read them in the same nest, or they would race with
 * that write.  Collects such writes, then looks for other reads. */
static bool
reads_var(const TcExpr *e, const TcVar *v)
{
	if (!e)
		return false;
	switch (e->kind) {
	case TC_EX_BINARY: return reads_var(e->u.bin.lhs, v) || reads_var(e->u.bin.rhs, v);
	case TC_EX_UNARY: return reads_var(e->u.un.arg, v);
	case TC_EX_SELECT:
		return reads_var(e->u.sel.cond, v) || reads_var(e->u.sel.then, v) ||
		       reads_var(e->u.sel.els, v);
	case TC_EX_CALL:
		for (int i = 0; i < e->u.call.nargs; i++)
			if (reads_var(e->u.call.args[i], v))
				return true;
		return false;
	case TC_EX_CAST: return reads_var(e->u.cast.arg, v);
	case TC_EX_LOAD:
		if (e->u.load.var == v)
			return true;
		for (int i = 0; i < e->u.load.var->rank; i++)
			if (reads_var(e->u.load.idx[i], v))
				return true;
		return false;
	default: return false;
	}
}

/* Does any statement in s other than `except` read v? */
static bool
stmt_reads(const TcStmt *s, const TcVar *v, const TcStmt *except)
{
	if (s == except)
		return false;
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++)
			if (stmt_reads(s->u.block.body.items[i], v, except))
				return true;
		return false;
	case TC_ST_DECL: return reads_var(s->u.decl.init, v);
	case TC_ST_ASSIGN:
		return reads_var(s->u.assign.value, v) ||
		       (s->u.assign.dst->kind == TC_EX_LOAD &&
			s->u.assign.dst->u.load.var != v &&
			reads_var(s->u.assign.dst, v));
	case TC_ST_FOR:
		return reads_var(s->u.loop.end, v) ||
		       stmt_reads(s->u.loop.body, v, except);
	case TC_ST_IF:
		return reads_var(s->u.cond.cond, v) ||
		       stmt_reads(s->u.cond.then, v, except) ||
		       (s->u.cond.els && stmt_reads(s->u.cond.els, v, except));
	default: return false;
	}
}

static bool
row_writes_private(const TcStmt *row)
{
	const TcVec *body = &row->u.loop.body->u.block.body;
	for (int i = 0; i < body->len; i++) {
		const TcStmt *s = body->items[i];
		if (s->kind != TC_ST_ASSIGN || s->u.assign.dst->kind != TC_EX_LOAD)
			continue;
		const TcVar *v = s->u.assign.dst->u.load.var;
		if (!is_mma(v) && stmt_reads(row->u.loop.body, v, s))
			return false;
	}
	return true;
}

/* A parallel loop nested in an anchored one must be anchored too (a thread
 * only visits its own rows); a column loop needs an enclosing row loop over
 * as many rows; row-level writes must not be read by other statements. */
static bool
anchors_consistent(TcStmt *s, TcStmt *row, bool spread)
{
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++)
			if (!anchors_consistent(s->u.block.body.items[i], row,
						spread))
				return false;
		return true;
	case TC_ST_FOR: {
		bool anchored = s->u.loop.kind == TC_LOOP_PARALLEL &&
				s->u.loop.anchor;
		if (s->u.loop.kind == TC_LOOP_PARALLEL && row && !anchored)
			return false;
		if (anchored && spread)
			return false; /* owned rows inside a spread loop */
		if (anchored && s->u.loop.anchor_dim == 1 &&
		    (!row || ext(row->u.loop.anchor, 0) !=
			     ext(s->u.loop.anchor, 0)))
			return false;
		if (anchored && s->u.loop.anchor_dim == 0) {
			if (row)
				return false; /* two row loops in one nest */
			if (!row_writes_private(s))
				return false;
			return anchors_consistent(s->u.loop.body, s, spread);
		}
		return anchors_consistent(s->u.loop.body, row, spread ||
					  (s->u.loop.kind == TC_LOOP_PARALLEL &&
					   !anchored));
	}
	case TC_ST_IF:
		return anchors_consistent(s->u.cond.then, row, spread) &&
		       (!s->u.cond.els ||
			anchors_consistent(s->u.cond.els, row, spread));
	default:
		return true;
	}
}

static void
clear_anchors(TcStmt *s)
{
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++)
			clear_anchors(s->u.block.body.items[i]);
		break;
	case TC_ST_FOR:
		s->u.loop.anchor = NULL;
		s->u.loop.anchor_dim = 0;
		clear_anchors(s->u.loop.body);
		break;
	case TC_ST_IF:
		clear_anchors(s->u.cond.then);
		if (s->u.cond.els)
			clear_anchors(s->u.cond.els);
		break;
	default:
		break;
	}
}

static void
layout_kernel(TcKernel *k)
{
	long long threads = 128;
	if (k->threads)
		tc_expr_const(k->threads, &threads);
	Layouter L = { .k = k, .warps = (int)(threads / 32) };
	for (int i = 0; i < k->vars.len; i++) {
		TcVar *v = k->vars.items[i];
		if (v->kind == TC_VAR_BUFFER && v->scope != TC_SCOPE_SHARED)
			v->layout.kind = TC_LAYOUT_SMEM;
	}
	if (L.warps < 1 || threads % 32)
		return; /* no MMA layouts without whole warps */
	candidates(&L, k->body);
	do {
		L.changed = false;
		L.row_reduce = false;
		Walk W = { .L = &L };
		walk(&W, k->body);
	} while (L.changed);
	choose_grid(&L);
	TcStmt *par[16];
	clear_anchors(k->body);
	anchor(par, 0, k->body);
	if (!anchors_consistent(k->body, NULL, false)) {
		/* A nest mixes owned and spread loops: keep it simple and
		 * correct, all fragments in shared memory. */
		for (int i = 0; i < k->vars.len; i++)
			demote(&L, k->vars.items[i]);
		clear_anchors(k->body);
	}
}

bool
tc_layout(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d)
{
	(void)a;
	(void)d;
	if (opt->target.kind == TC_TARGET_OPENMP)
		return true;
	for (int i = 0; i < p->kernels.len; i++)
		layout_kernel(p->kernels.items[i]);
	return true;
}
