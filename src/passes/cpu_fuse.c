/*
 * cpu_fuse.c - the openmp target's row-wise fusion: runs of block-level
 * statements planned as one pass per row (pass `fuse`).
 *
 * Input: a checked program for the openmp target, after `bounds` (a copy
 * joins a run only where its origins are proven non-negative).  Output:
 * kernel->fusions, the runs of the whole body (TcFusion: which statements,
 * what each does, the work an earlier run's is redone, the buffers kept
 * in registers, whether the run is dead), var->unstored for the buffers
 * no statement stores, and kernel->stack_bytes without them.  The OpenMP
 * printer prints each run in place of its statements
 * (emitters/openmp_fuse.c) and decides none of this again.
 *
 * Consecutive block-level statements that each touch a tile element by
 * element over the same index space run as one loop nest: for each row of
 * the tile, the rows that are copied in, then one vectorized loop over
 * the row's elements doing every statement's work on each element in
 * turn, then the row's reduction results and the rows copied out.  An
 * element then stays in registers from one statement to the next instead
 * of going through a buffer once per statement.  The statements that can
 * join (TcFuseOp):
 *
 *   - tile_copy of a whole buffer from a tensor region whose rows are
 *     contiguous (LOAD) or to one, by the row helper (STORE);
 *   - a tile_parallel nest over the tile (MAP) whose body has no loop
 *     and reads and writes buffers only at the nest's own indices: x[i][j]
 *     for a buffer of the tile's shape, and reads of r[i] and c[j] for
 *     per-row and per-column buffers; no tensor;
 *   - tile_reduce_* along the last dim into a per-row buffer (REDUCE):
 *     an accumulator per row, an omp simd reduction clause; float max
 *     and min reduce integer keys (tilec_max_key: clang does not
 *     vectorize an omp simd max-reduction of floats).
 *
 * Statements over the columns alone (a copy into a per-column buffer, a
 * nest over j) join a run over rows and columns as work repeated on each
 * row, when the buffer they write is kept in registers, or, for a copy,
 * done once before the rows.  A run is legal when no statement touches a
 * per-row buffer an earlier one reduces into (the reduction completes at
 * the end of the row) and no tensor is written by one statement and read
 * or written by another.  Element-wise access makes everything else keep
 * its order: statement k's work on element (i, j) follows statement
 * k - 1's on the same element.
 *
 * A buffer the run writes is not stored at all (elided: its element is a
 * local of the row loop) when nothing reads it after the run (the
 * liveness below), the run writes it in full before reading it, and no
 * copy in the run reads it out.  A run whose only work is computing
 * buffers it keeps in registers (a later run recomputes them where they
 * are read) is dead: it has nothing to do.  How a run is printed is the
 * top comment of emitters/openmp_fuse.c.
 */
#include "analysis/walk.h"
#include "passes/passes.h"

#include <string.h>

/* The planner's state for one kernel. */
typedef struct Planner {
	TcArena *a;       /* the compilation's arena */
	const TcKernel *k; /* the kernel planned */
	bool *visible;    /* by var index: in scope at block level (a run's
			     nests may assign only their own locals) */
	TcVec live;       /* LiveOut *: buffers read after each statement */
	TcVec fusions;    /* Fusion *: the runs */
} Planner;

/* --- Helpers over the IR ------------------------------------------------------ */

/* Whether a dtype is held as float by the CPU (f32, and f16, bf16, fp8
 * widened): the dtypes the template's row helpers tilec_load_* and
 * tilec_store_* copy (the printer's tc_omp_row_helper). */
static bool
held_as_float(TcDtype t)
{
	return tc_dtype_is_float(t) && tc_dtype_bits(t) <= 32;
}

/* f16, bf16, fp8: held as float, rounded on every store. */
static bool
narrow_float(TcDtype t)
{
	return tc_dtype_is_float(t) && tc_dtype_bits(t) < 32;
}

/* The parallel loop directly nested in s's body, if that is all it has. */
static const TcStmt *
nested_parallel(const TcStmt *s)
{
	const TcStmt *body = s->u.loop.body;
	if (body->u.block.body.len != 1)
		return NULL;
	const TcStmt *only = body->u.block.body.items[0];
	return only->kind == TC_ST_FOR && only->u.loop.kind == TC_LOOP_PARALLEL
		       ? only : NULL;
}

/* Whether some statement of s (s included) matches fn(s, arg). */
typedef struct StmtFind {
	bool (*fn)(const TcStmt *s, const void *arg); /* the test */
	const void *arg;                             /* its argument */
	bool found;                                  /* a match seen */
} StmtFind;

static TcVisit
find_stmt(void *ctx, const TcStmt *s)
{
	StmtFind *f = ctx;
	if (f->fn(s, f->arg)) {
		f->found = true;
		return TC_VISIT_STOP;
	}
	return TC_VISIT_INTO;
}

static bool
count_stmts(const TcStmt *s, bool (*fn)(const TcStmt *, const void *),
	    const void *arg)
{
	StmtFind f = { fn, arg, false };
	tc_stmt_visit(s, &(TcVisitor){ .stmt = find_stmt, .ctx = &f });
	return f.found;
}

static bool
is_loop(const TcStmt *s, const void *arg)
{
	(void)arg;
	return s->kind == TC_ST_FOR;
}

/* Whether a statement contains a loop. */
static bool
has_loop(const TcStmt *s)
{
	return count_stmts(s, is_loop, NULL);
}

/* --- Which statements run as one pass per row --------------------------------- */

