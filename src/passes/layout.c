/*
 * layout.c - layout inference for GPU targets: which thread holds which
 * element of each fragment.
 *
 * Input: a checked, specialized program.  Output: every fragment and local
 * buffer has var->layout set; every tile_parallel loop that walks register
 * fragments has loop.anchor / anchor_dim set (the loop then visits, in
 * each thread, the indices that thread holds), and every other one
 * loop.threads: spread over the block's threads, or run serially by the
 * thread that runs the spread iteration around it (map_threads).
 *
 * A fragment lives in registers when every use can be served by the
 * threads that hold its elements: fills, copies, reductions, being a
 * tile_gemm accumulator (or, with one warp column, its A operand), and
 * element accesses F[i][j] whose indices are the variables of enclosing
 * tile_parallel loops.  Anything else (an element read at block level, an
 * index that is not a loop variable, a gemm B operand, ...) puts it in
 * shared memory (SMEM), which is always correct.
 *
 * Each dim of a register fragment has a distribution class (TcDist).
 * Uses unify classes: F[i][j] puts F's dim 0 in the class of loop i and
 * dim 1 in that of loop j; a reduction puts the result's dim in the class
 * of the source's kept dim; a copy between fragments unifies them dim by
 * dim; gemm puts C's dims in MMA classes (and A's rows with C's).  Then:
 *
 *   MMA      classes touching a gemm accumulator: the m16n8 accumulator
 *            layout of mma.sync on a warps_m x warps_n warp grid shared by
 *            the whole kernel (on HIP: MFMA, the 16x16 accumulator of
 *            v_mfma_f32_16x16x16 on 64-lane waves; see "Matrix
 *            instructions" below);
 *   BLOCKED  the others: the block's threads form a tr x tc grid; rows go
 *            round-robin over tr, columns in runs of `vec` round-robin over
 *            tc (so a row's columns come in as wide coalesced loads).
 *
 * A class that would need both, or two extents, or to spread like rows and
 * like columns at once, sends its fragments to SMEM, and inference starts
 * again.  All classes joined through 2-dim fragments share one thread grid.
 */
#include "ir/tilec_int.h"

#include <string.h>

/* --- Matrix instructions of the GPU targets --------------------------------
 * A gemm accumulator is spread like the accumulator of the target's warp
 * matrix instruction (TcTarget.mma, target.c), one instruction tile
 * repeated over a warp's tiles.  Everything else here is the same for
 * every SIMT target, with warps of the target's width. */

/* --- Classes: union-find over (fragment, dim) and loop variables ----------- */

typedef struct Class {
	int parent;       /* union-find parent */
	long long extent; /* elements along it; 0 while unknown */
	int axis;         /* 0 rows, 1 columns, -1 unknown */
	bool mma;         /* holds a gemm accumulator (or A operand) dim */
	bool conflict;    /* contradictory constraints */
} Class;

typedef struct Layouter {
	TcArena *a;
	TcKernel *k;
	int threads;        /* threads per block */
	int warps;          /* warps per block */
	int warp_size;      /* lanes per warp on the target */
	const TcMatrixInsn *mi; /* the target's matrix instruction, or NULL */
	Class *cls;         /* classes, indexed by node */
	int ncls;           /* nodes in use */
	int *frag_node;     /* var->index -> first node of its dims, -1 */
	int *loop_node;     /* var->index of a LOOP var -> node, -1 */
	bool *spill;        /* var->index: must live in shared memory */
	bool changed;       /* a spill happened during this sweep */
	bool a_in_regs;     /* some gemm reads A from registers */
	/* The first such gemm's A and where it is, for a note. */
	TcVar *reg_a;
	TcLoc reg_a_at;
	bool row_reduce;    /* some MMA fragment is reduced along its rows */
	int warps_m, warps_n; /* the MMA warp grid (wgmma: warpgroups) */
	int min_chunk;      /* wgmma: the fewest columns one instruction may
			       take (16; a gemm with an N-major B asks
			       more, gemm_min_chunk); 0 otherwise */
} Layouter;

static int
find(Layouter *L, int n)
{
	while (L->cls[n].parent != n)
		n = L->cls[n].parent = L->cls[L->cls[n].parent].parent;
	return n;
}

static void
unite(Layouter *L, int x, int y)
{
	x = find(L, x);
	y = find(L, y);
	if (x == y)
		return;
	Class *a = &L->cls[x], *b = &L->cls[y];
	if (a->extent && b->extent && a->extent != b->extent)
		a->conflict = true;
	if (!a->extent)
		a->extent = b->extent;
	if (a->axis >= 0 && b->axis >= 0 && a->axis != b->axis)
		a->conflict = true;
	if (a->axis < 0)
		a->axis = b->axis;
	a->mma |= b->mma;
	a->conflict |= b->conflict;
	b->parent = x;
}

static bool
is_candidate(const TcVar *v)
{
	return v->kind == TC_VAR_BUFFER && v->scope != TC_SCOPE_SHARED &&
	       v->rank <= 2 && tc_dtype_storage_bits(v->dtype) >= 8;
}

/* The node of fragment v's dim d, or -1 if v is not in registers. */
static int
node(Layouter *L, const TcVar *v, int d)
{
	if (v->kind != TC_VAR_BUFFER || L->frag_node[v->index] < 0 ||
	    L->spill[v->index])
		return -1;
	return L->frag_node[v->index] + d;
}

/* v moves to shared memory; `why` (a clause, "it is ...") and the use at
 * `at` are recorded for the notes (the first reason only). */
static void
spill(Layouter *L, TcVar *v, TcLoc at, const char *why)
{
	if (v->kind == TC_VAR_BUFFER && L->frag_node[v->index] >= 0 &&
	    !L->spill[v->index]) {
		L->spill[v->index] = true;
		L->changed = true;
		v->smem_why = why;
		v->smem_why_loc = at;
	}
}

/* "line:col" of a location in the program, for the reasons. */
static const char *
at_text(Layouter *L, TcLoc loc)
{
	return tc_fmt(L->a, "%d:%d", loc.line, loc.col);
}

/* --- Constraints from uses ------------------------------------------------------ */

typedef struct Walk {
	Layouter *L;
	TcStmt *par[16]; /* enclosing parallel loops, outermost first */
	int npar;
	TcLoc at;        /* the statement being walked */
} Walk;

