/*
 * cpu_vector.c - which fused nests have an explicit vector form (pass
 * `vector`, openmp targets with explicit lanes, after `edge`).
 *
 * Input: the runs of the fuse pass with the edge pass's main versions.
 * Output: on each MAP op of a run (again ops included), `vector` when its
 * body as the run's main loop runs it (TcFuseOp.main, else the body) can
 * run on TILEC_VL columns at a time in GNU C vectors
 * (templates/cpu/tilec_cpu.h); on the run, `lanes`: the LOCALs its nests
 * declare that hold a value varying over the lanes (a tilec_vf in the
 * output), for this run's columns and registers.
 * Then whether the run's main loop runs on those forms (TcFusion.vec):
 * when it has at least TILEC_VL columns, calls exp, exp2 or tanh, reads
 * f16 or bf16 rows (converted in registers by one instruction per
 * vector, where gcc's vectorized bit-level conversion takes ~10), or
 * copies f32 rows out (to f32, f16 or bf16) whose valid columns the main
 * loop covers exactly (tc_cpu_edge_covers), and everything it does has a
 * vector form: copies in of f32, f16 and bf16 rows, sums into f32 of
 * f32, f16 or bf16 buffers (held as float), nests with the form.  Such
 * copies out are then written from the vector loop (TcFuseOp.streamed),
 * past the cache where the output is large (tilec_vstream), and the
 * kernel's threads fence once after their blocks (kernel->streams).
 *
 * In a vector body an expression either varies across the lanes or is
 * uniform.  It varies when it reads a buffer at a column var of the run's
 * nests (the last index, exactly that var, no other index naming one),
 * an element of a buffer the run keeps in registers, or a local holding
 * a varying value.  Uniform expressions stay scalars; varying ones are
 * f32 and use only + - * /, negation, casts that change nothing, and the
 * functions with vector forms (expf, exp2f, tanhf, sqrtf, rsqrtf, fabsf,
 * fmaf, fmaxf, fminf, floorf, ceilf, truncf, rintf), and selects whose
 * condition compares f32 values (joined by &&, || and !) and whose
 * branches read no tensor (both are computed for every lane).  A column
 * var anywhere else, a comparison of other values or an if on a varying
 * value has no form.
 */
#include "passes/passes.h"

#define MAX_COLS 8

typedef struct Vec {
	const TcVar *col[MAX_COLS]; /* the column vars of the run's nests */
	int ncol;
	const bool *elided;         /* the run's registers, by var index */
	bool *lanes;                /* locals found varying, by var index */
} Vec;

/* The functions with a vector form (tilec_v* in tilec_cpu.h). */
static bool
vector_func(TcFunc fn)
{
	switch (fn) {
	case TC_FN_EXPF: case TC_FN_EXP2F: case TC_FN_TANHF:
	case TC_FN_SQRTF: case TC_FN_RSQRTF: case TC_FN_FABSF:
	case TC_FN_FMAF: case TC_FN_FMAXF: case TC_FN_FMINF:
	case TC_FN_FLOORF: case TC_FN_CEILF: case TC_FN_TRUNCF:
	case TC_FN_RINTF:
		return true;
	default:
		return false;
	}
}

/* Those whose cost alone makes a loop worth running on vectors. */
static bool
heavy_func(TcFunc fn)
{
	return fn == TC_FN_EXPF || fn == TC_FN_EXP2F || fn == TC_FN_TANHF;
}

static bool
narrow(TcDtype t)
{
	return t == TC_DT_F16 || t == TC_DT_BF16;
}

static bool
is_column(const Vec *V, const TcExpr *e)
{
	if (e->kind != TC_EX_VAR)
		return false;
	for (int i = 0; i < V->ncol; i++)
		if (V->col[i] == e->u.var)
			return true;
	return false;
}