/* What one statement reads and writes (tc_stmt_access). */
typedef struct Touches {
	const TcVar *var[32]; /* distinct vars */
	int how[32];          /* TC_ROLE_* of each */
	int n;                /* how many */
	bool overflow;        /* more than 32: treat as touching everything */
} Touches;

/* A run while it is planned: what becomes its TcFusion, and the
 * planner's own notes. */
typedef struct Fusion Fusion;
struct Fusion {
	const TcStmt *block;  /* the BLOCK holding them */
	int first, nstmts;    /* which of its statements */
	int n;                /* ops: nagain recomputed, then one per statement */
	int nagain;           /* ops[0 .. nagain) redo an earlier run's work */
	TcFuseOp *ops;        /* what each does */
	Touches *tt;          /* what each reads and writes */
	TcFuseOp *ops0;       /* the ops and touches without the redone work */
	Touches *tt0;
	const TcVar *again[TC_FUSE_MAX_AGAIN]; /* the buffers it recomputes */
	const Fusion *from[TC_FUSE_MAX_AGAIN]; /* the run whose writes of each
						  it redoes */
	int nrecomputed;      /* how many */
	bool kept;            /* replan: all its ops could stay */
	int rank;             /* 2: rows and columns; 1: columns only */
	long long rows, cols; /* the index space */
	const TcExpr *ext[2]; /* rows (NULL at rank 1) and columns as written */
	bool *elided;         /* by var index: buffers kept in registers */
	bool dead;            /* it only writes buffers it keeps in registers
				 (which later runs recompute): nothing to do */
};

/* The index space of a whole rank-1 or rank-2 buffer with constant dims. */
static bool
tile_space(const TcVar *v, TcFuseOp *op)
{
	long long d[2];
	if (v->rank < 1 || v->rank > 2)
		return false;
	for (int i = 0; i < v->rank; i++)
		if (!tc_expr_const(v->shape[i], &d[i]) || d[i] <= 0)
			return false;
	op->rank = v->rank;
	op->rows = v->rank == 2 ? d[0] : 1;
	op->cols = d[v->rank - 1];
	op->ext[0] = v->rank == 2 ? v->shape[0] : NULL;
	op->ext[1] = v->shape[v->rank - 1];
	return true;
}

static bool
is_var(const TcExpr *e, const TcVar *v)
{
	return v && e->kind == TC_EX_VAR && e->u.var == v;
}

static bool
dim_is(const TcVar *v, int d, long long n)
{
	long long c;
	return tc_expr_const(v->shape[d], &c) && c == n;
}

/* Whether v[idx] is at a MAP's own indices: the tile's element, or (read
 * only, unless the nest is over the columns alone) a per-row or
 * per-column buffer's; per-row buffers read are noted in op->rowread. */
static bool
map_elem_ok(TcFuseOp *op, const TcVar *v, TcExpr *const *idx, bool write)
{
	if (v->kind != TC_VAR_BUFFER)
		return false;
	if (v->rank == 2)
		return op->rank == 2 && dim_is(v, 0, op->rows) &&
		       dim_is(v, 1, op->cols) && is_var(idx[0], op->var[0]) &&
		       is_var(idx[1], op->var[1]);
	if (v->rank != 1)
		return false;
	if (is_var(idx[0], op->var[1]) && dim_is(v, 0, op->cols))
		return op->rank == 1 || !write;
	if (!is_var(idx[0], op->var[0]) || !dim_is(v, 0, op->rows) || write)
		return false;
	for (int i = 0; i < op->nrowread; i++)
		if (op->rowread[i] == v)
			return true;
	if (op->nrowread == 8)
		return false;
	op->rowread[op->nrowread++] = v;
	return true;
}

/* Whether a MAP's body is element-wise (map_elem_ok): a walk that stops
 * at the first statement or element access that is not. */
typedef struct MapCheck {
	Planner *P;     /* the planner (which locals are visible) */
	TcFuseOp *op;   /* the nest checked */
	bool ok;        /* nothing failed yet */
	TcVisitor walk; /* the walk, for assignments' values */
} MapCheck;

static TcVisit
map_fail(MapCheck *m)
{
	m->ok = false;
	return TC_VISIT_STOP;
}

static TcVisit
map_expr_ok(void *ctx, const TcExpr *e)
{
	MapCheck *m = ctx;
	if (e->kind != TC_EX_LOAD)
		return TC_VISIT_INTO;
	if (!map_elem_ok(m->op, e->u.load.var, e->u.load.idx, false))
		return map_fail(m);
	return TC_VISIT_OVER;
}

static TcVisit
map_stmt_ok(void *ctx, const TcStmt *s)
{
	MapCheck *m = ctx;
	switch (s->kind) {
	case TC_ST_BLOCK:
	case TC_ST_IF:
		return TC_VISIT_INTO;
	case TC_ST_DECL:
		return s->u.decl.var->kind == TC_VAR_LOCAL ? TC_VISIT_INTO
							   : map_fail(m);
	case TC_ST_ASSIGN: {
		const TcExpr *dst = s->u.assign.dst;
		if (dst->kind == TC_EX_VAR) {
			/* Only the body's own locals. */
			const TcVar *v = dst->u.var;
			if (v->kind != TC_VAR_LOCAL || m->P->visible[v->index])
				return map_fail(m);
		} else if (!map_elem_ok(m->op, dst->u.load.var, dst->u.load.idx,
					true)) {
			return map_fail(m);
		}
		tc_expr_visit(s->u.assign.value, &m->walk);
		return m->ok ? TC_VISIT_OVER : TC_VISIT_STOP;
	}
	default:
		return map_fail(m);
	}
}