static bool
is_par_var(const Walk *W, const TcExpr *e)
{
	if (e->kind != TC_EX_VAR)
		return false;
	for (int i = 0; i < W->npar; i++)
		if (W->par[i]->u.loop.var == e->u.var)
			return true;
	return false;
}

/* F[idx...] inside parallel loops: each index a distinct loop variable. */
static void
element_use(Walk *W, TcVar *f, TcExpr *const *idx, TcLoc where)
{
	Layouter *L = W->L;
	if (node(L, f, 0) < 0)
		return;
	bool ok = true;
	for (int d = 0; d < f->rank && ok; d++)
		ok = is_par_var(W, idx[d]);
	if (ok && f->rank == 2)
		ok = idx[0]->u.var != idx[1]->u.var;
	if (!ok) {
		TcLoc at = where.line ? where : W->at;
		spill(L, f, at, tc_fmt(L->a, W->npar == 0 ?
		      "an element of it is read or written outside "
		      "tile_parallel at %s" :
		      "an element of it is indexed at %s by something other "
		      "than one distinct enclosing tile_parallel variable per "
		      "dim", at_text(L, at)));
		return;
	}
	for (int d = 0; d < f->rank; d++)
		unite(L, node(L, f, d), L->loop_node[idx[d]->u.var->index]);
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
	case TC_EX_UNARY: walk_expr(W, e->u.un.arg); break;
	case TC_EX_SELECT:
		walk_expr(W, e->u.sel.cond);
		walk_expr(W, e->u.sel.then);
		walk_expr(W, e->u.sel.els);
		break;
	case TC_EX_CALL:
		for (int i = 0; i < e->u.call.nargs; i++)
			walk_expr(W, e->u.call.args[i]);
		break;
	case TC_EX_CAST: walk_expr(W, e->u.cast.arg); break;
	case TC_EX_LOAD:
		for (int i = 0; i < e->u.load.var->rank; i++)
			walk_expr(W, e->u.load.idx[i]);
		if (e->u.load.var->kind == TC_VAR_BUFFER)
			element_use(W, e->u.load.var, e->u.load.idx, e->loc);
		break;
	default:
		break;
	}
}

/* The form of the target's matrix instruction that serves gemm s: its
 * operand and accumulator dtypes, M, N and K multiples of the
 * instruction's tile; NULL if none does. */
static const TcMatrixForm *
mma_form(const Layouter *L, const TcStmt *s)
{
	const TcVar *c = s->u.gemm.c.var, *a = s->u.gemm.a.var;
	const TcMatrixForm *f = tc_matrix_form(L->mi, a->dtype, c->dtype);
	if (!f || c->rank != 2 || tc_var_extent(c, 0) % L->mi->m != 0 ||
	    tc_var_extent(c, 1) % L->mi->n != 0 ||
	    tc_var_extent(a, s->u.gemm.trans_a ? 0 : 1) % f->k != 0)
		return NULL;
	return f;
}

/* What the target's matrix instruction takes, for the notes: "f16 or bf16
 * operands into an f32 accumulator with K a multiple of 16, or i8 ...". */
static const char *
forms_text(const Layouter *L)
{
	TcBuf b;
	tc_buf_init(&b);
	for (int i = 0; i < L->mi->nforms; i++) {
		const TcMatrixForm *f = &L->mi->forms[i];
		tc_buf_puts(&b, i == 0 ? "" : i + 1 < L->mi->nforms ? ", " : ", or ");
		int n = 0, total = 0;
		for (int d = 1; d < TC_DT_COUNT; d++)
			total += (f->operands >> d) & 1u;
		for (int d = 1; d < TC_DT_COUNT; d++)
			if (f->operands & (1u << d)) {
				n++;
				tc_buf_printf(&b, "%s%s", n == 1 ? "" : n == total ?
					      " or " : ", ", tc_dtype_name((TcDtype)d));
			}
		tc_buf_printf(&b, " operands into an %s accumulator with K a "
			      "multiple of %d", tc_dtype_name(f->accum), f->k);
	}
	const char *text = tc_fmt(L->a, "%s", b.data);
	tc_buf_free(&b);
	return text;
}