static bool
mentions_column(const Vec *V, const TcExpr *e)
{
	for (int i = 0; i < V->ncol; i++)
		if (tc_expr_mentions(e, V->col[i]))
			return true;
	return false;
}

/* A load at the column: the last index a column var, no other naming one. */
static bool
column_load(const Vec *V, const TcExpr *e)
{
	const TcVar *v = e->u.load.var;
	if (v->rank == 0 || !is_column(V, e->u.load.idx[v->rank - 1]))
		return false;
	for (int d = 0; d < v->rank - 1; d++)
		if (mentions_column(V, e->u.load.idx[d]))
			return false;
	return true;
}

static bool
varies(const Vec *V, const TcExpr *e)
{
	switch (e->kind) {
	case TC_EX_VAR: /* a tunable is uniform (and indexed apart) */
		return e->u.var->kind != TC_VAR_TUNABLE &&
		       V->lanes[e->u.var->index];
	case TC_EX_LOAD:
		return V->elided[e->u.load.var->index] || column_load(V, e);
	case TC_EX_BINARY:
		return varies(V, e->u.bin.lhs) || varies(V, e->u.bin.rhs);
	case TC_EX_UNARY:
		return varies(V, e->u.un.arg);
	case TC_EX_SELECT:
		return varies(V, e->u.sel.cond) || varies(V, e->u.sel.then) ||
		       varies(V, e->u.sel.els);
	case TC_EX_CALL:
		for (int i = 0; i < e->u.call.nargs; i++)
			if (varies(V, e->u.call.args[i]))
				return true;
		return false;
	case TC_EX_CAST:
		return varies(V, e->u.cast.arg);
	default:
		return false;
	}
}

static bool expr_ok(const Vec *V, const TcExpr *e);

static TcVisit
find_tensor_load(void *ctx, const TcExpr *e)
{
	bool *found = ctx;
	if (e->kind == TC_EX_LOAD && e->u.load.var->kind == TC_VAR_TENSOR) {
		*found = true;
		return TC_VISIT_STOP;
	}
	return TC_VISIT_INTO;
}

/* Whether e reads a tensor element (which a branch of a select on
 * vectors, evaluated for every lane, could read out of its bounds). */
static bool
reads_tensor(const TcExpr *e)
{
	bool found = false;
	TcVisitor vis = { .expr = find_tensor_load, .ctx = &found };
	tc_expr_visit(e, &vis);
	return found;
}

/* Whether condition c has a form as a lane mask: comparisons of f32
 * values with forms, joined by &&, || and !, and uniform parts. */
static bool
mask_ok(const Vec *V, const TcExpr *c)
{
	if (!varies(V, c))
		return !mentions_column(V, c);
	if (c->kind == TC_EX_UNARY)
		return c->u.un.op == TC_UOP_NOT && mask_ok(V, c->u.un.arg);
	if (c->kind != TC_EX_BINARY)
		return false;
	const TcExpr *l = c->u.bin.lhs, *r = c->u.bin.rhs;
	switch (c->u.bin.op) {
	case TC_OP_LAND: case TC_OP_LOR:
		return mask_ok(V, l) && mask_ok(V, r);
	case TC_OP_LT: case TC_OP_LE: case TC_OP_GT: case TC_OP_GE:
	case TC_OP_EQ: case TC_OP_NE:
		return l->dtype == TC_DT_F32 && r->dtype == TC_DT_F32 &&
		       expr_ok(V, l) && expr_ok(V, r);
	default:
		return false;
	}
}