static bool
map_body_ok(Planner *P, TcFuseOp *op, const TcStmt *body)
{
	MapCheck m = { P, op, true, { 0 } };
	m.walk = (TcVisitor){ .expr = map_expr_ok, .stmt = map_stmt_ok,
			      .ctx = &m };
	tc_stmt_visit(body, &m.walk);
	return m.ok;
}

/* A block-level tile_parallel nest of one or two loops with constant
 * extents whose innermost body has no loop and is element-wise. */
static bool
classify_map(Planner *P, const TcStmt *s, TcFuseOp *op)
{
	*op = (TcFuseOp){ .s = s, .kind = TC_FUSE_MAP };
	if (s->kind != TC_ST_FOR || s->u.loop.kind != TC_LOOP_PARALLEL)
		return false;
	const TcStmt *loops[2] = { s, nested_parallel(s) };
	int rank = loops[1] ? 2 : 1;
	if (rank == 2 && nested_parallel(loops[1]))
		return false;
	long long ext[2];
	for (int d = 0; d < rank; d++)
		if (!tc_expr_const(loops[d]->u.loop.end, &ext[d]) || ext[d] <= 0)
			return false;
	const TcStmt *body = loops[rank - 1]->u.loop.body;
	if (has_loop(body))
		return false;
	op->rank = rank;
	op->rows = rank == 2 ? ext[0] : 1;
	op->cols = ext[rank - 1];
	op->ext[0] = rank == 2 ? loops[0]->u.loop.end : NULL;
	op->ext[1] = loops[rank - 1]->u.loop.end;
	op->var[0] = rank == 2 ? loops[0]->u.loop.var : NULL;
	op->var[1] = loops[rank - 1]->u.loop.var;
	op->body = body;
	return map_body_ok(P, op, body);
}

/* Whether a block-level statement can join a fused run, and how. */
static bool
classify(Planner *P, const TcStmt *s, TcFuseOp *op)
{
	*op = (TcFuseOp){ .s = s };
	switch (s->kind) {
	case TC_ST_COPY: {
		const TcRegion *dst = &s->u.copy.dst, *src = &s->u.copy.src;
		bool load = dst->whole && dst->var->kind == TC_VAR_BUFFER &&
			    src->var->kind == TC_VAR_TENSOR;
		bool store = src->whole && src->var->kind == TC_VAR_BUFFER &&
			     dst->var->kind == TC_VAR_TENSOR;
		if (!load && !store)
			return false;
		const TcVar *buf = load ? dst->var : src->var;
		const TcRegion *reg = load ? src : dst;
		if (!tile_space(buf, op) || reg->var->dtype == TC_DT_I4 ||
		    reg->dims[buf->rank - 1] != reg->var->rank - 1)
			return false;
		for (int t = 0; t < buf->rank; t++)
			if (!reg->bounded ||
			    !(reg->nonneg >> reg->dims[t] & 1))
				return false;
		op->kind = load ? TC_FUSE_LOAD : TC_FUSE_STORE;
		op->buf = buf;
		op->reg = reg;
		op->helper =
			held_as_float(reg->var->dtype) &&
			held_as_float(buf->dtype) &&
			!(load && narrow_float(buf->dtype) &&
			  buf->dtype != reg->var->dtype);
		return load || op->helper;
	}
	case TC_ST_REDUCE: {
		const TcVar *src = s->u.reduce.src.var;
		if (!s->u.reduce.src.whole || !s->u.reduce.dst.whole ||
		    src->rank != 2 || s->u.reduce.dim != 1 || !tile_space(src, op))
			return false;
		op->kind = TC_FUSE_REDUCE;
		op->buf = src;
		return true;
	}
	case TC_ST_FOR:
		return classify_map(P, s, op);
	default:
		return false;
	}
}

/* Whether a MAP writes all of v before reading any of it: the first of
 * its body's top-level statements that touches v assigns v at the nest's
 * indices, unconditionally, from a value that does not read v. */
static bool
map_kills(const TcFuseOp *op, const TcVar *v)
{
	const TcStmt *body = op->body;
	for (int i = 0; i < body->u.block.body.len; i++) {
		const TcStmt *s = body->u.block.body.items[i];
		if (!tc_stmt_touches(s, NULL, v))
			continue;
		return s->kind == TC_ST_ASSIGN &&
		       s->u.assign.dst->kind == TC_EX_LOAD &&
		       s->u.assign.dst->u.load.var == v &&
		       v->rank == op->rank &&
		       !(tc_stmt_touches(s, NULL, v) & TC_ROLE_READ);
	}
	return false;
}

/* The run that starts at statement i of block, or NULL. */
static const Fusion *
fusion_at(Planner *P, const TcStmt *block, int i)
{
	for (int f = 0; f < P->fusions.len; f++) {
		const Fusion *F = P->fusions.items[f];
		if (F->block == block && F->first == i)
			return F;
	}
	return NULL;
}

/* --- Liveness ---------------------------------------------------------------- */
/*
 * Which buffers are read after a statement before being written in full
 * again, on some path: a backward walk over the body, loops iterated to a
 * fixed point, recorded for every statement of a block.  A statement
 * writes a buffer in full when it declares it, copies or fills the whole
 * buffer, reduces into it without TILE_ACCUMULATE, or is an element-wise
 * nest that assigns every element before reading any (map_kills).
 * Anything else that reads a buffer keeps it live.
 */

typedef struct LiveOut {
	const TcStmt *s; /* a statement of some block */
	bool *set;       /* by var index: buffers read after it */
} LiveOut;