static void
walk(Walk *W, TcStmt *s)
{
	Layouter *L = W->L;
	const char *at = at_text(L, s->loc);
	W->at = s->loc;
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
				element_use(W, d->u.load.var, d->u.load.idx,
					    d->loc);
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
	case TC_ST_GEMM: {
		TcVar *c = s->u.gemm.c.var, *a = s->u.gemm.a.var;
		spill(L, s->u.gemm.b.var, s->loc, tc_fmt(L->a, "it is the B "
		      "operand of the tile_gemm at %s, read from shared memory",
		      at));
		/* A gemm whose C is not in registers (spilled by another
		 * use) is the element-wise one over shared memory: its A
		 * goes there too. */
		if (node(L, c, 0) < 0) {
			spill(L, a, s->loc, tc_fmt(L->a, "it is the A operand "
			      "of the tile_gemm at %s, whose accumulator is in "
			      "shared memory", at));
			break;
		}
		if (!L->mi) {
			const char *why = tc_fmt(L->a, "the tile_gemm at %s, "
				"which has no matrix instruction on this target",
				at);
			spill(L, c, s->loc, tc_fmt(L->a, "it is the accumulator "
			      "of %s", why));
			spill(L, a, s->loc, tc_fmt(L->a, "it is the A operand of "
			      "%s", why));
			break;
		}
		const TcMatrixForm *form = mma_form(L, s);
		if (!form) {
			const char *why = tc_fmt(L->a, "the tile_gemm at %s "
				"(%s += %s x %s, %lldx%lld, K %lld), which has no "
				"matrix instruction here (those take %s; M a "
				"multiple of %d, N of %d), so it runs element by "
				"element from shared memory", at,
				tc_dtype_name(c->dtype),
				tc_dtype_name(a->dtype),
				tc_dtype_name(s->u.gemm.b.var->dtype),
				tc_var_extent(c, 0), tc_var_extent(c, 1),
				tc_var_extent(a, s->u.gemm.trans_a ? 0 : 1),
				forms_text(L), L->mi->m, L->mi->n);
			spill(L, c, s->loc, tc_fmt(L->a, "it is the accumulator "
			      "of %s", why));
			spill(L, a, s->loc, tc_fmt(L->a, "it is the A operand of "
			      "%s", why));
			break;
		}
		for (int d = 0; d < 2; d++) {
			Class *k = &L->cls[find(L, node(L, c, d))];
			k->mma = true;
		}
		if (node(L, a, 0) >= 0) {
			if (!form->a_in_regs) {
				spill(L, a, s->loc, tc_fmt(L->a, "it is the A "
				      "operand of the tile_gemm at %s, whose %s "
				      "reads A from shared memory", at, form->name));
			} else if (s->u.gemm.trans_a) {
				spill(L, a, s->loc, tc_fmt(L->a, "it is the "
				      "transposed A operand (TILE_TRANS_A) of the "
				      "tile_gemm at %s", at));
			} else {
				unite(L, node(L, a, 0), node(L, c, 0));
				L->cls[find(L, node(L, a, 1))].mma = true;
				if (!L->a_in_regs) {
					L->reg_a = a;
					L->reg_a_at = s->loc;
				}
				L->a_in_regs = true;
			}
		}
		break;
	}
	case TC_ST_REDUCE: {
		TcVar *src = s->u.reduce.src.var, *dst = s->u.reduce.dst.var;
		if (node(L, src, 0) < 0 || src->rank != 2) {
			spill(L, dst, s->loc, tc_fmt(L->a, "it is the result of "
			      "the tile_reduce at %s, whose source '%s' %s", at,
			      src->name, src->rank != 2 ? "is not 2-dim" :
			      "is in shared memory"));
			break;
		}
		if (node(L, dst, 0) >= 0)
			unite(L, node(L, dst, 0), node(L, src, 1 - s->u.reduce.dim));
		if (s->u.reduce.dim == 1)
			L->row_reduce = true;
		break;
	}
	case TC_ST_ARG_REDUCE:
		/* One thread per output scans the reduced dim: every
		 * operand where any thread reaches any element. */
	{
		const char *why = tc_fmt(L->a, "it is an operand of the "
			"tile_reduce_%s at %s, where one thread per output "
			"scans the reduced dim", s->u.arg_reduce.topk ? "topk" :
			s->u.arg_reduce.min ? "argmin" : "argmax", at);
		spill(L, s->u.arg_reduce.src.var, s->loc, why);
		spill(L, s->u.arg_reduce.dst.var, s->loc, why);
		spill(L, s->u.arg_reduce.index.var, s->loc, why);
		break;
	}
	case TC_ST_FILL:
		/* tile_fill(x, y[0][0]): the value is read at block level. */
		walk_expr(W, s->u.fill.value);
		break;
	case TC_ST_COPY:
	case TC_ST_ATOMIC_ADD: {
		TcRegion *d = &s->u.copy.dst, *r = &s->u.copy.src;
		/* Origins may read elements (&X[idx[0]][0]) at block level. */
		for (int i = 0; i < d->var->rank; i++)
			walk_expr(W, d->origin[i]);
		for (int i = 0; i < r->var->rank; i++)
			walk_expr(W, r->origin[i]);
		if (!d->whole)
			spill(L, d->var, s->loc, tc_fmt(L->a, "a region of it "
			      "is written by the tile_copy at %s", at));
		if (!r->whole)
			spill(L, r->var, s->loc, tc_fmt(L->a, "a region of it "
			      "is read by the tile_copy at %s", at));
		if (d->whole && r->whole && node(L, d->var, 0) >= 0 &&
		    node(L, r->var, 0) >= 0)
			for (int i = 0; i < d->var->rank; i++)
				unite(L, node(L, d->var, i), node(L, r->var, i));
		break;
	}
	default:
		break;
	}
}

/* --- Anchoring parallel loops ------------------------------------------------------- */

/* In an anchored loop, a store to memory other threads see is done by one
 * of the threads that run the same iteration (the emitter guards it),
 * also inside the loops it runs serially; the others must not read that
 * memory in the same nest, or they would race with the store.  s: the
 * statements to look at, inside `body`, the anchored loop's. */
static bool
shared_writes_private(Layouter *L, const TcStmt *body, const TcStmt *s)
{
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++)
			if (!shared_writes_private(L, body, s->u.block.body.items[i]))
				return false;
		return true;
	case TC_ST_FOR:
		return shared_writes_private(L, body, s->u.loop.body);
	case TC_ST_IF:
		return shared_writes_private(L, body, s->u.cond.then) &&
		       (!s->u.cond.els ||
			shared_writes_private(L, body, s->u.cond.els));
	case TC_ST_ASSIGN: {
		if (s->u.assign.dst->kind != TC_EX_LOAD)
			return true;
		const TcVar *v = s->u.assign.dst->u.load.var;
		return node(L, v, 0) >= 0 ||
		       !(tc_stmt_touches(body, s, v) & TC_ROLE_READ);
	}
	default:
		return true;
	}
}

/* A loop follows the class of its variable if a register fragment is
 * indexed by it.  Anchored loops may not sit inside spread loops (a thread
 * visits only its own indices), and a nest may not anchor two loops to one
 * class axis twice.  A loop that follows no fragment inside an anchored
 * one is spread over the threads that run the anchored iteration alike
 * (map_threads: PEERS), and like a spread loop holds no anchored loop. */
static bool
anchor_loops(Layouter *L, TcStmt *s, bool in_spread, unsigned axes)
{
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++)
			if (!anchor_loops(L, s->u.block.body.items[i], in_spread,
					  axes))
				return false;
		return true;
	case TC_ST_IF:
		return anchor_loops(L, s->u.cond.then, in_spread, axes) &&
		       (!s->u.cond.els ||
			anchor_loops(L, s->u.cond.els, in_spread, axes));
	case TC_ST_FOR: {
		s->u.loop.anchor = NULL;
		if (s->u.loop.kind != TC_LOOP_PARALLEL)
			return anchor_loops(L, s->u.loop.body, in_spread, axes);
		int n = find(L, L->loop_node[s->u.loop.var->index]);
		/* Find a register fragment dim in this class. */
		TcVar *f = NULL;
		int fd = 0;
		for (int i = 0; i < L->k->vars.len && !f; i++) {
			TcVar *v = L->k->vars.items[i];
			for (int d = 0; d < v->rank && !f; d++)
				if (node(L, v, d) >= 0 && find(L, node(L, v, d)) == n) {
					f = v;
					fd = d;
				}
		}
		if (!f) {
			/* Spread, over all threads or (inside an anchored
			 * loop) the iteration's peers. */
			return anchor_loops(L, s->u.loop.body, true, axes);
		}
		if (in_spread)
			return false;
		int axis = L->cls[n].axis < 0 ? 1 : L->cls[n].axis;
		if (axes & (1u << axis))
			return false;
		long long e = 0;
		tc_expr_const(s->u.loop.end, &e);
		if (e != tc_var_extent(f, fd))
			return false;
		if (!shared_writes_private(L, s->u.loop.body, s->u.loop.body))
			return false;
		s->u.loop.anchor = f;
		s->u.loop.anchor_dim = fd;
		return anchor_loops(L, s->u.loop.body, false, axes | 1u << axis);
	}
	default:
		return true;
	}
}

