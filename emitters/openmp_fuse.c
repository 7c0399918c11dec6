/*
 * openmp_fuse.c - the OpenMP backend's row-wise fusion: runs of
 * block-level statements printed as one pass per row.
 *
 * Input: the kernel's body as openmp.c scanned it (scopes, initializers,
 * loops) and its Emitter.  Output: tc_omp_plan_fusion records the runs of
 * the whole body before anything is printed, and the buffers no statement
 * stores; while openmp.c prints a block, tc_omp_fusion_at says whether a
 * run starts at a statement and tc_omp_emit_fusion prints it in place of
 * its statements, through openmp.c's printing helpers (openmp.h).
 *
 * Consecutive block-level statements that each touch a tile element by
 * element over the same index space run as one loop nest: for each row of
 * the tile, the rows that are copied in, then one vectorized loop over
 * the row's elements doing every statement's work on each element in
 * turn, then the row's reduction results and the rows copied out.  An
 * element then stays in registers from one statement to the next instead
 * of going through a buffer once per statement.  The statements that can
 * join (FuseOp):
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
 * are read) is dead and prints as a comment.  A copy in reads the
 * tensor's elements in the loop, into the local or into the buffer (a
 * stored buffer over the columns alone is copied once, before the rows).  Element loads run in
 * two loops: the columns inside the tensors, then (for partial tiles
 * only) the columns past an edge, which read as zero; gcc keeps a sum
 * reduction in a register only when the load is not masked, and an
 * element copy inside the loop costs less than a row copy before it
 * (rmsnorm: +8 %).
 */
#include "openmp.h"

#include <stdio.h>
#include <string.h>

/* --- Which statements run as one pass per row --------------------------------- */

/* How one block-level statement touches its tile, for fusion. */
typedef enum FuseKind {
	FUSE_LOAD,   /* tile_copy(buffer, tensor region) */
	FUSE_STORE,  /* tile_copy(tensor region, buffer) */
	FUSE_MAP,    /* element-wise tile_parallel nest */
	FUSE_REDUCE, /* tile_reduce_* along the last dim */
} FuseKind;

typedef struct FuseOp {
	const TcStmt *s;      /* the statement */
	FuseKind kind;        /* what it is */
	int rank;             /* 2: over rows and columns; 1: columns only */
	long long rows, cols; /* its index space (rows is 1 at rank 1) */
	const TcExpr *ext[2]; /* rows and columns as written (ext[0] NULL at
				 rank 1) */
	const TcVar *buf;     /* LOAD, STORE: the buffer; REDUCE: the source */
	const TcRegion *reg;  /* LOAD, STORE: the tensor region */
	const TcStmt *body;   /* MAP: the innermost loop's body (a BLOCK) */
	const TcVar *var[2];  /* MAP: its loop vars, rows then columns
				 (var[0] NULL at rank 1) */
	const TcVar *rowread[8]; /* MAP: per-row buffers it reads, r[i] */
	int nrowread;         /* (9 or more: not fusable) */
	bool helper;          /* LOAD, STORE: rows copy by tilec_load_* /
				 tilec_store_* */
	/* Decided when the run is planned and printed: */
	bool elided;          /* LOAD: its buffer is elided (element loads) */
	CopyPlan cp;          /* LOAD, STORE: names of its bounds */
	const char *valid;    /* elided LOAD: the columns of the current row
				 inside the tensor, NULL if all are */
	const char *acc;      /* REDUCE: the accumulator's name */
	const char *vacc;     /* REDUCE: its vector's, in a vector loop */
	bool streamed;        /* STORE: written from the vector loop */
	bool braced;          /* MAP: printed in braces, loop vars aliased */
} FuseOp;

/* What one statement reads and writes (tc_stmt_access). */
typedef struct Touches {
	const TcVar *var[32]; /* distinct vars */
	int how[32];          /* TC_ROLE_* of each */
	int n;                /* how many */
	bool overflow;        /* more than 32: treat as touching everything */
} Touches;

/* A run of statements block[first .. first + nstmts) printed as one
 * nest. */
struct Fusion {
	const TcStmt *block;  /* the BLOCK holding them */
	int first, nstmts;    /* which of its statements */
	int n;                /* ops: nagain recomputed, then one per statement */
	int nagain;           /* ops[0 .. nagain) redo an earlier run's work */
	FuseOp *ops;          /* what each does */
	Touches *tt;          /* what each reads and writes */
	FuseOp *ops0;         /* the ops and touches without the redone work */
	Touches *tt0;
	const TcVar *again[8];   /* the buffers it recomputes */
	const Fusion *from[8];   /* the run whose writes of each it redoes */
	int nrecomputed;
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
tile_space(const TcVar *v, FuseOp *op)
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
map_elem_ok(FuseOp *op, const TcVar *v, TcExpr *const *idx, bool write)
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
	Emitter *E;     /* the emitter (which locals are visible) */
	FuseOp *op;     /* the nest checked */
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
			if (v->kind != TC_VAR_LOCAL || m->E->visible[v->index])
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
map_body_ok(Emitter *E, FuseOp *op, const TcStmt *body)
{
	MapCheck m = { E, op, true, { 0 } };
	m.walk = (TcVisitor){ .expr = map_expr_ok, .stmt = map_stmt_ok,
			      .ctx = &m };
	tc_stmt_visit(body, &m.walk);
	return m.ok;
}

/* A block-level tile_parallel nest of one or two loops with constant
 * extents whose innermost body has no loop and is element-wise. */
static bool
classify_map(Emitter *E, const TcStmt *s, FuseOp *op)
{
	*op = (FuseOp){ .s = s, .kind = FUSE_MAP };
	if (s->kind != TC_ST_FOR || s->u.loop.kind != TC_LOOP_PARALLEL)
		return false;
	const TcStmt *loops[2] = { s, tc_omp_nested_parallel(s) };
	int rank = loops[1] ? 2 : 1;
	if (rank == 2 && tc_omp_nested_parallel(loops[1]))
		return false;
	long long ext[2];
	for (int d = 0; d < rank; d++)
		if (!tc_expr_const(loops[d]->u.loop.end, &ext[d]) || ext[d] <= 0)
			return false;
	const TcStmt *body = loops[rank - 1]->u.loop.body;
	if (tc_omp_has_loop(body))
		return false;
	op->rank = rank;
	op->rows = rank == 2 ? ext[0] : 1;
	op->cols = ext[rank - 1];
	op->ext[0] = rank == 2 ? loops[0]->u.loop.end : NULL;
	op->ext[1] = loops[rank - 1]->u.loop.end;
	op->var[0] = rank == 2 ? loops[0]->u.loop.var : NULL;
	op->var[1] = loops[rank - 1]->u.loop.var;
	op->body = body;
	return map_body_ok(E, op, body);
}

/* Whether a block-level statement can join a fused run, and how. */
static bool
classify(Emitter *E, const TcStmt *s, FuseOp *op)
{
	*op = (FuseOp){ .s = s };
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
			if (!tc_omp_origin_nonneg(reg, reg->dims[t]))
				return false;
		op->kind = load ? FUSE_LOAD : FUSE_STORE;
		op->buf = buf;
		op->reg = reg;
		op->helper =
			tc_omp_row_helper(reg->var->dtype) &&
			strcmp(tc_omp_value_type(buf->dtype), "float") == 0 &&
			!(load && tc_omp_is_narrow_float(buf->dtype) &&
			  buf->dtype != reg->var->dtype);
		return load || op->helper;
	}
	case TC_ST_REDUCE: {
		const TcVar *src = s->u.reduce.src.var;
		if (!s->u.reduce.src.whole || !s->u.reduce.dst.whole ||
		    src->rank != 2 || s->u.reduce.dim != 1 || !tile_space(src, op))
			return false;
		op->kind = FUSE_REDUCE;
		op->buf = src;
		return true;
	}
	case TC_ST_FOR:
		return classify_map(E, s, op);
	default:
		return false;
	}
}

/* Whether a MAP writes all of v before reading any of it: the first of
 * its body's top-level statements that touches v assigns v at the nest's
 * indices, unconditionally, from a value that does not read v. */