static bool *
live_copy(Planner *P, const bool *from)
{
	size_t n = (size_t)P->k->vars.len + 1;
	bool *set = tc_alloc(P->a, n * sizeof *set);
	if (from)
		memcpy(set, from, n * sizeof *set);
	return set;
}

static void
live_use(void *ctx, const TcVar *v, int how)
{
	bool *set = ctx;
	if (v->kind == TC_VAR_BUFFER && (how & TC_ROLE_READ))
		set[v->index] = true;
}

static void
live_record(Planner *P, const TcStmt *s, const bool *set)
{
	for (int i = 0; i < P->live.len; i++) {
		LiveOut *r = P->live.items[i];
		if (r->s == s) {
			memcpy(r->set, set, ((size_t)P->k->vars.len + 1) * sizeof *set);
			return;
		}
	}
	LiveOut *r = tc_alloc(P->a, sizeof *r);
	r->s = s;
	r->set = live_copy(P, set);
	tc_vec_push(P->a, &P->live, r);
}

static const bool *
live_after(Planner *P, const TcStmt *s)
{
	for (int i = 0; i < P->live.len; i++) {
		const LiveOut *r = P->live.items[i];
		if (r->s == s)
			return r->set;
	}
	tc_unreachable();
}

/* The buffer a simple statement writes in full, or NULL. */
static const TcVar *
killed(const TcStmt *s)
{
	switch (s->kind) {
	case TC_ST_DECL:
		return s->u.decl.var->kind == TC_VAR_BUFFER ? s->u.decl.var : NULL;
	case TC_ST_COPY:
		return s->u.copy.dst.whole ? s->u.copy.dst.var : NULL;
	case TC_ST_FILL:
		return s->u.fill.dst.whole ? s->u.fill.dst.var : NULL;
	case TC_ST_REDUCE:
		return s->u.reduce.dst.whole && !s->u.reduce.accumulate
			       ? s->u.reduce.dst.var : NULL;
	default:
		return NULL;
	}
}

/* live: what is live after s on entry, before s on return. */
static void
live_stmt(Planner *P, const TcStmt *s, bool *live)
{
	int nv = P->k->vars.len;
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = s->u.block.body.len - 1; i >= 0; i--) {
			const TcStmt *it = s->u.block.body.items[i];
			live_record(P, it, live);
			live_stmt(P, it, live);
			/* A run that recomputes buffers writes them before
			 * its first statement, from what the redone work
			 * reads. */
			const Fusion *F = fusion_at(P, s, i);
			for (int k = 0; F && k < F->nagain; k++)
				tc_stmt_access(F->ops[k].s, NULL, live_use, live);
			for (int k = 0; F && k < F->nagain; k++)
				for (int t = 0; t < F->tt[k].n; t++)
					if (F->tt[k].how[t] & TC_ROLE_WRITE)
						live[F->tt[k].var[t]->index] = false;
		}
		return;
	case TC_ST_IF: {
		bool *els = live_copy(P, live);
		live_stmt(P, s->u.cond.then, live);
		if (s->u.cond.els)
			live_stmt(P, s->u.cond.els, els);
		for (int v = 0; v < nv; v++)
			live[v] |= els[v];
		tc_expr_access(s->u.cond.cond, live_use, live);
		return;
	}
	case TC_ST_FOR: {
		TcFuseOp op;
		if (classify_map(P, s, &op)) {
			for (int v = 0; v < nv; v++) {
				const TcVar *var = P->k->vars.items[v];
				if (var->kind == TC_VAR_BUFFER && map_kills(&op, var))
					live[v] = false;
			}
			tc_stmt_access(s, NULL, live_use, live);
			return;
		}
		/* The body runs zero or more times. */
		for (;;) {
			bool *in = live_copy(P, live);
			live_stmt(P, s->u.loop.body, in);
			bool changed = false;
			for (int v = 0; v < nv; v++)
				if (in[v] && !live[v])
					live[v] = changed = true;
			if (!changed)
				break;
		}
		tc_expr_access(s->u.loop.begin, live_use, live);
		tc_expr_access(s->u.loop.end, live_use, live);
		tc_expr_access(s->u.loop.step, live_use, live);
		return;
	}
	default: {
		const TcVar *k = killed(s);
		if (k)
			live[k->index] = false;
		tc_stmt_access(s, NULL, live_use, live);
		return;
	}
	}
}

/* --- Planning runs ----------------------------------------------------------- */

static void
touches_add(void *ctx, const TcVar *v, int how)
{
	Touches *t = ctx;
	if (v->kind != TC_VAR_BUFFER && v->kind != TC_VAR_TENSOR)
		return;
	for (int i = 0; i < t->n; i++)
		if (t->var[i] == v) {
			t->how[i] |= how;
			return;
		}
	if (t->n == 32) {
		t->overflow = true;
		return;
	}
	t->var[t->n] = v;
	t->how[t->n++] = how;
}

static int
touches_of(const Touches *t, const TcVar *v)
{
	for (int i = 0; i < t->n; i++)
		if (t->var[i] == v)
			return t->how[i];
	return 0;
}

/* Whether op k may follow ops[0 .. k) in one run: same columns (and rows,
 * for two rank-2 ops), nothing touching a per-row buffer an earlier op
 * reduces into, no tensor written by one op and touched by another. */