/* --- Thread mapping of the other parallel loops -------------------------------------
 * A parallel loop that follows no register fragment is spread over the
 * block's threads where no spread loop encloses it, and a perfect nest of
 * them (each the only statement of the one above, at most TC_MAX_RANK
 * deep) is spread as one flat loop.  Inside a spread iteration, which one
 * thread runs, the parallel loops run serially in that thread: spreading
 * them over the threads again would have each thread visit only its share
 * of its own share (thread t, element [t][t] alone). */

static bool
spreadable(const TcStmt *s)
{
	return s->kind == TC_ST_FOR && s->u.loop.kind == TC_LOOP_PARALLEL &&
	       !s->u.loop.anchor;
}

/* `depth`: the loops of the perfect spread nest s continues, 0 if none. */
/* `anchored`: inside an anchored loop (and no spread one), where a loop
 * that follows no fragment is spread over the iteration's peers when the
 * block's threads are a power of two (`peers`: then the threads that
 * differ only in the bits the anchored classes do not depend on number
 * a power of two, ranked by those bits), else run serially by each of
 * them (the emitter has one of them store). */
static void
map_threads(TcStmt *s, bool in_spread, int depth, bool anchored, bool peers)
{
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++)
			map_threads(s->u.block.body.items[i], in_spread, 0,
				    anchored, peers);
		break;
	case TC_ST_IF:
		map_threads(s->u.cond.then, in_spread, 0, anchored, peers);
		if (s->u.cond.els)
			map_threads(s->u.cond.els, in_spread, 0, anchored, peers);
		break;
	case TC_ST_FOR: {
		s->u.loop.threads = TC_THREADS_NONE;
		if (!spreadable(s)) {
			map_threads(s->u.loop.body, in_spread, 0, anchored ||
				    (s->u.loop.kind == TC_LOOP_PARALLEL &&
				     s->u.loop.anchor), peers);
			break;
		}
		if (in_spread && depth == 0) {
			s->u.loop.threads = TC_THREADS_SERIAL;
			map_threads(s->u.loop.body, true, 0, false, peers);
			break;
		}
		if (anchored) {
			s->u.loop.threads = peers ? TC_THREADS_PEERS :
						    TC_THREADS_SERIAL;
			map_threads(s->u.loop.body, true, 0, false, peers);
			break;
		}
		s->u.loop.threads = TC_THREADS_SPREAD;
		const TcVec *body = &s->u.loop.body->u.block.body;
		if (body->len == 1 && spreadable(body->items[0]) &&
		    depth + 1 < TC_MAX_RANK)
			map_threads(body->items[0], true, depth + 1, false, peers);
		else
			map_threads(s->u.loop.body, true, 0, false, peers);
		break;
	}
	default:
		break;
	}
}

/* --- Choosing the distributions -------------------------------------------------------- */

static const TcStmt *next_gemm(const TcStmt *s, const TcStmt **after);
static int gemm_min_chunk(const TcStmt *g);

/* The fewest columns a wgmma instruction may take in column class cls:
 * the most any gemm whose accumulator's columns are in it asks. */
static int
class_min_chunk(Layouter *L, int cls)
{
	int chunk = L->min_chunk;
	const TcStmt *after = NULL, *g = next_gemm(L->k->body, &after);
	for (; g; after = g, g = next_gemm(L->k->body, &after)) {
		const TcVar *c = g->u.gemm.c.var;
		if (c->rank == 2 && node(L, c, 1) >= 0 &&
		    find(L, node(L, c, 1)) == cls && gemm_min_chunk(g) > chunk)
			chunk = gemm_min_chunk(g);
	}
	return chunk;
}

static bool
mma_grid(Layouter *L)
{
	/* Extents of MMA classes by axis (and the columns' narrowest
	 * wgmma instruction). */
	long long rows[64], cols[64];
	int chunks[64];
	int nr = 0, nc = 0;
	for (int n = 0; n < L->ncls; n++) {
		Class *c = &L->cls[n];
		if (find(L, n) != n || !c->mma)
			continue;
		if (c->axis == 0 && nr < 64)
			rows[nr++] = c->extent;
		else if (c->axis == 1 && nc < 64) {
			chunks[nc] = L->min_chunk ? class_min_chunk(L, n) : 0;
			cols[nc++] = c->extent;
		}
	}
	if (!nr && !nc)
		return true;
	int best = 0;
	long long best_cost = -1;
	for (int wm = 1; wm <= L->warps; wm *= 2) {
		int wn = L->warps / wm;
		bool ok = wm * wn == L->warps;
		for (int i = 0; i < nr && ok; i++)
			ok = rows[i] % (L->mi->m * wm) == 0;
		for (int i = 0; i < nc && ok; i++)
			ok = cols[i] % (L->mi->n * wn) == 0 &&
			     (L->mi->group_warps == 1 ||
			      tc_wgmma_chunk(L->mi, cols[i] / wn,
					     chunks[i]) > 0);
		if (!ok || (L->a_in_regs && wn != 1))
			continue;
		long long tm = nr ? rows[0] / wm : 0, tn = nc ? cols[0] / wn : 0;
		long long cost = tm + tn;
		/* wgmma reads A and B from shared memory per instruction:
		 * m64nN reads 64 rows of A and N of B, so a group's tile
		 * costs (tm / 64) * (tn / N) * (64 + N) per k-step (one
		 * 64 x 256 instruction reads less than two 64 x 128). */
		if (L->mi->group_warps > 1 && tm && tn) {
			int n = tc_wgmma_chunk(L->mi, tn, chunks[0]);
			cost = tm / L->mi->m * (tn / n) * (L->mi->m + n);
		}
		cost += L->row_reduce && wn > 1 ? 1 << 20 : 0;
		if (best_cost < 0 || cost < best_cost) {
			best_cost = cost;
			best = wm;
		}
	}
	if (!best)
		return false;
	L->warps_m = best;
	L->warps_n = L->warps / best;
	return true;
}

