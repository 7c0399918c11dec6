/*
 * fixture.c - samples/gemm.c as hand-built IR, for the printer and
 * verifier tests.
 *
 * The program is built the way the parser builds it after check: vars owned
 * by the kernel in declaration order, whole regions spanning every dim in
 * order, tensor regions spanning their last dims.  Tests take the handles
 * in Fixture and break one thing at a time.
 */
#include "unit.h"

#include <string.h>

TcLoc
fx_loc(int line, int col)
{
	return (TcLoc){ "gemm.c", line, col };
}

TcExpr *
fx_call(Fixture *f, TcFunc fn, TcExpr *x, TcExpr *y, TcLoc loc)
{
	bool is_float = fn != TC_FN_CEILDIV && fn != TC_FN_MIN &&
			fn != TC_FN_MAX;
	TcExpr *e = tc_expr_new(f->a, TC_EX_CALL,
				is_float ? TC_DT_F32 : TC_DT_I32, loc);
	e->u.call.fn = fn;
	e->u.call.nargs = y ? 2 : 1;
	e->u.call.args = tc_alloc(f->a, 2 * sizeof(TcExpr *));
	e->u.call.args[0] = x;
	e->u.call.args[1] = y;
	return e;
}

TcExpr *
fx_load(Fixture *f, TcVar *v, TcExpr *i, TcExpr *j, TcLoc loc)
{
	TcExpr *e = tc_expr_new(f->a, TC_EX_LOAD, v->dtype, loc);
	e->u.load.var = v;
	e->u.load.idx[0] = i;
	e->u.load.idx[1] = j;
	return e;
}

TcVar *
fx_buffer(Fixture *f, const char *name, TcScope scope, TcDtype t, TcExpr *d0,
	  TcExpr *d1, TcLoc loc)
{
	TcVar *v = tc_var_new(f->a, f->k, TC_VAR_BUFFER, name, t, loc);
	v->scope = scope;
	v->rank = d1 ? 2 : 1;
	v->shape[0] = d0;
	v->shape[1] = d1;
	return v;
}

TcStmt *
fx_decl(Fixture *f, TcVar *v, TcExpr *init, TcLoc loc)
{
	TcStmt *s = tc_stmt_new(f->a, TC_ST_DECL, loc);
	s->u.decl.var = v;
	s->u.decl.init = init;
	return s;
}

TcStmt *
fx_block(Fixture *f, TcLoc loc)
{
	return tc_stmt_new(f->a, TC_ST_BLOCK, loc);
}

void
fx_push(Fixture *f, TcStmt *block, TcStmt *s)
{
	tc_vec_push(f->a, &block->u.block.body, s);
}

TcStmt *
fx_loop(Fixture *f, TcLoopKind kind, TcVar *var, TcExpr *end, TcLoc loc)
{
	TcStmt *s = tc_stmt_new(f->a, TC_ST_FOR, loc);
	s->u.loop.kind = kind;
	s->u.loop.var = var;
	s->u.loop.begin = tc_expr_int(f->a, 0, loc);
	s->u.loop.end = end;
	s->u.loop.step = tc_expr_int(f->a, 1, loc);
	s->u.loop.body = fx_block(f, loc);
	return s;
}

/* The whole of a buffer, as tile operations name it; `f` owns the zero
 * origins. */
TcRegion
fx_whole(Fixture *f, TcVar *v)
{
	TcRegion r;
	memset(&r, 0, sizeof r);
	r.var = v;
	r.whole = true;
	r.ndims = v->rank;
	for (int i = 0; i < v->rank; i++) {
		r.dims[i] = i;
		r.origin[i] = tc_expr_int(f->a, 0, v->loc);
	}
	r.loc = v->loc;
	return r;
}

static TcVar *
tunable(Fixture *f, const char *name, long long def, int line,
	const long long *choices, int n)
{
	TcVar *v = tc_var_new(f->a, NULL, TC_VAR_TUNABLE, name, TC_DT_I32,
			      (TcLoc){ "samples/gemm.c", line, 12 });
	v->def_value = def;
	v->value = def;
	v->choices = tc_alloc(f->a, sizeof(long long) * (size_t)n);
	memcpy(v->choices, choices, sizeof(long long) * (size_t)n);
	v->nchoices = n;
	tc_vec_push(f->a, &f->p->tunables, v);
	return v;
}