static bool
joins(const TcFuseOp *ops, const Touches *tt, int k)
{
	const TcFuseOp *op = &ops[k];
	if (op->kind == TC_FUSE_STORE && op->rank == 1 && ops[0].rank == 2)
		return false;
	for (int p = 0; p < k; p++) {
		const TcFuseOp *q = &ops[p];
		if (q->cols != op->cols ||
		    (q->rank == 2 && op->rank == 2 && q->rows != op->rows) ||
		    (op->kind == TC_FUSE_STORE && op->rank == 1 && q->rank == 2))
			return false;
		if (tt[k].overflow || tt[p].overflow)
			return false;
		if (q->kind == TC_FUSE_REDUCE &&
		    touches_of(&tt[k], q->s->u.reduce.dst.var))
			return false;
		/* A buffer read by the row (r[i]) is not written by the
		 * other op but at the end of a row, by a reduction. */
		for (int i = 0; i < op->nrowread; i++)
			if (q->kind != TC_FUSE_REDUCE &&
			    (touches_of(&tt[p], op->rowread[i]) & TC_ROLE_WRITE))
				return false;
		for (int i = 0; i < q->nrowread; i++)
			if (op->kind != TC_FUSE_REDUCE &&
			    (touches_of(&tt[k], q->rowread[i]) & TC_ROLE_WRITE))
				return false;
		for (int i = 0; i < tt[k].n; i++) {
			const TcVar *v = tt[k].var[i];
			int mine = tt[k].how[i], theirs = touches_of(&tt[p], v);
			if (v->kind == TC_VAR_TENSOR && theirs &&
			    ((mine | theirs) & TC_ROLE_WRITE))
				return false;
		}
	}
	return true;
}

/* Decide which buffers the run ops[0 .. n) elides, given what is live
 * after it; returns the index of the first op the run cannot keep (n if
 * all fit): a copy into a stored buffer without a row helper, a
 * statement over the columns writing a stored buffer in a run over rows,
 * a stored copy whose buffer an earlier op touches (the copy moves to the
 * start of the row), or a copy out whose buffer a later op writes (it
 * moves to the end). */
static int
plan_elision(Planner *P, TcFuseOp *ops, const Touches *tt, int n,
	     const bool *live, bool *elided)
{
	int nv = P->k->vars.len, rank = 1;
	for (int k = 0; k < n; k++)
		rank = ops[k].rank > rank ? ops[k].rank : rank;
	memset(elided, 0, ((size_t)nv + 1) * sizeof *elided);
	for (int v = 0; v < nv; v++) {
		const TcVar *var = P->k->vars.items[v];
		if (var->kind != TC_VAR_BUFFER || live[v])
			continue;
		/* Killed: the first op that touches it (reading or writing)
		 * writes all of it before reading it. */
		bool kill = false, touched = false, stored = false;
		for (int k = 0; k < n && !stored; k++) {
			int how = touches_of(&tt[k], var);
			if (!how)
				continue;
			const TcFuseOp *op = &ops[k];
			bool first = !touched;
			touched = true;
			stored |= op->kind == TC_FUSE_STORE;
			if (first)
				kill = (op->kind == TC_FUSE_LOAD && op->buf == var) ||
				       (op->kind == TC_FUSE_MAP && map_kills(op, var));
		}
		elided[v] = kill && !stored &&
			    (var->rank == rank || (var->rank == 1 && rank == 2));
	}
	for (int k = 0; k < n; k++) {
		const TcFuseOp *op = &ops[k];
		bool broadcast = op->rank == 1 && rank == 2;
		if (op->kind == TC_FUSE_LOAD) {
			/* A stored copy over the columns alone copies its row
			 * once, before the rows. */
			if (elided[op->buf->index] || !broadcast)
				continue;
			if (!op->helper)
				return k;
			for (int p = 0; p < k; p++)
				if (touches_of(&tt[p], op->buf))
					return k;
		} else if (op->kind == TC_FUSE_STORE) {
			for (int p = k + 1; p < n; p++)
				if (touches_of(&tt[p], op->buf) & TC_ROLE_WRITE)
					return k;
		} else if (op->kind == TC_FUSE_MAP && broadcast) {
			for (int i = 0; i < tt[k].n; i++)
				if ((tt[k].how[i] & TC_ROLE_WRITE) &&
				    !elided[tt[k].var[i]->index])
					return k;
		}
	}
	return n;
}

/* Plan the runs among the statements of one block, then of the blocks
 * inside them (not inside tile_parallel loops: tile ops live at block
 * level). */
static void
plan_block(Planner *P, const TcStmt *block)
{
	int n = block->u.block.body.len;
	TcFuseOp *ops = tc_alloc(P->a, (size_t)(n + 1) * sizeof *ops);
	Touches *tt = tc_alloc(P->a, (size_t)(n + 1) * sizeof *tt);
	bool *ok = tc_alloc(P->a, (size_t)(n + 1) * sizeof *ok);
	for (int i = 0; i < n; i++) {
		const TcStmt *s = block->u.block.body.items[i];
		ok[i] = classify(P, s, &ops[i]);
		if (ok[i])
			tc_stmt_access(s, NULL, touches_add, &tt[i]);
	}
	for (int i = 0; i < n;) {
		int len = 0;
		while (i + len < n && ok[i + len] &&
		       joins(&ops[i], &tt[i], len))
			len++;
		bool *elided = live_copy(P, NULL);
		while (len >= 2) {
			const TcStmt *last = block->u.block.body.items[i + len - 1];
			int keep = plan_elision(P, &ops[i], &tt[i], len,
						live_after(P, last), elided);
			if (keep == len)
				break;
			len = keep;
		}
		/* Copies alone have no element loop to share. */
		bool work = false;
		for (int k = 0; k < len; k++)
			work |= ops[i + k].kind == TC_FUSE_MAP ||
				ops[i + k].kind == TC_FUSE_REDUCE;
		if (len < 2 || !work) {
			i++;
			continue;
		}
		Fusion *F = tc_alloc(P->a, sizeof *F);
		*F = (Fusion){ .block = block, .first = i, .nstmts = len,
			       .n = len, .ops = &ops[i], .tt = &tt[i],
			       .elided = elided, .rank = 1 };
		for (int k = 0; k < len; k++) {
			TcFuseOp *op = &ops[i + k];
			if (op->kind == TC_FUSE_LOAD)
				op->elided = elided[op->buf->index];
			if (op->rank >= F->rank) {
				F->rank = op->rank;
				F->rows = op->rows;
				F->cols = op->cols;
				F->ext[0] = op->ext[0];
				F->ext[1] = op->ext[1];
			}
		}
		tc_vec_push(P->a, &P->fusions, F);
		i += len;
	}
	for (int i = 0; i < n; i++) {
		const TcStmt *s = block->u.block.body.items[i];
		if (s->kind == TC_ST_BLOCK)
			plan_block(P, s);
		else if (s->kind == TC_ST_FOR && s->u.loop.kind != TC_LOOP_PARALLEL)
			plan_block(P, s->u.loop.body);
		else if (s->kind == TC_ST_IF) {
			plan_block(P, s->u.cond.then);
			if (s->u.cond.els)
				plan_block(P, s->u.cond.els);
		}
	}
}