static int
pow2_floor(long long x)
{
	int p = 1;
	while ((long long)p * 2 <= x)
		p *= 2;
	return p;
}

/* The widest vector (elements) that the tensors copied to or from class
 * members allow: 16 bytes of the narrowest such element type, as memory
 * holds it (tc_dtype_storage_bits). */
static int
class_vec(Layouter *L, int cls, const TcStmt *s, int vec)
{
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++)
			vec = class_vec(L, cls, s->u.block.body.items[i], vec);
		return vec;
	case TC_ST_FOR: return class_vec(L, cls, s->u.loop.body, vec);
	case TC_ST_IF:
		vec = class_vec(L, cls, s->u.cond.then, vec);
		return s->u.cond.els ? class_vec(L, cls, s->u.cond.els, vec) : vec;
	case TC_ST_COPY: {
		const TcRegion *f = s->u.copy.dst.whole ? &s->u.copy.dst : &s->u.copy.src;
		const TcRegion *t = f == &s->u.copy.dst ? &s->u.copy.src : &s->u.copy.dst;
		int d = f->var->rank - 1;
		if (t->var->kind != TC_VAR_TENSOR || node(L, f->var, d) < 0 ||
		    find(L, node(L, f->var, d)) != cls)
			return vec;
		int v = 128 / tc_dtype_storage_bits(t->var->dtype);
		return v > vec ? v : vec;
	}
	default:
		return vec;
	}
}

/* BLOCKED classes: one thread grid (tr x tc) for all classes tied by 2-dim
 * fragments; here simply one grid for the kernel's blocked classes. */
static bool
blocked_grid(Layouter *L, int *tr_out, int *tc_out, int *vecs)
{
	long long min_cols = -1, min_rows = -1;
	for (int n = 0; n < L->ncls; n++) {
		Class *c = &L->cls[n];
		/* Only classes that hold fragment dims (loop variables that
		 * index no fragment have no extent). */
		if (find(L, n) != n || c->mma || c->conflict || !c->extent)
			continue;
		if (c->axis == 0 && (min_rows < 0 || c->extent < min_rows))
			min_rows = c->extent;
		if (c->axis != 0) {
			long long per = c->extent / vecs[n];
			if (min_cols < 0 || per < min_cols)
				min_cols = per;
		}
	}
	if (min_cols < 0 && min_rows < 0)
		return true;
	int tc = min_cols < 0 ? 1 : pow2_floor(min_cols < L->threads ? min_cols
								 : L->threads);
	/* Prefer whole rows inside one warp, when there are enough rows. */
	if (tc > L->warp_size && min_rows >= L->threads / L->warp_size)
		tc = L->warp_size;
	int tr = L->threads / tc;
	while (min_rows > 0 && min_rows % tr != 0 && tc < L->threads) {
		tc *= 2;
		tr = L->threads / tc;
	}
	*tr_out = tr;
	*tc_out = tc;
	return true;
}

/* The BLOCKED classes' thread grid (tr x tc) and each class's run of
 * consecutive columns a thread holds (vecs, by class): a 16-byte vector
 * of its copies' tensor where the columns allow, narrower where the
 * grid's columns times that do not divide the extent (an 8 x 64 f16
 * fragment over 128 threads: 16 columns of threads at 4 elements, not
 * 8), so that vectors never cost a fragment its registers. */
static int *
distribute(Layouter *L, int *tr, int *tc)
{
	int *vecs = tc_alloc(L->a, sizeof(int) * (size_t)(L->ncls + 1));
	for (int n = 0; n < L->ncls; n++)
		if (find(L, n) == n)
			vecs[n] = class_vec(L, n, L->k->body, 1);
	*tr = 1;
	*tc = L->threads;
	blocked_grid(L, tr, tc, vecs);
	for (int n = 0; n < L->ncls; n++) {
		const Class *c = &L->cls[n];
		if (find(L, n) != n || c->mma || !c->extent || c->axis == 0)
			continue;
		while (vecs[n] > 1 && c->extent % ((long long)*tc * vecs[n]) != 0)
			vecs[n] /= 2;
	}
	return vecs;
}

static void
assign(Layouter *L)
{
	int tr, tc;
	int *vecs = distribute(L, &tr, &tc);
	for (int i = 0; i < L->k->vars.len; i++) {
		TcVar *v = L->k->vars.items[i];
		if (v->kind != TC_VAR_BUFFER || v->scope == TC_SCOPE_SHARED)
			continue;
		if (node(L, v, 0) < 0) {
			memset(&v->layout, 0, sizeof v->layout);
			v->layout.kind = TC_LAYOUT_SMEM;
			continue;
		}
		bool mma = L->cls[find(L, node(L, v, 0))].mma;
		v->layout.kind = mma ? L->mi->layout : TC_LAYOUT_BLOCKED;
		v->layout.warps_m = L->warps_m;
		v->layout.warps_n = L->warps_n;
		for (int d = 0; d < v->rank; d++) {
			int n = find(L, node(L, v, d));
			Class *c = &L->cls[n];
			TcDist *dist = &v->layout.dim[d];
			dist->id = n;
			dist->kind = v->layout.kind;
			dist->axis = c->axis < 0 ? 1 : c->axis;
			dist->extent = (int)c->extent;
			if (mma) {
				dist->tiles = dist->axis == 0 ?
					(int)(c->extent / (L->mi->m * L->warps_m)) :
					(int)(c->extent / (L->mi->n * L->warps_n));
				dist->count = dist->tiles * (dist->axis == 0 ?
					L->mi->row_count : L->mi->col_count);
			} else {
				dist->tr = tr;
				dist->tc = tc;
				dist->vec = dist->axis == 1 ? vecs[n] : 1;
				dist->count = (int)(c->extent / (dist->axis == 0 ? tr : tc));
			}
		}
	}
}