static bool
expr_ok(const Vec *V, const TcExpr *e)
{
	if (!varies(V, e))
		return !mentions_column(V, e);
	/* f16 and bf16 values are held as float: an element of such a
	 * buffer, and a conversion to the type (rounded in registers,
	 * tilec_vround_f16); arithmetic on them has no form. */
	if (e->dtype != TC_DT_F32 &&
	    !(narrow(e->dtype) &&
	      (e->kind == TC_EX_LOAD || e->kind == TC_EX_CAST)))
		return false;
	switch (e->kind) {
	case TC_EX_VAR:
		return true;
	case TC_EX_LOAD: {
		const TcVar *v = e->u.load.var;
		if (V->elided[v->index])
			return e->dtype == TC_DT_F32;
		return v->kind == TC_VAR_BUFFER && tc_vector_row_type(v->dtype);
	}
	case TC_EX_BINARY:
		switch (e->u.bin.op) {
		case TC_OP_ADD: case TC_OP_SUB: case TC_OP_MUL: case TC_OP_DIV:
			return e->u.bin.lhs->dtype == TC_DT_F32 &&
			       e->u.bin.rhs->dtype == TC_DT_F32 &&
			       expr_ok(V, e->u.bin.lhs) && expr_ok(V, e->u.bin.rhs);
		default:
			return false;
		}
	case TC_EX_UNARY:
		return e->u.un.op == TC_UOP_NEG && expr_ok(V, e->u.un.arg);
	case TC_EX_SELECT: /* both branches computed, the mask picks */
		return e->u.sel.then->dtype == TC_DT_F32 &&
		       e->u.sel.els->dtype == TC_DT_F32 &&
		       mask_ok(V, e->u.sel.cond) &&
		       !reads_tensor(e->u.sel.then) &&
		       !reads_tensor(e->u.sel.els) &&
		       expr_ok(V, e->u.sel.then) && expr_ok(V, e->u.sel.els);
	case TC_EX_CALL:
		if (!vector_func(e->u.call.fn))
			return false;
		for (int i = 0; i < e->u.call.nargs; i++)
			if (e->u.call.args[i]->dtype != TC_DT_F32 ||
			    !expr_ok(V, e->u.call.args[i]))
				return false;
		return true;
	case TC_EX_CAST: /* f32 to f32, f16 or bf16, or back from those */
		return (e->u.cast.arg->dtype == TC_DT_F32 ||
			e->dtype == TC_DT_F32) &&
		       tc_vector_row_type(e->u.cast.arg->dtype) &&
		       expr_ok(V, e->u.cast.arg);
	default:
		return false;
	}
}

/* Whether a store of val to dst (a LOAD) writes the lanes' own elements
 * of an f32, f16 or bf16 buffer (val of the buffer's type), or an f32
 * element kept in registers. */
static bool
lane_store(const Vec *V, const TcExpr *dst, const TcExpr *val)
{
	const TcVar *v = dst->u.load.var;
	if (V->elided[v->index])
		return v->dtype == TC_DT_F32 && val->dtype == TC_DT_F32;
	return v->kind == TC_VAR_BUFFER && tc_vector_row_type(v->dtype) &&
	       val->dtype == v->dtype && column_load(V, dst);
}

static bool
stmt_ok(Vec *V, const TcStmt *s)
{
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++)
			if (!stmt_ok(V, s->u.block.body.items[i]))
				return false;
		return true;
	case TC_ST_DECL: {
		const TcVar *v = s->u.decl.var;
		const TcExpr *init = s->u.decl.init;
		if (v->kind != TC_VAR_LOCAL || !init || !expr_ok(V, init))
			return false;
		if (!varies(V, init))
			return true;
		V->lanes[v->index] = true;
		return v->dtype == TC_DT_F32 && init->dtype == TC_DT_F32;
	}
	case TC_ST_ASSIGN: {
		const TcExpr *dst = s->u.assign.dst, *val = s->u.assign.value;
		if (!tc_vector_row_type(val->dtype) || !expr_ok(V, val))
			return false;
		if (dst->kind == TC_EX_VAR)
			return val->dtype == TC_DT_F32 &&
			       V->lanes[dst->u.var->index];
		return dst->kind == TC_EX_LOAD && lane_store(V, dst, val);
	}
	default:
		return false;
	}
}