static void
mark_all(void *ctx, const TcVar *v, int how)
{
	bool *set = ctx;
	(void)how;
	set[v->index] = true;
}

/* Mark in stored the buffers some statement accesses in memory: any
 * access outside a run, or inside one that keeps the buffer. */
static void
mark_stored(Planner *P, const TcStmt *s, bool *stored)
{
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++) {
			const Fusion *F = fusion_at(P, s, i);
			if (!F) {
				mark_stored(P, s->u.block.body.items[i], stored);
				continue;
			}
			bool *t = live_copy(P, NULL);
			for (int k = 0; k < F->n; k++)
				tc_stmt_access(F->ops[k].s, NULL, mark_all, t);
			for (int v = 0; v < P->k->vars.len; v++)
				stored[v] |= t[v] && !F->elided[v];
			i += F->nstmts - 1;
		}
		return;
	case TC_ST_FOR:
		tc_expr_access(s->u.loop.begin, mark_all, stored);
		tc_expr_access(s->u.loop.end, mark_all, stored);
		tc_expr_access(s->u.loop.step, mark_all, stored);
		mark_stored(P, s->u.loop.body, stored);
		return;
	case TC_ST_IF:
		tc_expr_access(s->u.cond.cond, mark_all, stored);
		mark_stored(P, s->u.cond.then, stored);
		if (s->u.cond.els)
			mark_stored(P, s->u.cond.els, stored);
		return;
	case TC_ST_DECL:
		tc_expr_access(s->u.decl.init, mark_all, stored);
		return;
	default:
		tc_stmt_access(s, NULL, mark_all, stored);
		return;
	}
}

/* --- Recomputing instead of storing ------------------------------------------ */
/*
 * A run that reads a buffer an earlier run of the same block wrote can
 * redo that writing instead (softmax: the copy of X and the mask that the
 * max reduction's run computed, redone in the exp run): the buffer is
 * then written and read only inside runs, and, dead between them, stored
 * by neither.  Reading the tensor again from cache costs a core far less
 * than storing a row while it streams in from memory.  The redone work is
 * the earlier run's ops that write the buffer: the first writes all of
 * it, and each is a copy from a tensor or a nest without calls that
 * writes only the buffer and reads, besides it, per-row or per-column
 * buffers, scalars and locals.  Nothing from the first of those ops to
 * the later run may write what they read, nor touch the buffer outside
 * them; the later run may not write a tensor they read.  A recompute
 * that does not end with the buffer kept in registers by both runs is
 * undone.
 */

/* Whether s assigns local v. */
static bool
is_assign_of(const TcStmt *s, const void *v)
{
	return s->kind == TC_ST_ASSIGN && s->u.assign.dst->kind == TC_EX_VAR &&
	       s->u.assign.dst->u.var == v;
}

/* The locals statements read, and whether they call anything. */
typedef struct Locals {
	TcArena *a; /* where out grows */
	TcVec *out; /* TcVar *: the locals read */
	bool calls; /* some expression is a call */
} Locals;

static TcVisit
local_read(void *ctx, const TcExpr *e)
{
	Locals *l = ctx;
	if (e->kind == TC_EX_VAR && e->u.var->kind == TC_VAR_LOCAL)
		tc_vec_push(l->a, l->out, e->u.var);
	l->calls |= e->kind == TC_EX_CALL;
	return TC_VISIT_INTO;
}

static bool
stmt_locals(const TcStmt *s, TcVec *out, TcArena *a)
{
	Locals l = { a, out, false };
	tc_stmt_visit(s, &(TcVisitor){ .expr = local_read, .ctx = &l });
	return l.calls;
}

/* The ops of F1 that F2 would redo to recompute b (their indices in
 * chain), or 0 if it may not. */