/* Constraints the chosen distributions must meet; false spills. */
static bool
check_dists(Layouter *L, int tr, int tc, const int *vecs)
{
	bool ok = true;
	for (int i = 0; i < L->k->vars.len; i++) {
		TcVar *v = L->k->vars.items[i];
		if (node(L, v, 0) < 0)
			continue;
		bool mma = L->cls[find(L, node(L, v, 0))].mma;
		for (int d = 0; d < v->rank; d++) {
			int n = find(L, node(L, v, d));
			Class *c = &L->cls[n];
			bool bad = c->conflict || c->mma != mma;
			if (!bad && v->rank == 2 && c->axis >= 0 && c->axis != d)
				bad = true;
			/* Every thread holds elements: blocked_grid's rows
			 * times columns are the block's threads (96 threads
			 * over 32 rows found none, and a 1 x 64 grid left
			 * threads 64..95 reading rows past the tile). */
			bool threads_left = !mma && (long long)tr * tc != L->threads;
			if (!bad && !mma) {
				int axis = c->axis < 0 ? 1 : c->axis;
				long long per = axis == 0 ? tr : (long long)tc * vecs[n];
				bad = c->extent % per != 0 || threads_left;
			}
			if (bad) {
				const char *why;
				if (threads_left && !c->conflict && c->mma == mma)
					why = tc_fmt(L->a, "no grid of rows and "
						"columns of the block's %d threads "
						"divides its dims", L->threads);
				else if (c->conflict)
					why = tc_fmt(L->a, "its dim %d is joined "
						"(by loops, copies or reductions) "
						"with dims of another extent or "
						"orientation", d);
				else if (c->mma != mma)
					why = tc_fmt(L->a, "its dim %d is joined "
						"with a gemm accumulator's and "
						"another dim is not", d);
				else if (v->rank == 2 && c->axis >= 0 &&
					 c->axis != d)
					why = tc_fmt(L->a, "its dim %d is joined "
						"with the other axis of a 2-dim "
						"fragment", d);
				else if (c->axis == 0)
					why = tc_fmt(L->a, "its dim %d (%lld) "
						"is not a multiple of %d, the rows "
						"of the block's %d threads along "
						"it", d, c->extent, tr,
						L->threads);
				else
					why = tc_fmt(L->a, "its dim %d (%lld) "
						"is not a multiple of %lld: the "
						"block's %d threads take %d "
						"columns at %d elements each", d,
						c->extent,
						(long long)tc * vecs[n],
						L->threads, tc, vecs[n]);
				spill(L, v, (TcLoc){ 0 }, why);
				ok = false;
				break;
			}
		}
	}
	return ok;
}

/* Classes, spills and distributions until they agree: every fragment's
 * layout, and the anchors of the loops that follow register fragments. */
static void
choose_layouts(Layouter *L)
{
	TcArena *a = L->a;
	TcKernel *k = L->k;
	int nv = k->vars.len;
	for (int round = 0; round < 32; round++) {
		/* Fresh classes: each fragment dim and loop var alone. */
		for (int i = 0; i < nv; i++) {
			TcVar *v = k->vars.items[i];
			for (int d = 0; L->frag_node[i] >= 0 && d < v->rank; d++) {
				Class *c = &L->cls[L->frag_node[i] + d];
				*c = (Class){ .parent = L->frag_node[i] + d,
					      .extent = tc_var_extent(v, d),
					      .axis = v->rank == 2 ? d : -1 };
			}
			if (L->loop_node[i] >= 0)
				L->cls[L->loop_node[i]] = (Class){ .parent = L->loop_node[i],
								  .axis = -1 };
		}
		L->changed = false;
		L->a_in_regs = L->row_reduce = false;
		Walk W = { .L = L };
		walk(&W, k->body);
		if (L->changed)
			continue;
		/* Conflicting classes and MMA grids that do not fit spill. */
		for (int i = 0; i < nv; i++) {
			TcVar *v = k->vars.items[i];
			for (int d = 0; d < v->rank && node(L, v, 0) >= 0; d++)
				if (L->cls[find(L, node(L, v, d))].conflict)
					spill(L, v, (TcLoc){ 0 }, tc_fmt(a,
					      "its dim %d is joined (by loops, "
					      "copies or reductions) with dims of "
					      "another extent or orientation", d));
		}
		if (L->changed)
			continue;
		if (!mma_grid(L)) {
			/* A grid with more than one warp column would do but
			 * for an A operand in registers (each warp holds whole
			 * rows of A): that A goes to shared memory, the
			 * accumulators stay. */
			L->a_in_regs = false;
			if (mma_grid(L)) {
				spill(L, L->reg_a, L->reg_a_at, tc_fmt(a, "it is "
				      "the A operand of the tile_gemm at %d:%d, "
				      "which in registers takes the accumulator's "
				      "rows over every one of the block's %d %s, "
				      "%lld rows each, not a multiple of %d",
				      L->reg_a_at.line, L->reg_a_at.col, L->warps,
				      L->mi->group_warps > 1 ? "warpgroups" :
				      "warps", tc_var_extent(L->reg_a, 0) / L->warps,
				      L->mi->m));
				continue;
			}
			for (int i = 0; i < nv; i++) {
				TcVar *v = k->vars.items[i];
				if (node(L, v, 0) >= 0 &&
				    L->cls[find(L, node(L, v, 0))].mma)
					spill(L, v, (TcLoc){ 0 }, tc_fmt(a,
					      "no grid of the block's %d %s "
					      "tiles every gemm accumulator's "
					      "rows by %d and columns by %d",
					      L->warps, L->mi->group_warps > 1 ?
					      "warpgroups" : "warps", L->mi->m,
					      L->mi->n));
			}
			continue;
		}
		int tr, tc;
		int *vecs = distribute(L, &tr, &tc);
		if (!check_dists(L, tr, tc, vecs))
			continue;
		if (!anchor_loops(L, k->body, false, 0)) {
			/* A nest the register layouts cannot follow: everything
			 * in shared memory, which any nest can use. */
			for (int i = 0; i < nv; i++)
				spill(L, k->vars.items[i], (TcLoc){ 0 },
				      "a tile_parallel nest of the kernel cannot "
				      "follow register layouts, so every "
				      "fragment moves to shared memory");
			anchor_loops(L, k->body, false, 0);
			break;
		}
		break;
	}
	assign(L);
}

/* --- wgmma: the warpgroup instruction, where every gemm fits it ----------- */

/* Registers per thread for a promoted gemm's two accumulators: half of
 * the 255 a thread may have, the rest for addresses, operands and the
 * loop (a 64 x 128 warpgroup tile, 64 floats each, fits). */