static TcVar *
param(Fixture *f, TcVarKind kind, const char *name, TcDtype t, int col)
{
	TcVar *v = tc_var_new(f->a, f->k, kind, name, t, fx_loc(17, col));
	v->param = f->k->params.len;
	tc_vec_push(f->a, &f->k->params, v);
	return v;
}

static TcExpr *
ref(Fixture *f, TcVar *v, int line, int col)
{
	return tc_expr_var(f->a, v, fx_loc(line, col));
}

/* by * BLOCK_M and the like, at line:col. */
static TcExpr *
mul(Fixture *f, TcVar *x, TcVar *y, int line, int col)
{
	return tc_expr_binary(f->a, TC_OP_MUL, ref(f, x, line, col),
			      ref(f, y, line, col + 5), fx_loc(line, col));
}

/* A region of a rank-2 tensor at (o0, o1) spanning both dims. */
static TcRegion
region2(TcVar *v, TcExpr *o0, TcExpr *o1, TcLoc loc)
{
	TcRegion r;
	memset(&r, 0, sizeof r);
	r.var = v;
	r.origin[0] = o0;
	r.origin[1] = o1;
	r.ndims = 2;
	r.dims[0] = 0;
	r.dims[1] = 1;
	r.loc = loc;
	return r;
}

static void
tensor_shape(TcVar *t, TcExpr *d0, TcExpr *d1, bool is_const)
{
	t->rank = 2;
	t->shape[0] = d0;
	t->shape[1] = d1;
	t->is_const = is_const;
}