static bool
map_kills(const FuseOp *op, const TcVar *v)
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
live_copy(Emitter *E, const bool *from)
{
	size_t n = (size_t)E->k->vars.len + 1;
	bool *set = tc_alloc(E->a, n * sizeof *set);
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
live_record(Emitter *E, const TcStmt *s, const bool *set)
{
	for (int i = 0; i < E->live.len; i++) {
		LiveOut *r = E->live.items[i];
		if (r->s == s) {
			memcpy(r->set, set, ((size_t)E->k->vars.len + 1) * sizeof *set);
			return;
		}
	}
	LiveOut *r = tc_alloc(E->a, sizeof *r);
	r->s = s;
	r->set = live_copy(E, set);
	tc_vec_push(E->a, &E->live, r);
}

static const bool *
live_after(Emitter *E, const TcStmt *s)
{
	for (int i = 0; i < E->live.len; i++) {
		const LiveOut *r = E->live.items[i];
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
live_stmt(Emitter *E, const TcStmt *s, bool *live)
{
	int nv = E->k->vars.len;
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = s->u.block.body.len - 1; i >= 0; i--) {
			const TcStmt *it = s->u.block.body.items[i];
			live_record(E, it, live);
			live_stmt(E, it, live);
			/* A run that recomputes buffers writes them before
			 * its first statement, from what the redone work
			 * reads. */
			const Fusion *F = tc_omp_fusion_at(E, s, i);
			for (int k = 0; F && k < F->nagain; k++)
				tc_stmt_access(F->ops[k].s, NULL, live_use, live);
			for (int k = 0; F && k < F->nagain; k++)
				for (int t = 0; t < F->tt[k].n; t++)
					if (F->tt[k].how[t] & TC_ROLE_WRITE)
						live[F->tt[k].var[t]->index] = false;
		}
		return;
	case TC_ST_IF: {
		bool *els = live_copy(E, live);
		live_stmt(E, s->u.cond.then, live);
		if (s->u.cond.els)
			live_stmt(E, s->u.cond.els, els);
		for (int v = 0; v < nv; v++)
			live[v] |= els[v];
		tc_expr_access(s->u.cond.cond, live_use, live);
		return;
	}
	case TC_ST_FOR: {
		FuseOp op;
		if (classify_map(E, s, &op)) {
			for (int v = 0; v < nv; v++) {
				const TcVar *var = E->k->vars.items[v];
				if (var->kind == TC_VAR_BUFFER && map_kills(&op, var))
					live[v] = false;
			}
			tc_stmt_access(s, NULL, live_use, live);
			return;
		}
		/* The body runs zero or more times. */
		for (;;) {
			bool *in = live_copy(E, live);
			live_stmt(E, s->u.loop.body, in);
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
joins(const FuseOp *ops, const Touches *tt, int k)
{
	const FuseOp *op = &ops[k];
	if (op->kind == FUSE_STORE && op->rank == 1 && ops[0].rank == 2)
		return false;
	for (int p = 0; p < k; p++) {
		const FuseOp *q = &ops[p];
		if (q->cols != op->cols ||
		    (q->rank == 2 && op->rank == 2 && q->rows != op->rows) ||
		    (op->kind == FUSE_STORE && op->rank == 1 && q->rank == 2))
			return false;
		if (tt[k].overflow || tt[p].overflow)
			return false;
		if (q->kind == FUSE_REDUCE &&
		    touches_of(&tt[k], q->s->u.reduce.dst.var))
			return false;
		/* A buffer read by the row (r[i]) is not written by the
		 * other op but at the end of a row, by a reduction. */
		for (int i = 0; i < op->nrowread; i++)
			if (q->kind != FUSE_REDUCE &&
			    (touches_of(&tt[p], op->rowread[i]) & TC_ROLE_WRITE))
				return false;
		for (int i = 0; i < q->nrowread; i++)
			if (op->kind != FUSE_REDUCE &&
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
plan_elision(Emitter *E, FuseOp *ops, const Touches *tt, int n,
	     const bool *live, bool *elided)
{
	int nv = E->k->vars.len, rank = 1;
	for (int k = 0; k < n; k++)
		rank = ops[k].rank > rank ? ops[k].rank : rank;
	memset(elided, 0, ((size_t)nv + 1) * sizeof *elided);
	for (int v = 0; v < nv; v++) {
		const TcVar *var = E->k->vars.items[v];
		if (var->kind != TC_VAR_BUFFER || live[v])
			continue;
		/* Killed: the first op that touches it (reading or writing)
		 * writes all of it before reading it. */
		bool kill = false, touched = false, stored = false;
		for (int k = 0; k < n && !stored; k++) {
			int how = touches_of(&tt[k], var);
			if (!how)
				continue;
			const FuseOp *op = &ops[k];
			bool first = !touched;
			touched = true;
			stored |= op->kind == FUSE_STORE;
			if (first)
				kill = (op->kind == FUSE_LOAD && op->buf == var) ||
				       (op->kind == FUSE_MAP && map_kills(op, var));
		}
		elided[v] = kill && !stored &&
			    (var->rank == rank || (var->rank == 1 && rank == 2));
	}
	for (int k = 0; k < n; k++) {
		const FuseOp *op = &ops[k];
		bool broadcast = op->rank == 1 && rank == 2;
		if (op->kind == FUSE_LOAD) {
			/* A stored copy over the columns alone copies its row
			 * once, before the rows. */
			if (elided[op->buf->index] || !broadcast)
				continue;
			if (!op->helper)
				return k;
			for (int p = 0; p < k; p++)
				if (touches_of(&tt[p], op->buf))
					return k;
		} else if (op->kind == FUSE_STORE) {
			for (int p = k + 1; p < n; p++)
				if (touches_of(&tt[p], op->buf) & TC_ROLE_WRITE)
					return k;
		} else if (op->kind == FUSE_MAP && broadcast) {
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
plan_block(Emitter *E, const TcStmt *block)
{
	int n = block->u.block.body.len;
	FuseOp *ops = tc_alloc(E->a, (size_t)(n + 1) * sizeof *ops);
	Touches *tt = tc_alloc(E->a, (size_t)(n + 1) * sizeof *tt);
	bool *ok = tc_alloc(E->a, (size_t)(n + 1) * sizeof *ok);
	for (int i = 0; i < n; i++) {
		const TcStmt *s = block->u.block.body.items[i];
		ok[i] = classify(E, s, &ops[i]);
		if (ok[i])
			tc_stmt_access(s, NULL, touches_add, &tt[i]);
	}
	for (int i = 0; i < n;) {
		int len = 0;
		while (i + len < n && ok[i + len] &&
		       joins(&ops[i], &tt[i], len))
			len++;
		bool *elided = live_copy(E, NULL);
		while (len >= 2) {
			const TcStmt *last = block->u.block.body.items[i + len - 1];
			int keep = plan_elision(E, &ops[i], &tt[i], len,
						live_after(E, last), elided);
			if (keep == len)
				break;
			len = keep;
		}
		/* Copies alone have no element loop to share. */
		bool work = false;
		for (int k = 0; k < len; k++)
			work |= ops[i + k].kind == FUSE_MAP ||
				ops[i + k].kind == FUSE_REDUCE;
		if (len < 2 || !work) {
			i++;
			continue;
		}
		Fusion *F = tc_alloc(E->a, sizeof *F);
		*F = (Fusion){ .block = block, .first = i, .nstmts = len,
			       .n = len, .ops = &ops[i], .tt = &tt[i],
			       .elided = elided, .rank = 1 };
		for (int k = 0; k < len; k++) {
			FuseOp *op = &ops[i + k];
			if (op->kind == FUSE_LOAD)
				op->elided = elided[op->buf->index];
			if (op->rank >= F->rank) {
				F->rank = op->rank;
				F->rows = op->rows;
				F->cols = op->cols;
				F->ext[0] = op->ext[0];
				F->ext[1] = op->ext[1];
			}
		}
		tc_vec_push(E->a, &E->fusions, F);
		i += len;
	}
	for (int i = 0; i < n; i++) {
		const TcStmt *s = block->u.block.body.items[i];
		if (s->kind == TC_ST_BLOCK)
			plan_block(E, s);
		else if (s->kind == TC_ST_FOR && s->u.loop.kind != TC_LOOP_PARALLEL)
			plan_block(E, s->u.loop.body);
		else if (s->kind == TC_ST_IF) {
			plan_block(E, s->u.cond.then);
			if (s->u.cond.els)
				plan_block(E, s->u.cond.els);
		}
	}
}

int
tc_omp_fusion_len(const Fusion *F)
{
	return F->nstmts;
}

/* The run that starts at statement i of block, or NULL. */
const Fusion *
tc_omp_fusion_at(Emitter *E, const TcStmt *block, int i)
{
	for (int f = 0; f < E->fusions.len; f++) {
		const Fusion *F = E->fusions.items[f];
		if (F->block == block && F->first == i)
			return F;
	}
	return NULL;
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
mark_stored(Emitter *E, const TcStmt *s, bool *stored)
{
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++) {
			const Fusion *F = tc_omp_fusion_at(E, s, i);
			if (!F) {
				mark_stored(E, s->u.block.body.items[i], stored);
				continue;
			}
			bool *t = live_copy(E, NULL);
			for (int k = 0; k < F->n; k++)
				tc_stmt_access(F->ops[k].s, NULL, mark_all, t);
			for (int v = 0; v < E->k->vars.len; v++)
				stored[v] |= t[v] && !F->elided[v];
			i += F->nstmts - 1;
		}
		return;
	case TC_ST_FOR:
		tc_expr_access(s->u.loop.begin, mark_all, stored);
		tc_expr_access(s->u.loop.end, mark_all, stored);
		tc_expr_access(s->u.loop.step, mark_all, stored);
		mark_stored(E, s->u.loop.body, stored);
		return;
	case TC_ST_IF:
		tc_expr_access(s->u.cond.cond, mark_all, stored);
		mark_stored(E, s->u.cond.then, stored);
		if (s->u.cond.els)
			mark_stored(E, s->u.cond.els, stored);
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

/* Whether s assigns local v, or (is_store) element v[...] of a buffer. */
static bool
is_assign_of(const TcStmt *s, const void *v)
{
	return s->kind == TC_ST_ASSIGN &&
	       tc_omp_is_var_expr(s->u.assign.dst, v);
}

static bool
is_store(const TcStmt *s, const void *v)
{
	return s->kind == TC_ST_ASSIGN && s->u.assign.dst->kind == TC_EX_LOAD &&
	       s->u.assign.dst->u.load.var == v;
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
recompute_chain(Emitter *E, const Fusion *F1, const Fusion *F2,
		const TcVar *b, int *chain)
{
	const TcStmt *block = F1->block;
	int nc = 0;
	for (int k = 0; k < F1->n && nc < 8; k++)
		if (touches_of(&F1->tt[k], b) & TC_ROLE_WRITE)
			chain[nc++] = k;
	if (nc == 0 || nc == 8)
		return 0;
	const FuseOp *first = &F1->ops[chain[0]];
	if (!(first->kind == FUSE_LOAD && first->buf == b) &&
	    !(first->kind == FUSE_MAP && map_kills(first, b)))
		return 0;
	/* What the chain reads, besides b. */
	TcVec locals = { 0 };
	const TcVar *reads[64];
	int nreads = 0;
	for (int c = 0; c < nc; c++) {
		const FuseOp *op = &F1->ops[chain[c]];
		const Touches *t = &F1->tt[chain[c]];
		if (op->kind != FUSE_LOAD && op->kind != FUSE_MAP)
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
		if (stmt_locals(op->s, &locals, E->a))
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
			if (tc_omp_count_nodes(NULL, s,
					       (Count){.stmt = is_assign_of,
						       .arg = locals.items[l]}))
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
writer_before(Emitter *E, const Fusion *F2, const TcVar *b)
{
	const Fusion *best = NULL;
	for (int f = 0; f < E->fusions.len; f++) {
		const Fusion *F = E->fusions.items[f];
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
add_recomputes(Emitter *E, const TcVec *rejected)
{
	bool changed = false;
	for (int f = 0; f < E->fusions.len; f++) {
		Fusion *F2 = E->fusions.items[f];
		if (F2->nagain)
			continue;
		for (int v = 0; v < E->k->vars.len && F2->nrecomputed < 8; v++) {
			const TcVar *b = E->k->vars.items[v];
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
			const Fusion *F1 = writer_before(E, F2, b);
			int chain[8], nc;
			if (no || !F1 || F1->rows != F2->rows || F1->cols != F2->cols ||
			    !(nc = recompute_chain(E, F1, F2, b, chain)))
				continue;
			int n = F2->n + nc;
			FuseOp *ops = tc_alloc(E->a, (size_t)n * sizeof *ops);
			Touches *tt = tc_alloc(E->a, (size_t)n * sizeof *tt);
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
replan(Emitter *E, TcVec *rejected)
{
	E->live.len = 0;
	bool *live = live_copy(E, NULL);
	live_stmt(E, E->k->body, live);
	for (int f = 0; f < E->fusions.len; f++) {
		Fusion *F = E->fusions.items[f];
		const TcStmt *last =
			F->block->u.block.body.items[F->first + F->nstmts - 1];
		bool *elided = live_copy(E, NULL);
		F->kept = plan_elision(E, F->ops, F->tt, F->n,
				       live_after(E, last), elided) == F->n;
		/* (Less is live than when the run was planned: its old
		 * choice stays valid if the new one fails.) */
		if (F->kept)
			F->elided = elided;
	}
	bool undone = false;
	for (int f = 0; f < E->fusions.len; f++) {
		Fusion *F = E->fusions.items[f];
		for (int r = 0; r < F->nrecomputed; r++) {
			const TcVar *b = F->again[r];
			if (F->kept && F->elided[b->index] &&
			    F->from[r]->elided[b->index])
				continue;
			tc_vec_push(E->a, rejected, F);
			tc_vec_push(E->a, rejected, (void *)b);
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
		const FuseOp *op = &F->ops[k];
		if (op->kind != FUSE_LOAD && op->kind != FUSE_MAP)
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
void
tc_omp_plan_fusion(Emitter *E)
{
	bool *live = live_copy(E, NULL);
	live_stmt(E, E->k->body, live);
	plan_block(E, E->k->body);
	TcVec rejected = { 0 };
	while (add_recomputes(E, &rejected)) {
		while (replan(E, &rejected))
			;
	}
	for (int f = 0; f < E->fusions.len; f++) {
		Fusion *F = E->fusions.items[f];
		for (int k = 0; k < F->n; k++)
			if (F->ops[k].kind == FUSE_LOAD)
				F->ops[k].elided = F->elided[F->ops[k].buf->index];
		F->dead = run_is_dead(F);
	}
	bool *stored = live_copy(E, NULL);
	bool *elided = live_copy(E, NULL);
	mark_stored(E, E->k->body, stored);
	for (int f = 0; f < E->fusions.len; f++) {
		const Fusion *F = E->fusions.items[f];
		for (int v = 0; v < E->k->vars.len; v++)
			elided[v] |= F->elided[v];
	}
	for (int v = 0; v < E->k->vars.len; v++)
		E->unstored[v] = elided[v] && !stored[v];
}

/* --- Printing a run ---------------------------------------------------------- */

/* A name for the nest, reserved until the run is printed. */
static const char *
reserve(Emitter *E, const char *base)
{
	const char *name = tc_omp_fresh(E, base);
	tc_vec_push(E->a, &E->reserved, (void *)name);
	return name;
}

/* Bounds shared by the copies of a run: each distinct origin and extent
 * declared once. */
typedef struct Bounds {
	const TcExpr *origin[16]; /* origin expressions declared */
	const char *oname[16];    /* their names */
	int norigins;
	const char *ekey[16];     /* "shape|origin|tile|fixed" of an extent */
	const char *ename[16];    /* its name */
	int nextents;
	TcBuf odecl;              /* `const int row0 = ..., col0 = ...;` */
	TcBuf edecl;              /* one `const int rows = ...;` per extent */
} Bounds;

static const char *
bounds_origin(Emitter *E, Bounds *bd, const TcExpr *o, const char *base)
{
	if (o->kind == TC_EX_INT && o->u.ival == 0)
		return NULL;
	if (o->kind == TC_EX_VAR)
		return o->u.var->name;
	for (int i = 0; i < bd->norigins; i++)
		if (tc_expr_equal(bd->origin[i], o))
			return bd->oname[i];
	tc_assert(bd->norigins < 16);
	const char *name = reserve(E, base);
	bd->origin[bd->norigins] = o;
	bd->oname[bd->norigins++] = name;
	tc_buf_printf(&bd->odecl, "%s%s = %s", bd->odecl.len ? ", " : "", name,
		      tc_omp_expr_text(E, o, TC_PREC_COMMA + 1));
	return name;
}

/* Fill op->cp's names: origins, valid extents, the fixed condition folded
 * into the first extent, as plan_copy does for one copy. */
static void
bounds_copy(Emitter *E, Bounds *bd, FuseOp *op, const char *const *idx)
{
	CopyPlan *cp = &op->cp;
	*cp = (CopyPlan){ .tile = op->buf, .reg = op->reg, .ten = op->reg->var,
			  .rank = op->buf->rank };
	int R = cp->rank;
	for (int t = 0; t < R; t++)
		cp->idx[t] = idx[2 - R + t];
	tc_omp_fixed_dims(E, cp);
	for (int t = 0; t < R; t++) {
		bool row = R == 2 && t == 0;
		int vd = cp->reg->dims[t];
		const TcExpr *o = cp->reg->origin[vd];
		cp->origin[t] = bounds_origin(E, bd, o, row ? "row0" : "col0");
		long long oc, n, e = tc_var_extent(cp->tile, t);
		const char *tile_ext =
			tc_omp_expr_text(E, cp->tile->shape[t], 0);
		bool full = tc_expr_const(o, &oc) &&
			    tc_expr_const(cp->ten->shape[vd], &n) && oc >= 0 &&
			    oc + e <= n;
		const char *fixed = t == 0 ? cp->fixed : NULL;
		if (full && !fixed) {
			cp->ext[t] = tile_ext;
			cp->partial[t] = false;
			continue;
		}
		cp->partial[t] = true;
		const char *shape = tc_omp_expr_text(E, cp->ten->shape[vd],
						     TC_PREC_COMMA + 1);
		const char *origin = cp->origin[t] ? cp->origin[t] : "0";
		const char *key = tc_fmt(E->a, "%s|%s|%s|%s", shape, origin,
					 tile_ext, fixed ? fixed : "");
		cp->ext[t] = NULL;
		for (int i = 0; i < bd->nextents; i++)
			if (strcmp(bd->ekey[i], key) == 0)
				cp->ext[t] = bd->ename[i];
		if (cp->ext[t])
			continue;
		tc_assert(bd->nextents < 16);
		const char *name = reserve(E, row ? "rows" : "cols");
		bd->ekey[bd->nextents] = key;
		bd->ename[bd->nextents++] = name;
		cp->ext[t] = name;
		const char *call = tc_fmt(E->a, "tilec_extent(%s, %s, %s)", shape,
					  origin, tile_ext);
		if (fixed)
			tc_buf_printf(&bd->edecl, "const int %s = %s ? %s : 0;\n",
				      name, fixed, call);
		else
			tc_buf_printf(&bd->edecl, "const int %s = %s;\n", name,
				      call);
	}
}

/* `i < rows` for the rows of a copy that lie inside its tensor, or NULL
 * when all do. */
static const char *
rows_inside(Emitter *E, const FuseOp *op, const char *i)
{
	if (op->cp.rank < 2 || !op->cp.partial[0])
		return NULL;
	return tc_fmt(E->a, "%s < %s", i, op->cp.ext[0]);
}

/* The value an elided copy's element loads, converted as the buffer
 * holds it. */
static const char *
elided_value(Emitter *E, const FuseOp *op)
{
	return tc_omp_tensor_value(E, &op->cp);
}

/* How many times the run writes v (a copy in counts once). */
static int
writes_of(const Fusion *F, const TcVar *v)
{
	int n = 0;
	for (int k = 0; k < F->n; k++) {
		const FuseOp *op = &F->ops[k];
		if (op->kind == FUSE_LOAD && op->buf == v)
			n++;
		else if (op->kind == FUSE_MAP)
			n += tc_omp_count_nodes(
				NULL, op->body,
				(Count){.stmt = is_store, .arg = v});
	}
	return n;
}

/* The type a fused reduction accumulates in (tc_omp_reduce_type); float
 * max and min reduce int keys. */
static TcDtype
acc_type(const FuseOp *op)
{
	return tc_omp_reduce_type(op->s->u.reduce.dst.var, op->buf);
}

static bool
keyed(const FuseOp *op)
{
	return acc_type(op) == TC_DT_F32 && op->s->u.reduce.op != TC_RED_SUM;
}

/* The key function of a keyed reduction. */
static const char *
key_fn(const FuseOp *op)
{
	return op->s->u.reduce.op == TC_RED_MIN ? "tilec_min_key" : "tilec_max_key";
}

/* Whether a copy in reads its elements in the element loop: every copy
 * but one over the columns alone into a stored buffer, which copies its
 * row once before the rows. */
static bool
in_loop(const Fusion *F, const FuseOp *op)
{
	return op->kind == FUSE_LOAD && (op->elided || op->rank == F->rank);
}

/* `[const] T v` for the local that holds an elided buffer's element
 * (with vec, its TILEC_VL elements). */
static const char *
elided_decl(Emitter *E, const Fusion *F, const TcVar *v, bool vec)
{
	return tc_fmt(E->a, "%s%s %s", writes_of(F, v) == 1 ? "const " : "",
		      vec ? "tilec_vf" : tc_omp_value_type(v->dtype), v->name);
}

/* --- What the main loop knows ------------------------------------------------ */
/*
 * The main element loop runs only over columns (and rows) that lie inside
 * the tensors its elided copies read: col0 + j < N, row0 + i < M.  Tile
 * programs test exactly that to mask a partial tile (softmax's
 * `if (c * BLOCK_N + j >= N) x[i][j] = -INFINITY`, layernorm's
 * `n0 + j < N ? ... : 0`); in the main loop such a test is known, so the
 * nest's body prints without it: the if and its branch go, a select keeps
 * its one arm.  (Beyond the saved compare, a select with a constant arm
 * makes gcc run all the arithmetic after it under masks: softmax's exp
 * loop ran 25 % slower with the test in it.)  The edge loop keeps every
 * test.  Facts are comparisons `A < B` written as in the copy's region:
 * A the origin plus the nest's index (either order), B the tensor's
 * extent.
 */

typedef struct Fact {
	TcExpr *lhs;       /* origin + index */
	const TcExpr *rhs; /* the tensor's extent there */
} Fact;

/* The facts of the main loop for one nest of run F (at most max). */
static int
main_facts(Emitter *E, const Fusion *F, const FuseOp *map, Fact *out, int max)
{
	int n = 0;
	for (int k = 0; k < F->n; k++) {
		const FuseOp *op = &F->ops[k];
		if (!in_loop(F, op))
			continue;
		int R = op->buf->rank;
		for (int t = 0; t < R; t++) {
			/* t: the tile dim; the nest's var for it. */
			const TcVar *var = map->var[2 - R + t];
			if (!var || (R == 1 && map->rank == 2 && t != 0) || n + 2 > max)
				continue;
			int vd = op->reg->dims[t];
			const TcExpr *o = op->reg->origin[vd];
			TcExpr *v = tc_expr_var(E->a, (TcVar *)var, o->loc);
			const TcExpr *ext = op->reg->var->shape[vd];
			if (o->kind == TC_EX_INT && o->u.ival == 0) {
				out[n++] = (Fact){ v, ext };
				continue;
			}
			out[n++] = (Fact){ tc_expr_binary(E->a, TC_OP_ADD,
							  (TcExpr *)o, v, o->loc), ext };
			out[n++] = (Fact){ tc_expr_binary(E->a, TC_OP_ADD, v,
							  (TcExpr *)o, o->loc), ext };
		}
	}
	return n;
}

/* 1 if a < b is a fact, else 0 if unknown. */
static bool
is_fact(const Fact *facts, int n, const TcExpr *a, const TcExpr *b)
{
	for (int i = 0; i < n; i++)
		if (tc_expr_equal(facts[i].lhs, a) && tc_expr_equal(facts[i].rhs, b))
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

/* e with the facts' comparisons replaced by their truth, and what that
 * decides folded (selects, !, &&, ||). */
static TcExpr *
simplify_expr(Emitter *E, const TcExpr *e, const Fact *facts, int nf)
{
	if (!e)
		return NULL;
	TcExpr *c = tc_expr_clone(E->a, e);
	bool v = false, w = false;
	switch (e->kind) {
	case TC_EX_BINARY: {
		const TcExpr *l = e->u.bin.lhs, *r = e->u.bin.rhs;
		switch (e->u.bin.op) {
		case TC_OP_LT:
			if (is_fact(facts, nf, l, r))
				return tc_expr_int(E->a, 1, e->loc);
			break;
		case TC_OP_GT:
			if (is_fact(facts, nf, r, l))
				return tc_expr_int(E->a, 1, e->loc);
			break;
		case TC_OP_GE:
			if (is_fact(facts, nf, l, r))
				return tc_expr_int(E->a, 0, e->loc);
			break;
		case TC_OP_LE:
			if (is_fact(facts, nf, r, l))
				return tc_expr_int(E->a, 0, e->loc);
			break;
		default:
			break;
		}
		c->u.bin.lhs = simplify_expr(E, l, facts, nf);
		c->u.bin.rhs = simplify_expr(E, r, facts, nf);
		bool lc = const_truth(c->u.bin.lhs, &v), rc = const_truth(c->u.bin.rhs, &w);
		if (e->u.bin.op == TC_OP_LAND && ((lc && !v) || (rc && !w)))
			return tc_expr_int(E->a, 0, e->loc);
		if (e->u.bin.op == TC_OP_LOR && ((lc && v) || (rc && w)))
			return tc_expr_int(E->a, 1, e->loc);
		if ((e->u.bin.op == TC_OP_LAND || e->u.bin.op == TC_OP_LOR) && lc)
			return c->u.bin.rhs;
		if ((e->u.bin.op == TC_OP_LAND || e->u.bin.op == TC_OP_LOR) && rc)
			return c->u.bin.lhs;
		return c;
	}
	case TC_EX_UNARY:
		c->u.un.arg = simplify_expr(E, e->u.un.arg, facts, nf);
		if (e->u.un.op == TC_UOP_NOT && const_truth(c->u.un.arg, &v))
			return tc_expr_int(E->a, !v, e->loc);
		return c;
	case TC_EX_SELECT:
		c->u.sel.cond = simplify_expr(E, e->u.sel.cond, facts, nf);
		if (const_truth(c->u.sel.cond, &v))
			return simplify_expr(E, v ? e->u.sel.then : e->u.sel.els,
					     facts, nf);
		c->u.sel.then = simplify_expr(E, e->u.sel.then, facts, nf);
		c->u.sel.els = simplify_expr(E, e->u.sel.els, facts, nf);
		return c;
	case TC_EX_CALL:
		for (int i = 0; i < e->u.call.nargs; i++)
			c->u.call.args[i] = simplify_expr(E, e->u.call.args[i],
							  facts, nf);
		return c;
	case TC_EX_CAST:
		c->u.cast.arg = simplify_expr(E, e->u.cast.arg, facts, nf);
		return c;
	default:
		return c;
	}
}

/* Append to out the statements of block s, simplified: an if whose test
 * is decided becomes the statements of its branch. */
static void
simplify_block(Emitter *E, const TcStmt *s, const Fact *facts, int nf,
	       TcStmt *out)
{
	for (int i = 0; i < s->u.block.body.len; i++) {
		const TcStmt *st = s->u.block.body.items[i];
		TcStmt *c = tc_alloc(E->a, sizeof *c);
		*c = *st;
		bool v;
		switch (st->kind) {
		case TC_ST_DECL:
			c->u.decl.init = simplify_expr(E, st->u.decl.init, facts, nf);
			break;
		case TC_ST_ASSIGN:
			c->u.assign.value = simplify_expr(E, st->u.assign.value,
							  facts, nf);
			/* x = cond ? x : y with cond known: nothing left. */
			if (tc_expr_equal(c->u.assign.value, st->u.assign.dst))
				continue;
			break;
		case TC_ST_IF:
			c->u.cond.cond = simplify_expr(E, st->u.cond.cond, facts, nf);
			if (const_truth(c->u.cond.cond, &v)) {
				if (v)
					simplify_block(E, st->u.cond.then, facts, nf,
						       out);
				else if (st->u.cond.els)
					simplify_block(E, st->u.cond.els, facts, nf,
						       out);
				continue;
			}
			c->u.cond.then = tc_stmt_new(E->a, TC_ST_BLOCK, st->loc);
			simplify_block(E, st->u.cond.then, facts, nf, c->u.cond.then);
			if (st->u.cond.els) {
				c->u.cond.els = tc_stmt_new(E->a, TC_ST_BLOCK, st->loc);
				simplify_block(E, st->u.cond.els, facts, nf,
					       c->u.cond.els);
			}
			break;
		default:
			break;
		}
		tc_vec_push(E->a, &out->u.block.body, c);
	}
}

/* The element loop's body: every op's work on element (i, j) in order.
 * In the edge loop (edge), elided copies read zero past their tensor's
 * edge; only is the valid extent the main loop ran to, if it was one
 * copy's.  An elided buffer's local is declared where the run first
 * writes it, or before everything if that is inside a braced nest. */
/* A nest's body as the main loop (which knows its facts) or the edge
 * loop prints it. */
static const TcStmt *
map_body(Emitter *E, const Fusion *F, const FuseOp *op, bool edge)
{
	Fact facts[32];
	int nf = edge ? 0 : main_facts(E, F, op, facts, 32);
	if (!nf)
		return op->body;
	TcStmt *simple = tc_stmt_new(E->a, TC_ST_BLOCK, op->body->loc);
	simplify_block(E, op->body, facts, nf, simple);
	return simple;
}

/* The loop body: each op's work on element (idx[0], idx[1]), or with vec
 * on the TILEC_VL elements from idx[1] on (openmp_vec.c). */
static void
emit_fused_body(Emitter *E, const Fusion *F, const char *const *idx,
		const char *only, bool edge, bool vec)
{
	TcBuf *b = E->out;
	bool *declared = live_copy(E, NULL);
	for (int k = 0; k < F->n; k++) {
		const FuseOp *op = &F->ops[k];
		if (op->kind != FUSE_MAP || !op->braced)
			continue;
		for (int v = 0; v < E->k->vars.len; v++) {
			const TcVar *var = E->k->vars.items[v];
			if (F->elided[v] && !declared[v] &&
			    (tc_stmt_touches(op->body, NULL, var) & TC_ROLE_WRITE)) {
				tc_buf_printf(b, "%s %s;\n",
					      vec ? "tilec_vf"
						  : tc_omp_value_type(var->dtype),
					      var->name);
				declared[v] = true;
			}
		}
	}
	const bool *saved = E->elided;
	E->elided = F->elided;
	for (int k = 0; k < F->n; k++) {
		const FuseOp *op = &F->ops[k];
		switch (op->kind) {
		case FUSE_LOAD: {
			if (!in_loop(F, op))
				break;
			const char *val = elided_value(E, op);
			if (edge && op->valid) {
				/* Past the one edge the main loop stops at,
				 * nothing is inside; else test this copy's. */
				const char *in = rows_inside(E, op, idx[0]);
				const char *test = in;
				if (op->cp.partial[op->cp.rank - 1]) {
					const char *c = tc_fmt(E->a, "%s < %s", idx[1],
							       op->cp.ext[op->cp.rank - 1]);
					test = in ? tc_fmt(E->a, "%s && %s", in, c) : c;
				}
				val = only && strcmp(only, op->valid) == 0
					      ? "0"
					      : tc_fmt(E->a, "%s ? %s : 0", test, val);
			}
			/* A buffer copied in twice is declared once. */
			bool first = !declared[op->buf->index];
			declared[op->buf->index] = true;
			if (vec) {
				val = tc_fmt(E->a, "tilec_vload(&%s)",
					     tc_omp_tensor_elem(E, &op->cp, false));
				if (!op->elided) {
					const char *args[] = {
						tc_fmt(E->a, "&%s",
						       tc_omp_elem(E, op->buf,
								   &idx[2 - op->rank])),
						val,
					};
					tc_omp_print_wrapped(E, "tilec_vstore(",
							     args, 2, ");");
					break;
				}
			}
			const char *head = tc_fmt(
				E->a, "%s =",
				!op->elided ? tc_omp_elem(E, op->buf,
							  &idx[2 - op->rank])
				: first ? elided_decl(E, F, op->buf, vec)
					: op->buf->name);
			tc_omp_print_text(E, head, val);
			break;
		}
		case FUSE_STORE:
			break;
		case FUSE_MAP: {
			const TcStmt *body = map_body(E, F, op, edge);
			if (op->braced) {
				tc_buf_puts(b, "{\n");
				b->indent++;
				for (int d = 2 - op->rank; d < 2; d++)
					if (strcmp(op->var[d]->name, idx[d]) != 0)
						tc_buf_printf(b, "const int %s = %s;\n",
							      op->var[d]->name, idx[d]);
			}
			for (int i = 0; i < body->u.block.body.len; i++) {
				const TcStmt *s = body->u.block.body.items[i];
				const TcVar *v = s->kind == TC_ST_ASSIGN &&
						 s->u.assign.dst->kind == TC_EX_LOAD
					? s->u.assign.dst->u.load.var : NULL;
				if (v && F->elided[v->index] && !declared[v->index]) {
					/* The run's first write of an
					 * elided buffer: its local. */
					declared[v->index] = true;
					tc_omp_line_directive(E, s->loc);
					const char *head = tc_fmt(
						E->a, "%s =",
						elided_decl(E, F, v, vec));
					if (vec) {
						tc_omp_print_text(
							E, head,
							tc_omp_vec_text(
								E, s->u.assign.value));
					} else {
						tc_omp_print_statement(
							E, head, s->u.assign.value,
							v->dtype);
					}
					continue;
				}
				if (vec)
					tc_omp_vec_emit_stmt(E, s);
				else
					tc_omp_emit_stmt(E, s);
			}
			if (op->braced) {
				b->indent--;
				tc_buf_puts(b, "}\n");
			}
			break;
		}
		case FUSE_REDUCE: {
			const TcVar *src = op->buf;
			TcReduceOp rop = op->s->u.reduce.op;
			const char *se = F->elided[src->index]
						 ? src->name
						 : tc_omp_elem(E, src, idx);
			if (!vec)
				se = tc_omp_to_buffer(E, se, src->dtype,
						      acc_type(op));
			if (vec) {
				/* A sum of f32 (vectorizable). */
				if (!F->elided[src->index])
					se = tc_fmt(E->a, "tilec_vload(&%s)", se);
				tc_buf_printf(b, "%s += %s;\n", op->vacc, se);
				break;
			}
			if (!keyed(op)) {
				tc_buf_printf(b, "%s;\n",
					      tc_omp_reduce_step(E, rop,
								 acc_type(op),
								 op->acc, se));
				break;
			}
			if (rop == TC_RED_ABSMAX)
				se = tc_fmt(E->a, "fabsf(%s)", se);
			tc_buf_printf(b, "%s = tilec_%s(%s, %s(%s));\n", op->acc,
				      rop == TC_RED_MIN ? "min" : "max", op->acc,
				      key_fn(op), se);
			break;
		}
		}
	}
	E->elided = saved;
}

/* The end of a row the vector loop streamed out (op->streamed): the
 * columns past its whole vectors, and the fence after its streaming
 * stores. */
static void
print_row_rest(Emitter *E, const FuseOp *op, const char *i, const char *in)
{
	TcBuf *b = E->out;
	const CopyPlan *cp = &op->cp;
	const char *cols = cp->ext[cp->rank - 1];
	const char *rest = tc_fmt(E->a, "%s - %s %% TILEC_VL", cols, cols);
	if (in) {
		tc_buf_printf(b, "if (%s) {\n", in);
		b->indent++;
	}
	const char *args[] = {
		tc_fmt(E->a, "&%s + %s", tc_omp_tensor_elem(E, cp, true), rest),
		tc_fmt(E->a, "%s%s%s + %s", op->buf->name, cp->rank == 2 ? "[" : "",
		       cp->rank == 2 ? i : "", rest),
		tc_fmt(E->a, "%s %% TILEC_VL", cols),
	};
	if (cp->rank == 2)
		args[1] = tc_fmt(E->a, "%s[%s] + %s", op->buf->name, i, rest);
	else
		args[1] = tc_fmt(E->a, "%s + %s", op->buf->name, rest);
	tc_omp_print_wrapped(E, "tilec_store_f32(", args, 3, ");");
	tc_buf_puts(b, "tilec_vstream_fence();\n");
	if (in) {
		b->indent--;
		tc_buf_puts(b, "}\n");
	}
}

/* Names a statement refers to (vars of any kind) and its body's
 * top-level declarations, for deciding which nests need braces. */
typedef struct Names {
	TcArena *a; /* where out grows */
	TcVec *out; /* const char *: the names */
} Names;

static void
push_name(void *ctx, const TcVar *v)
{
	Names *n = ctx;
	tc_vec_push(n->a, n->out, (void *)v->name);
}

static bool
has_name(const TcVec *v, const char *name)
{
	for (int i = 0; i < v->len; i++)
		if (strcmp(v->items[i], name) == 0)
			return true;
	return false;
}

/* Whether a nest is printed in braces: its loop vars are not the run's
 * index names, or a local it declares at the top of its body would
 * collide with a name another statement of the run uses or declares. */
static bool
needs_braces(Emitter *E, const Fusion *F, int k, const char *const *idx)
{
	const FuseOp *op = &F->ops[k];
	for (int d = 2 - op->rank; d < 2; d++)
		if (strcmp(op->var[d]->name, idx[d]) != 0)
			return true;
	TcVec others = { 0 };
	for (int p = 0; p < F->n; p++)
		if (p != k)
			tc_omp_walk_vars(NULL, F->ops[p].s, push_name,
					 &(Names){E->a, &others});
	for (int v = 0; v < E->k->vars.len; v++)
		if (F->elided[v])
			tc_vec_push(E->a, &others,
				    (void *)((TcVar *)E->k->vars.items[v])->name);
	for (int i = 0; i < E->reserved.len; i++)
		tc_vec_push(E->a, &others, E->reserved.items[i]);
	const TcStmt *body = op->body;
	for (int i = 0; i < body->u.block.body.len; i++) {
		const TcStmt *s = body->u.block.body.items[i];
		if (s->kind == TC_ST_DECL && has_name(&others, s->u.decl.var->name))
			return true;
	}
	return false;
}

/* `tilec_load_T(row, &T[...], cols, width);` for a stored copy's row (or
 * whole rank-1 tile). */
static void
print_row_copy(Emitter *E, const FuseOp *op, const char *i)
{
	const CopyPlan *cp = &op->cp;
	int R = cp->rank;
	const char *helper = tc_omp_row_helper(cp->ten->dtype);
	const char *row = R == 2 ? tc_fmt(E->a, "%s[%s]", op->buf->name, i)
				 : op->buf->name;
	const char *start =
		tc_fmt(E->a, "&%s", tc_omp_tensor_elem(E, cp, true));
	const char *args[4];
	if (op->kind == FUSE_LOAD) {
		args[0] = row;
		args[1] = start;
		args[2] = cp->ext[R - 1];
		args[3] = tc_omp_expr_text(E, cp->tile->shape[R - 1], 0);
		tc_omp_print_wrapped(E, tc_fmt(E->a, "tilec_load_%s(", helper),
				     args, 4, ");");
	} else {
		args[0] = start;
		args[1] = row;
		args[2] = cp->ext[R - 1];
		tc_omp_print_wrapped(E, tc_fmt(E->a, "tilec_store_%s(", helper),
				     args, 3, ");");
	}
}

/* --- The next block's rows --------------------------------------------------- */
/*
 * The blocks of a one-dimensional grid run in order on each thread
 * (schedule(static) gives each a range), so the block after this one is
 * usually the next this thread runs.  A run whose element work calls
 * heavy math (exp, tanh, log ...) leaves memory idle while it computes:
 * the first such run of the kernel asks, one strip of each row at a time,
 * for the rows the next block's copy of the same tensor will read, so
 * they arrive while this block computes (softmax: the next row streams in
 * during this row's exps).  The copy's origin is taken at the next block
 * index and at the first iteration of the loops around the run, locals
 * replaced by their initializers; only two-dimensional copies whose row
 * origin moves with the block and whose origins stay provably
 * non-negative.  A prefetch is a hint: it never faults or changes a
 * result.
 */

typedef struct Ahead {
	const FuseOp *op;     /* the copy whose next rows are fetched */
	const char *origin[2];/* its next origins (declared names) */
	const char *ext[2];   /* and valid extents */
	long long strip;      /* elements per prefetch: 1 KiB */
} Ahead;

/* Whether e calls a function dearer than a compare (exp, tanh, log ...). */
static bool
heavy_call(const TcExpr *e, const void *arg)
{
	(void)arg;
	if (e->kind != TC_EX_CALL)
		return false;
	switch (e->u.call.fn) {
	case TC_FN_CEILDIV: case TC_FN_MIN: case TC_FN_MAX: case TC_FN_ABS:
	case TC_FN_FMAXF: case TC_FN_FMINF: case TC_FN_FABSF: case TC_FN_FMAF:
	case TC_FN_ROUNDF: case TC_FN_RINTF: case TC_FN_FLOORF:
	case TC_FN_CEILF: case TC_FN_TRUNCF:
	case TC_FN_SAT_I8: case TC_FN_SAT_U8: case TC_FN_SAT_I32:
		return false;
	default:
		return true;
	}
}

/* Whether a run's nests call something dearer than a compare. */
static bool
heavy_run(const Fusion *F)
{
	for (int i = 0; i < F->n; i++)
		if (F->ops[i].kind == FUSE_MAP &&
		    tc_omp_count_nodes(NULL, F->ops[i].body,
				       (Count){ .expr = heavy_call }))
			return true;
	return false;
}

/* e as it will be in the next block's first pass here: the grid index
 * plus one (if next), the loops around at their first iteration, locals
 * as their initializers; NULL if it reads anything else that varies. */
static TcExpr *
next_block_expr(Emitter *E, const TcExpr *e, bool next, int depth)
{
	if (depth > 8)
		return NULL;
	TcExpr *c = tc_expr_clone(E->a, e);
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
			if (v != E->k->block[0] || !next)
				return c;
			return tc_expr_binary(E->a, TC_OP_ADD, c,
					      tc_expr_int(E->a, 1, e->loc), e->loc);
		case TC_VAR_LOCAL:
			return E->ranges.init[v->index]
				       ? next_block_expr(E, E->ranges.init[v->index], next,
							 depth + 1)
				       : NULL;
		case TC_VAR_LOOP:
			for (int i = 0; i < E->naround; i++)
				if (E->around[i]->u.loop.var == v)
					return next_block_expr(E,
							       E->around[i]->u.loop.begin,
							       next, depth + 1);
			return NULL;
		default:
			return NULL;
		}
	}
	case TC_EX_BINARY:
		c->u.bin.lhs = next_block_expr(E, e->u.bin.lhs, next, depth);
		c->u.bin.rhs = next_block_expr(E, e->u.bin.rhs, next, depth);
		return c->u.bin.lhs && c->u.bin.rhs ? c : NULL;
	case TC_EX_CALL:
		for (int i = 0; i < e->u.call.nargs; i++)
			if (!(c->u.call.args[i] = next_block_expr(
				      E, e->u.call.args[i], next, depth)))
				return NULL;
		return c;
	case TC_EX_CAST:
		c->u.cast.arg = next_block_expr(E, e->u.cast.arg, next, depth);
		return c->u.cast.arg ? c : NULL;
	default:
		return NULL;
	}
}

/* Plan the next block's prefetch for run F, printing its bounds; false if
 * F is not the run for it. */
static bool
plan_ahead(Emitter *E, const Fusion *F, Ahead *ah)
{
	const TcKernel *k = E->k;
	if (E->ahead || F->rank != 2 || !k->block[0] || k->grid[1] || k->grid[2])
		return false;
	/* Prefetch where the block computes most (exp, tanh ...): the memory
	 * works behind the math (softmax: in the max pass, 31 -> 28 GB/s);
	 * in a kernel without such a run, in its first run reading rows
	 * (RMSNorm: 29 -> 34 GB/s, the hardware prefetcher alone keeps fewer
	 * lines in flight). */
	if (!heavy_run(F)) {
		for (int i = 0; i < E->fusions.len; i++)
			if (heavy_run(E->fusions.items[i]))
				return false;
	}
	for (int i = 0; i < F->n; i++) {
		const FuseOp *op = &F->ops[i];
		if (op->kind != FUSE_LOAD || op->rank != 2 || op->reg->var->rank != 2)
			continue;
		const TcExpr *row = op->reg->origin[0], *col = op->reg->origin[1];
		TcExpr *now = next_block_expr(E, row, false, 0);
		TcExpr *nrow = next_block_expr(E, row, true, 0);
		TcExpr *ncol = next_block_expr(E, col, true, 0);
		if (!now || !nrow || !ncol ||
		    !tc_expr_mentions(now, k->block[0]) ||
		    !tc_range_nonneg(&E->ranges, nrow) || !tc_range_nonneg(&E->ranges, ncol))
			continue;
		const TcVar *ten = op->reg->var;
		int bits = ten->dtype == TC_DT_BOOL ? 8 : tc_dtype_bits(ten->dtype);
		*ah = (Ahead){ .op = op, .strip = 1024 * 8 / bits };
		ah->origin[0] = reserve(E, "next_row0");
		ah->origin[1] = reserve(E, "next_col0");
		ah->ext[0] = reserve(E, "next_rows");
		ah->ext[1] = reserve(E, "next_cols");
		TcBuf *b = E->out;
		long long c;
		if (tc_expr_const(ncol, &c))
			ncol = tc_expr_int(E->a, c, ncol->loc);
		tc_buf_printf(b, "const int %s = %s, %s = %s;\n", ah->origin[0],
			      tc_omp_expr_text(E, nrow, TC_PREC_COMMA + 1),
			      ah->origin[1],
			      tc_omp_expr_text(E, ncol, TC_PREC_COMMA + 1));
		for (int d = 0; d < 2; d++)
			tc_buf_printf(
				b, "const int %s = tilec_extent(%s, %s, %s);\n",
				ah->ext[d],
				tc_omp_expr_text(E, ten->shape[d],
						 TC_PREC_COMMA + 1),
				ah->origin[d],
				tc_omp_expr_text(E, op->buf->shape[d], 0));
		E->ahead = true;
		return true;
	}
	return false;
}

static void emit_fused_loop(Emitter *E, const Fusion *F, const char *const *idx,
			    const char *begin, const char *end, const char *only,
			    bool edge, bool vec, const Ahead *ah);

/* The prefetch of the strip of the next block's row at column j0 (`if
 * (i < next_rows && j0 < next_cols) tilec_prefetch(...)`); in a loop over
 * every column (at_strips), only where a strip starts. */
static void
print_prefetch(Emitter *E, const char *const *idx, const Ahead *ah,
	       const char *j0, bool at_strips)
{
	TcBuf *b = E->out;
	tc_c_comment(&E->pr, tc_fmt(E->a, "the next block's %s, for later",
				    ah->op->reg->var->name));
	if (at_strips)
		tc_buf_printf(b, "if (%s %% %lld == 0 && %s < %s && %s < %s)\n", j0,
			      ah->strip, idx[0], ah->ext[0], j0, ah->ext[1]);
	else
		tc_buf_printf(b, "if (%s < %s && %s < %s)\n", idx[0], ah->ext[0],
			      j0, ah->ext[1]);
	const char *args[] = {
		tc_fmt(E->a, "&%s[%s + %s][%s + %s]", ah->op->reg->var->name,
		       ah->origin[0], idx[0], ah->origin[1], j0),
		tc_fmt(E->a, "sizeof(%s) * tilec_min(%lld, %s - %s)",
		       tc_omp_storage_type(ah->op->reg->var->dtype), ah->strip,
		       ah->ext[1], j0),
	};
	b->indent++;
	tc_omp_print_wrapped(E, "tilec_prefetch(", args, 2, ");");
	b->indent--;
}

/* The main element loop in strips, each starting with the prefetch of a
 * strip of the next block's row. */
static void
emit_strips(Emitter *E, const Fusion *F, const char *const *idx,
	    const char *end, const char *only, const Ahead *ah)
{
	TcBuf *b = E->out;
	const char *j0 = reserve(E, tc_fmt(E->a, "%s0", idx[1]));
	const char *j1 = reserve(E, tc_fmt(E->a, "%s1", idx[1]));
	tc_buf_printf(b, "for (int %s = 0; %s < %s; %s += %lld) {\n", j0, j0, end,
		      j0, ah->strip);
	b->indent++;
	tc_buf_printf(b, "const int %s = tilec_min(%s + %lld, %s);\n", j1, j0,
		      ah->strip, end);
	print_prefetch(E, idx, ah, j0, false);
	emit_fused_loop(E, F, idx, j0, j1, only, false, false, NULL);
	b->indent--;
	tc_buf_puts(b, "}\n");
}

/* Whether a copy out can be written from the vector loop, which ends at
 * end: f32 rows of the run's rank whose valid columns the loop covers. */
static bool
streamable(const Fusion *F, const FuseOp *op, const char *end,
	   const char *full)
{
	if (op->kind != FUSE_STORE || op->rank != F->rank ||
	    op->reg->var->dtype != TC_DT_F32 || op->buf->dtype != TC_DT_F32)
		return false;
	/* Only a copy's plan has extents: read them after the kind. */
	const char *cols = op->cp.ext[op->cp.rank - 1];
	return strcmp(end, full) == 0 || strcmp(end, cols) == 0;
}

/* Whether the run's main loop runs on explicit vectors: on AVX-512, when
 * it calls exp or exp2 or copies f32 rows out, and everything it does has
 * a vector form (openmp_vec.c): f32 copies in, f32 sums, nests whose
 * bodies can.  Marks the copies out written from the loop. */
static bool
vectorize(Emitter *E, const Fusion *F, const char *end)
{
	if (!tc_omp_vec_target(E) || F->cols < E->t->explicit_lanes)
		return false;
	const char *full = tc_omp_expr_text(E, F->ext[1], 0);
	int streams = 0;
	for (int k = 0; k < F->n; k++)
		streams += streamable(F, &F->ops[k], end, full);
	const TcVar *cols[TC_OMP_VEC_COLS];
	int ncols = 0, calls = 0;
	for (int k = 0; k < F->n; k++) {
		const FuseOp *op = &F->ops[k];
		if (op->kind != FUSE_MAP)
			continue;
		if (ncols == TC_OMP_VEC_COLS)
			return false;
		cols[ncols++] = op->var[1];
		calls += tc_omp_count_nodes(NULL, op->body,
					    (Count){ .expr = tc_omp_vec_has_func });
	}
	if (!calls && !streams)
		return false;
	tc_omp_vec_columns(E, cols, ncols);
	const bool *saved = E->elided;
	E->elided = F->elided;
	bool ok = true;
	for (int k = 0; k < F->n && ok; k++) {
		const FuseOp *op = &F->ops[k];
		switch (op->kind) {
		case FUSE_LOAD:
			ok = !in_loop(F, op) || (op->reg->var->dtype == TC_DT_F32 &&
						 op->buf->dtype == TC_DT_F32);
			break;
		case FUSE_STORE:
			break;
		case FUSE_REDUCE:
			ok = op->s->u.reduce.op == TC_RED_SUM &&
			     acc_type(op) == TC_DT_F32 &&
			     op->buf->dtype == TC_DT_F32;
			break;
		case FUSE_MAP:
			ok = tc_omp_vec_stmt_ok(E, map_body(E, F, op, false));
			break;
		}
	}
	E->elided = saved;
	for (int k = 0; k < F->n && ok; k++)
		F->ops[k].streamed = streamable(F, &F->ops[k], end, full);
	return ok;
}

/* The main loop's columns in whole vectors, from begin: the vector
 * accumulators, the loop (prefetching the next block's row a strip at a
 * time when ah says which), the sums added to the scalar ones.  Returns
 * where the scalar loop starts.  One loop over the row, not strips: gcc
 * would set up exp's constants and fold the sums again in every strip
 * (softmax 27 against 31 GB/s). */
static const char *
emit_vector_loop(Emitter *E, const Fusion *F, const char *const *idx,
		 const char *begin, const char *end, const char *only,
		 const Ahead *ah)
{
	TcBuf *b = E->out;
	for (int k = 0; k < F->n; k++) {
		FuseOp *op = &F->ops[k];
		if (op->kind != FUSE_REDUCE)
			continue;
		op->vacc = reserve(E, tc_fmt(E->a, "%s_v", op->acc));
		tc_buf_printf(b, "tilec_vf %s = tilec_vsplat(0.0f);\n", op->vacc);
	}
	const char *head = tc_fmt(E->a, "for (int %s = %s; %s + TILEC_VL <= %s;",
				  idx[1], begin, idx[1], end);
	const char *step = tc_fmt(E->a, "%s += TILEC_VL) {", idx[1]);
	if ((size_t)b->indent * 8 + strlen(head) + 1 + strlen(step) <= 80)
		tc_buf_printf(b, "%s %s\n", head, step);
	else
		tc_buf_printf(b, "%s\n     %s\n", head, step);
	b->indent++;
	if (ah)
		print_prefetch(E, idx, ah, idx[1], true);
	E->vec = true;
	emit_fused_body(E, F, idx, only, false, true);
	E->vec = false;
	E->line = 0; /* the scalar loop's statements say their lines again */
	for (int k = 0; k < F->n; k++) {
		const FuseOp *op = &F->ops[k];
		if (!op->streamed)
			continue;
		const char *cols = op->cp.ext[op->cp.rank - 1];
		const char *in = rows_inside(E, op, idx[0]);
		const char *test = tc_fmt(E->a, "%s + TILEC_VL <= %s", idx[1], cols);
		tc_buf_printf(b, "if (%s%s%s)\n", in ? in : "", in ? " && " : "",
			      test);
		const char *args[] = {
			tc_fmt(E->a, "&%s", tc_omp_tensor_elem(E, &op->cp, false)),
			tc_fmt(E->a, "tilec_vload(&%s)",
			       tc_omp_elem(E, op->buf, &idx[2 - op->rank])),
			cols,
		};
		b->indent++;
		tc_omp_print_wrapped(E, "tilec_vstream(", args, 3, ");");
		b->indent--;
	}
	b->indent--;
	tc_buf_puts(b, "}\n");
	for (int k = 0; k < F->n; k++) {
		const FuseOp *op = &F->ops[k];
		if (op->kind == FUSE_REDUCE)
			tc_buf_printf(b, "%s += tilec_vsum(%s);\n", op->acc,
				      op->vacc);
	}
	if (strcmp(begin, "0") == 0)
		return tc_fmt(E->a, "%s - %s %% TILEC_VL", end, end);
	return tc_fmt(E->a, "%s - (%s - %s) %% TILEC_VL", end, end, begin);
}

/* One element loop, j from begin to end; reductions joined in clauses.
 * The edge loop has no omp simd: it runs only on partial tiles, and clang
 * cannot vectorize a sum of what it folds to constants there.  With vec,
 * the whole vectors first (emit_vector_loop), then this loop over the
 * rest. */
static void
emit_fused_loop(Emitter *E, const Fusion *F, const char *const *idx,
		const char *begin, const char *end, const char *only, bool edge,
		bool vec, const Ahead *ah)
{
	static const char *const omp_ops[] = {
		[TC_RED_SUM] = "+", [TC_RED_MAX] = "max",
		[TC_RED_MIN] = "min", [TC_RED_ABSMAX] = "max",
	};
	if (vec && !edge) {
		/* A loop over a whole tile of whole vectors leaves nothing. */
		bool whole = F->cols % E->t->explicit_lanes == 0 &&
			     strcmp(begin, "0") == 0 &&
			     strcmp(end, tc_omp_expr_text(E, F->ext[1], 0)) == 0;
		begin = emit_vector_loop(E, F, idx, begin, end, only, ah);
		if (whole)
			return;
		tc_c_comment(&E->pr, "the columns left over");
	}
	if (F->cols >= 8 && !edge) {
		TcBuf clauses;
		tc_buf_init(&clauses);
		for (int k = 0; k < F->n; k++)
			if (F->ops[k].kind == FUSE_REDUCE)
				tc_buf_printf(&clauses, " reduction(%s : %s)",
					      omp_ops[F->ops[k].s->u.reduce.op],
					      F->ops[k].acc);
		tc_omp_pragma(E, "omp simd%s", clauses.len ? clauses.data : "");
		tc_buf_free(&clauses);
	}
	const char *head = tc_fmt(E->a, "for (int %s = %s; %s < %s;", idx[1],
				  begin, idx[1], end);
	if ((size_t)E->out->indent * 8 + strlen(head) + strlen(idx[1]) + 6 <= 80)
		tc_buf_printf(E->out, "%s %s++)", head, idx[1]);
	else
		tc_buf_printf(E->out, "%s\n     %s++)", head, idx[1]);
	/* The body, without braces if it is one line. */
	TcBuf body, *out = E->out;
	tc_buf_init(&body);
	body.indent = out->indent + 1;
	E->out = E->pr.out = &body;
	emit_fused_body(E, F, idx, only, edge, false);
	E->out = E->pr.out = out;
	/* A declaration is not a statement: a body that declares the
	 * local of an elided buffer keeps its braces, even alone (the
	 * buffer is then written and never read). */
	bool declares = false;
	for (int v = 0; v < E->k->vars.len; v++)
		if (F->elided[v] && writes_of(F, E->k->vars.items[v]))
			declares = true;
	const char *nl = strchr(body.data, '\n');
	bool one = nl && !nl[1] && !strchr(body.data, '#') && !declares;
	tc_buf_puts(out, one ? "\n" : " {\n");
	int indent = out->indent;
	out->indent = 0;
	tc_buf_puts(out, body.data);
	out->indent = indent;
	if (!one)
		tc_buf_puts(out, "}\n");
	tc_buf_free(&body);
}

/* Print a run as one loop nest (see the top of this file). */
void
tc_omp_emit_fusion(Emitter *E, const Fusion *F)
{
	static const char *const acc_names[] = {
		[TC_RED_SUM] = "sum", [TC_RED_MAX] = "maxv",
		[TC_RED_MIN] = "minv", [TC_RED_ABSMAX] = "amax",
	};
	TcBuf *b = E->out;
	int reserved = E->reserved.len;
	for (int k = 0; k < F->n; k++) {
		const TcStmt *s = F->ops[k].s;
		const char *again = k < F->nagain ? ", again" : "";
		if (F->ops[k].kind == FUSE_MAP)
			tc_omp_nest_comment(E, s, again);
		else
			tc_c_loc_comment(&E->pr, s->loc,
					 tc_fmt(E->a, "%s%s",
						tc_c_source_snippet(E->a, E->p->text,
								    s->loc),
						again));
	}
	if (F->dead) {
		/* Its buffers are recomputed where they are read. */
		tc_c_comment(&E->pr, "nothing to do here: what this computes is "
			     "computed again where it is read");
		return;
	}
	TcBuf note;
	tc_buf_init(&note);
	tc_buf_printf(&note, "as one loop over each %s's elements",
		      F->rank == 2 ? "row" : "tile");
	int nel = 0;
	for (int v = 0; v < E->k->vars.len; v++)
		if (F->elided[v])
			tc_buf_printf(&note, "%s%s", nel++ ? ", " : "; not stored: ",
				      ((TcVar *)E->k->vars.items[v])->name);
	tc_c_comment(&E->pr, note.data);
	tc_buf_free(&note);

	/* Index names: a nest's over the whole space, else fresh ones. */
	const char *idx[2] = { NULL, NULL };
	for (int k = 0; k < F->n && !idx[1]; k++) {
		const FuseOp *op = &F->ops[k];
		if (op->kind == FUSE_MAP && op->rank == F->rank) {
			idx[0] = op->var[0] ? op->var[0]->name : NULL;
			idx[1] = op->var[1]->name;
		}
	}
	if (!idx[1]) {
		const char *names[2];
		tc_omp_index_names(E, F->rank, names);
		idx[2 - F->rank] = names[0];
		if (F->rank == 2)
			idx[1] = names[1];
	}
	for (int d = 2 - F->rank; d < 2; d++)
		tc_vec_push(E->a, &E->reserved, (void *)idx[d]);
	for (int k = 0; k < F->n; k++) {
		FuseOp *op = &F->ops[k];
		if (op->kind == FUSE_MAP)
			op->braced = needs_braces(E, F, k, idx);
	}

	/* Bounds of the copies, then per-column copies into stored
	 * buffers, once. */
	Bounds bd = { 0 };
	tc_buf_init(&bd.odecl);
	tc_buf_init(&bd.edecl);
	for (int rank = 2; rank >= 1; rank--)
		for (int k = 0; k < F->n; k++)
			if ((F->ops[k].kind == FUSE_LOAD ||
			     F->ops[k].kind == FUSE_STORE) && F->ops[k].rank == rank)
				bounds_copy(E, &bd, &F->ops[k], idx);
	bool opened = bd.odecl.len || bd.edecl.len;
	if (opened) {
		tc_buf_puts(b, "{\n");
		b->indent++;
		if (bd.odecl.len)
			tc_buf_printf(b, "const int %s;\n", bd.odecl.data);
		if (bd.edecl.len)
			tc_buf_puts(b, bd.edecl.data);
	}
	tc_buf_free(&bd.odecl);
	tc_buf_free(&bd.edecl);
	Ahead ah;
	bool ahead = opened && plan_ahead(E, F, &ah);
	for (int k = 0; k < F->n; k++) {
		const FuseOp *op = &F->ops[k];
		if (op->kind == FUSE_LOAD && !in_loop(F, op))
			print_row_copy(E, op, NULL);
	}
	const char *i = idx[0];
	if (F->rank == 2) {
		tc_omp_for_dim(E, i, "0", tc_omp_expr_text(E, F->ext[0], 0));
		tc_c_open(&E->pr);
	}
	/* The columns of this row that the copies can read: the main loop
	 * runs over those inside every tensor, without tests. */
	const char *distinct[16];
	int nd = 0;
	for (int k = 0; k < F->n; k++) {
		FuseOp *op = &F->ops[k];
		if (!in_loop(F, op))
			continue;
		int last = op->cp.rank - 1;
		const char *in = rows_inside(E, op, i);
		op->valid = in ? tc_fmt(E->a, "%s ? %s : 0", in, op->cp.ext[last])
			: op->cp.partial[last] ? op->cp.ext[last] : NULL;
		bool seen = !op->valid;
		for (int d = 0; d < nd && !seen; d++)
			seen = strcmp(distinct[d], op->valid) == 0;
		if (!seen && nd < 16)
			distinct[nd++] = op->valid;
	}
	/* cols is no tighter than `i < rows ? cols : 0`. */
	for (int d = 0; d < nd; d++) {
		const char *tail = tc_fmt(E->a, " ? %s : 0", distinct[d]);
		bool looser = false;
		for (int e = 0; e < nd && !looser; e++) {
			size_t l = strlen(distinct[e]), t = strlen(tail);
			looser = e != d && l > t &&
				 strcmp(distinct[e] + l - t, tail) == 0;
		}
		if (looser) {
			distinct[d--] = distinct[--nd];
		}
	}
	const char *end = tc_omp_expr_text(E, F->ext[1], 0), *only = NULL;
	if (nd == 1 && !strchr(distinct[0], '?')) {
		end = only = distinct[0];
	} else if (nd >= 1) {
		const char *n = reserve(E, "n");
		const char *v = distinct[0];
		for (int d = 1; d < nd; d++)
			v = tc_fmt(E->a, "tilec_min(%s, %s)", v, distinct[d]);
		tc_buf_printf(b, "const int %s = %s;\n", n, v);
		end = n;
		only = nd == 1 ? distinct[0] : NULL;
	}
	/* Accumulators. */
	for (int k = 0; k < F->n; k++) {
		FuseOp *op = &F->ops[k];
		if (op->kind != FUSE_REDUCE)
			continue;
		TcReduceOp rop = op->s->u.reduce.op;
		const TcVar *dst = op->s->u.reduce.dst.var;
		TcDtype t = acc_type(op);
		op->acc = reserve(E, acc_names[rop]);
		bool old = op->s->u.reduce.accumulate && rop != TC_RED_SUM;
		const char *start = tc_omp_reduce_start(
			E, rop, t, old ? tc_omp_elem(E, dst, idx) : NULL);
		if (keyed(op))
			tc_buf_printf(b, "int %s = %s(%s);\n", op->acc, key_fn(op),
				      start);
		else
			tc_buf_printf(b, "%s %s = %s;\n", tc_omp_value_type(t),
				      op->acc, start);
	}
	bool vec = vectorize(E, F, end);
	if (ahead && !vec)
		emit_strips(E, F, idx, end, only, &ah);
	else
		emit_fused_loop(E, F, idx, "0", end, only, false, vec,
				ahead ? &ah : NULL);
	if (nd > 0) {
		tc_c_comment(&E->pr, "columns past an edge: copies read 0");
		emit_fused_loop(E, F, idx, end,
				tc_omp_expr_text(E, F->ext[1], 0), only, true,
				false, NULL);
	}
	/* Results of the row: reductions, then the rows copied out. */
	for (int k = 0; k < F->n; k++) {
		const FuseOp *op = &F->ops[k];
		if (op->kind != FUSE_REDUCE)
			continue;
		TcReduceOp rop = op->s->u.reduce.op;
		const TcVar *dst = op->s->u.reduce.dst.var;
		TcDtype t = acc_type(op);
		const char *de = tc_omp_elem(E, dst, idx);
		const char *acc = keyed(op) ? tc_fmt(E->a, "tilec_key_float(%s)",
						     op->acc)
					    : op->acc;
		if (op->s->u.reduce.accumulate && rop == TC_RED_SUM &&
		    !tc_omp_is_narrow_float(dst->dtype))
			tc_buf_printf(b, "%s += %s;\n", de, op->acc);
		else if (op->s->u.reduce.accumulate && rop == TC_RED_SUM)
			tc_buf_printf(b, "%s = tilec_round_%s(%s + %s);\n", de,
				      tc_dtype_name(dst->dtype), de, op->acc);
		else
			tc_buf_printf(b, "%s = %s;\n", de,
				      tc_omp_to_buffer(E, acc, t, dst->dtype));
	}
	for (int k = 0; k < F->n; k++) {
		const FuseOp *op = &F->ops[k];
		if (op->kind != FUSE_STORE)
			continue;
		const char *in = F->rank == 2 ? rows_inside(E, op, i) : NULL;
		if (op->streamed) {
			/* The vector loop wrote the whole vectors. */
			print_row_rest(E, op, i, in);
			continue;
		}
		if (in) {
			tc_buf_printf(b, "if (%s)\n", in);
			b->indent++;
		}
		print_row_copy(E, op, i);
		if (in)
			b->indent--;
	}
	if (F->rank == 2)
		tc_c_close(&E->pr);
	if (opened) {
		b->indent--;
		tc_buf_puts(b, "}\n");
	}
	E->reserved.len = reserved;
}