enum { PROMOTE_REGS = 128 };

/* The first gemm in s, from `after` on (NULL: the first at all). */
static const TcStmt *
next_gemm(const TcStmt *s, const TcStmt **after)
{
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++) {
			const TcStmt *g = next_gemm(s->u.block.body.items[i], after);
			if (g)
				return g;
		}
		return NULL;
	case TC_ST_FOR: return next_gemm(s->u.loop.body, after);
	case TC_ST_IF: {
		const TcStmt *g = next_gemm(s->u.cond.then, after);
		return g || !s->u.cond.els ? g : next_gemm(s->u.cond.els, after);
	}
	case TC_ST_GEMM:
		if (*after) {
			if (*after == s)
				*after = NULL;
			return NULL;
		}
		return s;
	default:
		return NULL;
	}
}

/* Bytes of one row of shared tile v. */
static long long
row_bytes(const TcVar *v)
{
	return tc_var_extent(v, v->rank - 1) * tc_dtype_storage_bits(v->dtype) / 8;
}

/* Why gemm s of kernel k cannot be one of wgmma's (a clause, "its A
 * operand ..."), or NULL when it fits: the accumulator a 2-dim fragment of
 * whole 64 x 16 tiles, A and B 16-bit tiles in shared memory that only
 * copies fill and gemms read (smem.c then swizzles them as wgmma reads
 * them), rows of 32 or 64 bytes or whole 128-byte panels, K whole k-steps;
 * 8-bit operands (fp8, i8) K-major; a form summing below the
 * accumulator's precision only when `inexact` allows it, and with room
 * for its second accumulator. */
static const char *
wgmma_misfit(TcArena *a, const TcKernel *k, const TcMatrixInsn *wg,
	     const TcStmt *s, long long threads, bool inexact)
{
	const TcVar *c = s->u.gemm.c.var, *av = s->u.gemm.a.var,
		    *bv = s->u.gemm.b.var;
	bool ta = s->u.gemm.trans_a, tb = s->u.gemm.trans_b;
	if (!is_candidate(c) || c->rank != 2)
		return "its accumulator is not a 2-dim fragment";
	const TcVar *ops[2] = { av, bv };
	/* A may be a register fragment (wgmma's A-from-registers form): a
	 * 16-bit one, M-major A is not. */
	bool a_regs = is_candidate(av) && av->rank == 2 && !ta &&
		      tc_dtype_bits(av->dtype) == 16;
	for (int i = a_regs ? 1 : 0; i < 2; i++) {
		const char *name = i ? "B" : "A";
		const TcVar *v = ops[i];
		if (v->kind != TC_VAR_BUFFER || v->scope != TC_SCOPE_SHARED ||
		    v->rank != 2)
			return tc_fmt(a, "its %s operand '%s' is not a 2-dim "
				      "tile_shared buffer", name, v->name);
		long long rb = row_bytes(v);
		if (tc_dtype_bits(v->dtype) != 16 && tc_dtype_bits(v->dtype) != 8)
			return tc_fmt(a, "its operands are %s, and wgmma reads "
				      "only 8- and 16-bit tiles",
				      tc_dtype_name(v->dtype));
		if (rb != 32 && rb != 64 && rb % 128 != 0)
			return tc_fmt(a, "the rows of its %s operand '%s' are "
				      "%lld bytes, not 32, 64 or a multiple of "
				      "128", name, v->name, rb);
		if (tc_var_extent(v, 0) % 8 != 0)
			return tc_fmt(a, "its %s operand '%s' has %lld rows, "
				      "not a multiple of 8", name, v->name,
				      tc_var_extent(v, 0));
		if (!tc_swizzle_accessors(k->body, v, true))
			return tc_fmt(a, "its %s operand '%s' is used by more "
				      "than copies from a tensor and gemms, so "
				      "it cannot be swizzled", name, v->name);
	}
	const TcMatrixForm *f = tc_matrix_form(wg, av->dtype, c->dtype);
	if (!f || bv->dtype != av->dtype)
		return tc_fmt(a, "it multiplies %s by %s into %s",
			      tc_dtype_name(av->dtype), tc_dtype_name(bv->dtype),
			      tc_dtype_name(c->dtype));
	if (!f->mn_major && (ta || !tb))
		return "its 8-bit operands are not both K-major";
	long long M = tc_var_extent(c, 0), N = tc_var_extent(c, 1);
	long long K = tc_var_extent(av, ta ? 0 : 1);
	if (M % wg->m != 0 || N % 16 != 0 || K % f->k != 0)
		return tc_fmt(a, "it is %lldx%lld with K %lld (wgmma takes M "
			      "a multiple of %d, N of 16, K of %d)", M, N, K,
			      wg->m, f->k);
	if (f->promote && !inexact)
		return tc_fmt(a, "%s sums below f32 precision (about 1.3e-4 "
			      "of the largest |C| off even promoted per "
			      "gemm, where mma.sync is exact), which "
			      "--no-fp8-wgmma refuses", f->name);
	/* A promoted sum needs a second accumulator as large as C's
	 * share of each thread; both must leave room for the rest. */
	if (f->promote && 2 * M * N > PROMOTE_REGS * threads)
		return tc_fmt(a, "%s sums below f32 precision, so its gemms "
			      "sum into a second accumulator: two of %lld "
			      "floats per thread exceed the %d registers "
			      "left for them (a smaller tile or more threads "
			      "fit)", f->name, M * N / threads, PROMOTE_REGS);
	return NULL;
}

/* The narrowest wgmma instruction gemm g allows: with an N-major B an
 * instruction's columns start a swizzle row; 16 otherwise. */
static int
gemm_min_chunk(const TcStmt *g)
{
	const TcVar *bv = g->u.gemm.b.var;
	if (g->u.gemm.trans_b)
		return 16;
	long long span = row_bytes(bv) < 128 ? row_bytes(bv) : 128;
	int chunk = (int)(span * 8 / tc_dtype_storage_bits(bv->dtype));
	return chunk > 16 ? chunk : 16;
}