static int
recompute_chain(Planner *P, const Fusion *F1, const Fusion *F2,
		const TcVar *b, int *chain)
{
	const TcStmt *block = F1->block;
	int nc = 0;
	for (int k = 0; k < F1->n && nc < 8; k++)
		if (touches_of(&F1->tt[k], b) & TC_ROLE_WRITE)
			chain[nc++] = k;
	if (nc == 0 || nc == 8)
		return 0;
	const TcFuseOp *first = &F1->ops[chain[0]];
	if (!(first->kind == TC_FUSE_LOAD && first->buf == b) &&
	    !(first->kind == TC_FUSE_MAP && map_kills(first, b)))
		return 0;
	/* What the chain reads, besides b. */
	TcVec locals = { 0 };
	const TcVar *reads[64];
	int nreads = 0;
	for (int c = 0; c < nc; c++) {
		const TcFuseOp *op = &F1->ops[chain[c]];
		const Touches *t = &F1->tt[chain[c]];
		if (op->kind != TC_FUSE_LOAD && op->kind != TC_FUSE_MAP)
			return 0;
		for (int i = 0; i < t->n; i++) {
			const TcVar *v = t->var[i];
			if (v == b)
				continue;
			if ((t->how[i] & TC_ROLE_WRITE) ||
			    (v->kind == TC_VAR_BUFFER && v->rank != 1) || nreads == 64)
				return 0;
			reads[nreads++] = v;
		}
		if (stmt_locals(op->s, &locals, P->a))
			return 0;
	}
	/* Nothing from the chain's start to F2 writes what it reads or
	 * touches b outside it; F2 writes none of its tensors. */
	for (int k = chain[0]; k < F1->n; k++) {
		bool in_chain = false;
		for (int c = 0; c < nc; c++)
			in_chain |= chain[c] == k;
		for (int r = 0; r < nreads; r++)
			if (touches_of(&F1->tt[k], reads[r]) & TC_ROLE_WRITE)
				return 0;
		if (!in_chain && (touches_of(&F1->tt[k], b) & TC_ROLE_WRITE))
			return 0;
	}
	for (int i = F1->first + F1->nstmts; i < F2->first; i++) {
		const TcStmt *s = block->u.block.body.items[i];
		if (tc_stmt_touches(s, NULL, b))
			return 0;
		for (int r = 0; r < nreads; r++)
			if (tc_stmt_touches(s, NULL, reads[r]) & TC_ROLE_WRITE)
				return 0;
		for (int l = 0; l < locals.len; l++)
			if (count_stmts(s, is_assign_of, locals.items[l]))
				return 0;
	}
	for (int k = 0; k < F2->n; k++)
		for (int r = 0; r < nreads; r++)
			if (touches_of(&F2->tt[k], reads[r]) & TC_ROLE_WRITE)
				return 0;
	return nc;
}

/* The latest run of F2's block before it that writes b, or NULL. */
static const Fusion *
writer_before(Planner *P, const Fusion *F2, const TcVar *b)
{
	const Fusion *best = NULL;
	for (int f = 0; f < P->fusions.len; f++) {
		const Fusion *F = P->fusions.items[f];
		if (F->block != F2->block || F->first + F->nstmts > F2->first ||
		    (best && best->first > F->first))
			continue;
		for (int k = 0; k < F->n; k++)
			if (touches_of(&F->tt[k], b) & TC_ROLE_WRITE) {
				best = F;
				break;
			}
	}
	return best;
}

/* Give the runs that do not recompute anything yet what they can
 * recompute, but not the (run, buffer) pairs in rejected; returns whether
 * any run changed. */
static bool
add_recomputes(Planner *P, const TcVec *rejected)
{
	bool changed = false;
	for (int f = 0; f < P->fusions.len; f++) {
		Fusion *F2 = P->fusions.items[f];
		if (F2->nagain)
			continue;
		for (int v = 0; v < P->k->vars.len &&
				F2->nrecomputed < TC_FUSE_MAX_AGAIN;
		     v++) {
			const TcVar *b = P->k->vars.items[v];
			if (b->kind != TC_VAR_BUFFER || b->rank != F2->rank)
				continue;
			/* F2 reads b before it writes it. */
			int how = 0;
			for (int k = F2->nagain; k < F2->n && !how; k++)
				how = touches_of(&F2->tt[k], b);
			if (!(how & TC_ROLE_READ))
				continue;
			bool no = false;
			for (int r = 0; r + 1 < rejected->len; r += 2)
				no |= rejected->items[r] == F2 &&
				      rejected->items[r + 1] == b;
			const Fusion *F1 = writer_before(P, F2, b);
			int chain[8], nc;
			if (no || !F1 || F1->rows != F2->rows || F1->cols != F2->cols ||
			    !(nc = recompute_chain(P, F1, F2, b, chain)))
				continue;
			int n = F2->n + nc;
			TcFuseOp *ops = tc_alloc(P->a, (size_t)n * sizeof *ops);
			Touches *tt = tc_alloc(P->a, (size_t)n * sizeof *tt);
			for (int c = 0; c < nc; c++) {
				ops[c] = F1->ops[chain[c]];
				tt[c] = F1->tt[chain[c]];
			}
			memcpy(ops + nc, F2->ops, (size_t)F2->n * sizeof *ops);
			memcpy(tt + nc, F2->tt, (size_t)F2->n * sizeof *tt);
			bool ok = true;
			for (int k = nc; k < n && ok; k++)
				ok = joins(ops, tt, k);
			if (!ok)
				continue;
			if (!F2->ops0) {
				F2->ops0 = F2->ops;
				F2->tt0 = F2->tt;
			}
			F2->ops = ops;
			F2->tt = tt;
			F2->n = n;
			F2->nagain += nc;
			F2->again[F2->nrecomputed] = b;
			F2->from[F2->nrecomputed++] = F1;
			changed = true;
		}
	}
	return changed;
}

/* Liveness over the body as the runs now are, then each run's elided
 * buffers.  A run that recomputes and can no longer keep all its ops, or
 * whose recomputed buffer is not kept in registers by it and by the run
 * it redoes, goes back to its own statements; that (run, buffer) pair is
 * added to rejected.  Returns whether any run went back. */