static TcVisit
find_vector_call(void *ctx, const TcExpr *e)
{
	bool *found = ctx;
	if (e->kind == TC_EX_CALL && heavy_func(e->u.call.fn)) {
		*found = true;
		return TC_VISIT_STOP;
	}
	return TC_VISIT_INTO;
}

/* Whether a nest's body calls exp, exp2 or tanh. */
static bool
calls_heavy_func(const TcStmt *body)
{
	bool found = false;
	TcVisitor vis = { .expr = find_vector_call, .ctx = &found };
	tc_stmt_visit(body, &vis);
	return found;
}

/* Whether copy op of run F is one out the vector loop can write: rows
 * of f32 into f32, f16 or bf16 over the run's index space whose valid
 * columns the main loop covers. */
static bool
streamable(const TcKernel *k, const TcFusion *F, const TcFuseOp *op)
{
	return op->kind == TC_FUSE_STORE && op->rank == F->rank &&
	       tc_vector_row_copy(op) && tc_cpu_edge_covers(k, F, op);
}

/* Whether copy op of run F is read in its loop (TcFuseOp.elided or over
 * the run's whole index space). */
static bool
loaded_in_loop(const TcFusion *F, const TcFuseOp *op)
{
	return op->kind == TC_FUSE_LOAD && (op->elided || op->rank == F->rank);
}

/* Whether run F's main loop runs on vectors (the top of this file). */
static bool
vector_loop(const TcKernel *k, const TcFusion *F)
{
	bool worth = false;
	for (int o = 0; o < F->n; o++) {
		const TcFuseOp *op = &F->ops[o];
		if (op->kind == TC_FUSE_MAP)
			worth |= calls_heavy_func(op->body);
		worth |= streamable(k, F, op);
		worth |= loaded_in_loop(F, op) && narrow(op->reg->var->dtype);
	}
	if (!worth)
		return false;
	for (int o = 0; o < F->n; o++) {
		const TcFuseOp *op = &F->ops[o];
		switch (op->kind) {
		case TC_FUSE_LOAD:
			if (loaded_in_loop(F, op) && !tc_vector_row_copy(op))
				return false;
			break;
		case TC_FUSE_STORE:
			break;
		case TC_FUSE_REDUCE:
			if (!tc_vector_sum(op))
				return false;
			break;
		case TC_FUSE_MAP:
			if (!op->vector)
				return false;
			break;
		}
	}
	return true;
}

bool
tc_cpu_vector(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d)
{
	(void)d;
	int lanes = opt->target.explicit_lanes;
	if (lanes <= 0)
		return true;
	for (int i = 0; i < p->kernels.len; i++) {
		TcKernel *k = p->kernels.items[i];
		for (int f = 0; f < k->fusions.len; f++) {
			TcFusion *F = k->fusions.items[f];
			F->vec = false;
			for (int o = 0; o < F->n; o++)
				F->ops[o].streamed = false;
			if (F->cols < lanes)
				continue;
			Vec V = { .elided = F->elided,
				  .lanes = tc_alloc(a, (size_t)k->vars.len + 1) };
			bool fits = true;
			for (int o = 0; o < F->n; o++)
				if (F->ops[o].kind == TC_FUSE_MAP) {
					if (V.ncol == MAX_COLS)
						fits = false;
					else
						V.col[V.ncol++] = F->ops[o].var[1];
				}
			for (int o = 0; o < F->n && fits; o++) {
				TcFuseOp *op = &F->ops[o];
				if (op->kind == TC_FUSE_MAP)
					op->vector = stmt_ok(&V, op->main ? op->main
									  : op->body);
			}
			F->lanes = V.lanes;
			F->vec = fits && vector_loop(k, F);
			for (int o = 0; o < F->n; o++) {
				F->ops[o].streamed =
					F->vec && streamable(k, F, &F->ops[o]);
				k->streams |= F->ops[o].streamed;
			}
		}
	}
	return true;
}