/* Whether every gemm of k fits wgmma; if not, why (k->wgmma_why). */
static bool
wgmma_fits(TcArena *a, TcKernel *k, const TcTarget *t, long long threads,
	   bool inexact)
{
	const TcStmt *after = NULL, *g = next_gemm(k->body, &after);
	if (!g)
		return false;
	if (threads % (t->warp_size * t->wgmma->group_warps) != 0) {
		k->wgmma_why = tc_fmt(a, "the block's %lld threads are not whole "
				      "warpgroups of %d", threads,
				      t->warp_size * t->wgmma->group_warps);
		k->wgmma_why_loc = k->loc;
		return false;
	}
	for (; g; after = g, g = next_gemm(k->body, &after)) {
		const char *why = wgmma_misfit(a, k, t->wgmma, g, threads,
					       inexact);
		if (why) {
			k->wgmma_why = tc_fmt(a, "the tile_gemm at %d:%d does not "
					      "fit wgmma: %s", g->loc.line,
					      g->loc.col, why);
			k->wgmma_why_loc = g->loc;
			return false;
		}
	}
	return true;
}

/* Whether every gemm accumulator of k ended in registers (if not and
 * bad is not NULL, the gemm that failed, *bad); if so, each gemm's wgmma_n (0 with the warp
 * instruction). */
static bool
set_instructions(TcKernel *k, const TcMatrixInsn *wg,
		 const TcStmt **bad)
{
	const TcStmt *after = NULL, *g = next_gemm(k->body, &after);
	for (; g; after = g, g = next_gemm(k->body, &after)) {
		const TcVar *c = g->u.gemm.c.var, *av = g->u.gemm.a.var;
		if (bad)
			*bad = g;
		if (!tc_layout_is_matrix(c->layout.kind))
			return false;
		/* wgmma reads A from shared memory only as a swizzled tile. */
		if (wg && av->scope != TC_SCOPE_SHARED &&
		    av->layout.kind != TC_LAYOUT_WGMMA)
			return false;
		((TcStmt *)g)->u.gemm.wgmma_n = !wg ? 0 :
			tc_wgmma_chunk(wg, (long long)c->layout.dim[1].tiles *
				       wg->n, gemm_min_chunk(g));
		const TcMatrixForm *f = wg ? tc_matrix_form(wg, av->dtype,
							   c->dtype) : NULL;
		((TcStmt *)g)->u.gemm.wgmma_promote = f && f->promote;
	}
	return true;
}

/* Layouts of kernel k with matrix instruction mi (wgmma when its
 * min_chunk is nonzero). */
static void
layout_with(TcArena *a, TcKernel *k, const TcTarget *t,
	    const TcMatrixInsn *mi, int min_chunk)
{
	long long threads = tc_abi_threads(k, t);
	int unit = t->warp_size * (mi ? mi->group_warps : 1);
	Layouter L = { .a = a, .k = k, .threads = (int)threads,
		       .warps = (int)(threads / unit),
		       .warp_size = t->warp_size, .mi = mi,
		       .min_chunk = min_chunk };
	int nv = k->vars.len;
	L.frag_node = tc_alloc(a, sizeof(int) * (size_t)(nv + 1));
	L.loop_node = tc_alloc(a, sizeof(int) * (size_t)(nv + 1));
	L.spill = tc_alloc(a, sizeof(bool) * (size_t)(nv + 1));
	L.cls = tc_alloc(a, sizeof(Class) * (size_t)(2 * nv + 1));
	bool whole_warps = L.warps >= 1 && threads % t->warp_size == 0;
	for (int i = 0; i < nv; i++) {
		TcVar *v = k->vars.items[i];
		L.frag_node[i] = L.loop_node[i] = -1;
		if (v->kind == TC_VAR_BUFFER && v->scope != TC_SCOPE_SHARED) {
			memset(&v->layout, 0, sizeof v->layout);
			v->layout.kind = TC_LAYOUT_SMEM;
			v->smem_why = NULL;
			v->smem_why_loc = (TcLoc){ 0 };
			if (!whole_warps)
				v->smem_why = tc_fmt(a, "the block's %lld threads "
					"are not whole warps of %d lanes", threads,
					t->warp_size);
			else if (v->rank > 2)
				v->smem_why = tc_fmt(a, "it has %d dims; register "
					"layouts have 1 or 2", v->rank);
			else if (tc_dtype_storage_bits(v->dtype) < 8)
				v->smem_why = tc_fmt(a, "its elements (%s) are "
					"packed narrower than a byte",
					tc_dtype_name(v->dtype));
		}
		if (whole_warps && is_candidate(v)) {
			L.frag_node[i] = L.ncls;
			L.ncls += v->rank;
		} else if (v->kind == TC_VAR_LOOP) {
			L.loop_node[i] = L.ncls++;
		}
	}
	if (whole_warps)
		choose_layouts(&L);
	map_threads(k->body, false, 0, false,
		    threads > 0 && (threads & (threads - 1)) == 0);
}

/* The kernel's layouts: with the warpgroup instruction where the target
 * has one (unless --no-wgmma, or --no-fp8-wgmma for an fp8 gemm) and
 * every gemm fits it with its accumulator in registers, else with the
 * warp instruction (k->wgmma_why says why not). */
static void
layout_kernel(TcArena *a, TcKernel *k, const TcTarget *t, const TcOptions *opt)
{
	k->wgmma_why = NULL;
	if (t->wgmma && opt->wgmma != TC_WGMMA_OFF &&
	    wgmma_fits(a, k, t, tc_abi_threads(k, t),
		       opt->wgmma == TC_WGMMA_ON)) {
		layout_with(a, k, t, t->wgmma, 16);
		const TcStmt *g = NULL;
		if (set_instructions(k, t->wgmma, &g))
			return;
		const TcVar *c = g->u.gemm.c.var, *av = g->u.gemm.a.var;
		const TcVar *v = tc_layout_is_matrix(c->layout.kind) ? av : c;
		k->wgmma_why = tc_fmt(a, "in wgmma's layout the %s '%s' of the "
				      "tile_gemm at %d:%d would not be in "
				      "registers%s%s", v == c ? "accumulator" :
				      "A operand", v->name, g->loc.line,
				      g->loc.col, v->smem_why ? ": " : "",
				      v->smem_why ? v->smem_why : "");
		k->wgmma_why_loc = g->loc;
	}
	layout_with(a, k, t, t->mma, 0);
	set_instructions(k, NULL, NULL);
}

bool
tc_layout(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d)
{
	(void)d;
	if (!opt->target.simt)
		return true;
	for (int i = 0; i < p->kernels.len; i++)
		layout_kernel(a, p->kernels.items[i], &opt->target, opt);
	return true;
}