static bool
replan(Planner *P, TcVec *rejected)
{
	P->live.len = 0;
	bool *live = live_copy(P, NULL);
	live_stmt(P, P->k->body, live);
	for (int f = 0; f < P->fusions.len; f++) {
		Fusion *F = P->fusions.items[f];
		const TcStmt *last =
			F->block->u.block.body.items[F->first + F->nstmts - 1];
		bool *elided = live_copy(P, NULL);
		F->kept = plan_elision(P, F->ops, F->tt, F->n,
				       live_after(P, last), elided) == F->n;
		/* (Less is live than when the run was planned: its old
		 * choice stays valid if the new one fails.) */
		if (F->kept)
			F->elided = elided;
	}
	bool undone = false;
	for (int f = 0; f < P->fusions.len; f++) {
		Fusion *F = P->fusions.items[f];
		for (int r = 0; r < F->nrecomputed; r++) {
			const TcVar *b = F->again[r];
			if (F->kept && F->elided[b->index] &&
			    F->from[r]->elided[b->index])
				continue;
			tc_vec_push(P->a, rejected, F);
			tc_vec_push(P->a, rejected, (void *)b);
			F->ops = F->ops0;
			F->tt = F->tt0;
			F->n -= F->nagain;
			F->nagain = F->nrecomputed = 0;
			undone = true;
			break;
		}
	}
	return undone;
}

/* Whether a run's work is all dead: it copies in and computes only
 * buffers it keeps in registers (so nothing reads them after it: a later
 * run that reads them recomputes them), and stores and reduces nothing.
 * A nest writes nothing but buffers (the check rejects assigning a
 * block-level local inside tile_parallel). */
static bool
run_is_dead(const Fusion *F)
{
	for (int k = 0; k < F->n; k++) {
		const TcFuseOp *op = &F->ops[k];
		if (op->kind != TC_FUSE_LOAD && op->kind != TC_FUSE_MAP)
			return false;
		const Touches *t = &F->tt[k];
		if (t->overflow)
			return false;
		for (int i = 0; i < t->n; i++)
			if ((t->how[i] & TC_ROLE_WRITE) &&
			    (t->var[i]->kind != TC_VAR_BUFFER ||
			     !F->elided[t->var[i]->index]))
				return false;
	}
	return true;
}

/* Liveness, then the runs of the whole body and what they recompute,
 * then the buffers no statement stores (their declarations are left
 * out). */
static void
plan_fusion(Planner *P)
{
	bool *live = live_copy(P, NULL);
	live_stmt(P, P->k->body, live);
	plan_block(P, P->k->body);
	TcVec rejected = { 0 };
	while (add_recomputes(P, &rejected)) {
		while (replan(P, &rejected))
			;
	}
	for (int f = 0; f < P->fusions.len; f++) {
		Fusion *F = P->fusions.items[f];
		for (int k = 0; k < F->n; k++)
			if (F->ops[k].kind == TC_FUSE_LOAD)
				F->ops[k].elided = F->elided[F->ops[k].buf->index];
		F->dead = run_is_dead(F);
	}
	bool *stored = live_copy(P, NULL);
	bool *elided = live_copy(P, NULL);
	mark_stored(P, P->k->body, stored);
	for (int f = 0; f < P->fusions.len; f++) {
		const Fusion *F = P->fusions.items[f];
		for (int v = 0; v < P->k->vars.len; v++)
			elided[v] |= F->elided[v];
	}
	for (int v = 0; v < P->k->vars.len; v++)
		((TcVar *)P->k->vars.items[v])->unstored = elided[v] && !stored[v];
}

/* --- The pass ----------------------------------------------------------------- */

bool
tc_cpu_fused(const TcKernel *k, const TcStmt *s)
{
	for (int f = 0; f < k->fusions.len; f++) {
		const TcFusion *F = k->fusions.items[f];
		for (int i = 0; i < F->nstmts; i++)
			if (F->block->u.block.body.items[F->first + i] == s)
				return true;
	}
	return false;
}

bool
tc_cpu_fuse(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d)
{
	(void)opt;
	(void)d;
	for (int i = 0; i < p->kernels.len; i++) {
		TcKernel *k = p->kernels.items[i];
		size_t nv = (size_t)k->vars.len + 1;
		Planner P = { .a = a, .k = k };
		P.visible = tc_alloc(a, nv * sizeof *P.visible);
		tc_walk_block_visible(k, P.visible);
		for (int v = 0; v < k->vars.len; v++)
			((TcVar *)k->vars.items[v])->unstored = false;
		plan_fusion(&P);
		k->stack_bytes = tc_cpu_stored_bytes(k);
		k->fusions = (TcVec){ 0 };
		for (int f = 0; f < P.fusions.len; f++) {
			const Fusion *F = P.fusions.items[f];
			TcFusion *out = tc_alloc(a, sizeof *out);
			*out = (TcFusion){ .block = F->block, .first = F->first,
					   .nstmts = F->nstmts, .n = F->n,
					   .nagain = F->nagain, .ops = F->ops,
					   .nrecomputed = F->nrecomputed,
					   .rank = F->rank, .rows = F->rows,
					   .cols = F->cols, .ext = { F->ext[0],
								     F->ext[1] },
					   .elided = F->elided, .dead = F->dead };
			for (int r = 0; r < F->nrecomputed; r++) {
				out->again[r] = F->again[r];
				out->from[r] = -1;
				for (int g = 0; g < P.fusions.len; g++)
					if (P.fusions.items[g] == F->from[r])
						out->from[r] = g;
			}
			tc_vec_push(a, &k->fusions, out);
		}
	}
	return true;
}