void
fixture_init(Fixture *f)
{
	static const long long mn_choices[] = { 64, 128, 256 };
	static const long long k_choices[] = { 32, 64 };
	static const long long stage_choices[] = { 2, 3, 4 };

	memset(f, 0, sizeof *f);
	f->a = tc_arena_new();
	TcArena *a = f->a;
	f->p = tc_alloc(a, sizeof *f->p);
	f->p->path = "samples/gemm.c";
	f->p->text = "";
	f->block_m = tunable(f, "BLOCK_M", 128, 11, mn_choices, 3);
	f->block_n = tunable(f, "BLOCK_N", 128, 12, mn_choices, 3);
	f->block_k = tunable(f, "BLOCK_K", 32, 13, k_choices, 2);
	f->stages = tunable(f, "STAGES", 3, 14, stage_choices, 3);

	TcKernel *k = tc_alloc(a, sizeof *k);
	f->k = k;
	k->name = "gemm";
	k->loc = (TcLoc){ "samples/gemm.c", 17, 1 };
	tc_vec_push(a, &f->p->kernels, k);
	f->m = param(f, TC_VAR_SCALAR, "M", TC_DT_I32, 10);
	f->n = param(f, TC_VAR_SCALAR, "N", TC_DT_I32, 17);
	f->kk = param(f, TC_VAR_SCALAR, "K", TC_DT_I32, 24);
	f->ta = param(f, TC_VAR_TENSOR, "A", TC_DT_F16, 37);
	f->tb = param(f, TC_VAR_TENSOR, "B", TC_DT_F16, 55);
	f->tcv = param(f, TC_VAR_TENSOR, "C", TC_DT_F16, 67);
	tensor_shape(f->ta, ref(f, f->m, 17, 39), ref(f, f->kk, 17, 42), true);
	tensor_shape(f->tb, ref(f, f->kk, 17, 57), ref(f, f->n, 17, 60), true);
	tensor_shape(f->tcv, ref(f, f->m, 17, 69), ref(f, f->n, 17, 72),
		     false);

	k->threads = tc_expr_int(a, 128, fx_loc(19, 15));
	f->bx = tc_var_new(a, k, TC_VAR_BLOCK, "bx", TC_DT_I32, fx_loc(20, 6));
	f->bx->grid_dim = 0;
	f->by = tc_var_new(a, k, TC_VAR_BLOCK, "by", TC_DT_I32, fx_loc(21, 6));
	f->by->grid_dim = 1;
	k->block[0] = f->bx;
	k->block[1] = f->by;
	k->grid[0] = fx_call(f, TC_FN_CEILDIV, ref(f, f->n, 20, 31),
			     ref(f, f->block_n, 20, 34), fx_loc(20, 23));
	k->grid[1] = fx_call(f, TC_FN_CEILDIV, ref(f, f->m, 21, 31),
			     ref(f, f->block_m, 21, 34), fx_loc(21, 23));

	TcStmt *body = fx_block(f, fx_loc(18, 1));
	k->body = body;
	f->as = fx_buffer(f, "As", TC_SCOPE_SHARED, TC_DT_F16,
			  ref(f, f->block_m, 23, 21), ref(f, f->block_k, 23, 30),
			  fx_loc(23, 18));
	f->bs = fx_buffer(f, "Bs", TC_SCOPE_SHARED, TC_DT_F16,
			  ref(f, f->block_k, 24, 21), ref(f, f->block_n, 24, 30),
			  fx_loc(24, 18));
	f->acc = fx_buffer(f, "acc", TC_SCOPE_FRAGMENT, TC_DT_F32,
			   ref(f, f->block_m, 25, 24),
			   ref(f, f->block_n, 25, 33), fx_loc(25, 20));
	f->decl_as = fx_decl(f, f->as, NULL, fx_loc(23, 2));
	fx_push(f, body, f->decl_as);
	fx_push(f, body, fx_decl(f, f->bs, NULL, fx_loc(24, 2)));
	fx_push(f, body, fx_decl(f, f->acc, NULL, fx_loc(25, 2)));

	f->fill = tc_stmt_new(a, TC_ST_FILL, fx_loc(27, 2));
	f->fill->u.fill.dst = fx_whole(f, f->acc);
	f->fill->u.fill.value = tc_expr_float(a, 0.0, TC_DT_F32, fx_loc(27, 2));
	fx_push(f, body, f->fill);

	f->kloop = tc_var_new(a, k, TC_VAR_LOOP, "k", TC_DT_I32, fx_loc(28, 17));
	f->loop = fx_loop(f, TC_LOOP_PIPELINED, f->kloop,
			  fx_call(f, TC_FN_CEILDIV, ref(f, f->kk, 28, 28),
				  ref(f, f->block_k, 28, 31), fx_loc(28, 20)),
			  fx_loc(28, 2));
	f->loop->u.loop.stages = ref(f, f->stages, 28, 41);
	fx_push(f, body, f->loop);

	TcStmt *lb = f->loop->u.loop.body;
	f->copy_a = tc_stmt_new(a, TC_ST_COPY, fx_loc(29, 3));
	f->copy_a->u.copy.dst = fx_whole(f, f->as);
	f->copy_a->u.copy.src = region2(f->ta, mul(f, f->by, f->block_m, 29, 20),
					mul(f, f->kloop, f->block_k, 29, 35),
					fx_loc(29, 17));
	fx_push(f, lb, f->copy_a);
	f->copy_b = tc_stmt_new(a, TC_ST_COPY, fx_loc(30, 3));
	f->copy_b->u.copy.dst = fx_whole(f, f->bs);
	f->copy_b->u.copy.src = region2(f->tb,
					mul(f, f->kloop, f->block_k, 30, 20),
					mul(f, f->bx, f->block_n, 30, 35),
					fx_loc(30, 17));
	fx_push(f, lb, f->copy_b);
	f->gemm = tc_stmt_new(a, TC_ST_GEMM, fx_loc(31, 3));
	f->gemm->u.gemm.c = fx_whole(f, f->acc);
	f->gemm->u.gemm.a = fx_whole(f, f->as);
	f->gemm->u.gemm.b = fx_whole(f, f->bs);
	fx_push(f, lb, f->gemm);

	f->store = tc_stmt_new(a, TC_ST_COPY, fx_loc(33, 2));
	f->store->u.copy.dst = region2(f->tcv, mul(f, f->by, f->block_m, 33, 15),
				       mul(f, f->bx, f->block_n, 33, 30),
				       fx_loc(33, 12));
	f->store->u.copy.src = fx_whole(f, f->acc);
	fx_push(f, body, f->store);
}

void
fixture_free(Fixture *f)
{
	tc_arena_free(f->a);
	memset(f, 0, sizeof *f);
}
