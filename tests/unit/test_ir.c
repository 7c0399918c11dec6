/*
 * test_ir.c - ir.c: the name tables, tc_binop_type, tc_expr_const,
 * tc_expr_equal and tc_expr_clone.
 */
#include "unit.h"

#include "analysis/walk.h"

#include <string.h>

static const TcLoc noloc;

START_TEST(dtype_table_round_trips)
{
	static const struct {
		TcDtype t;
		const char *name;
		int bits;
		bool is_float, is_int;
	} want[] = {
		{ TC_DT_F64, "f64", 64, true, false },
		{ TC_DT_F32, "f32", 32, true, false },
		{ TC_DT_F16, "f16", 16, true, false },
		{ TC_DT_BF16, "bf16", 16, true, false },
		{ TC_DT_FP8E4M3, "fp8e4m3", 8, true, false },
		{ TC_DT_I64, "i64", 64, false, true },
		{ TC_DT_I32, "i32", 32, false, true },
		{ TC_DT_U8, "u8", 8, false, true },
		{ TC_DT_I4, "i4", 4, false, true },
		{ TC_DT_BOOL, "bool", 1, false, true },
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		ck_assert_str_eq(tc_dtype_name(want[i].t), want[i].name);
		ck_assert_int_eq(tc_dtype_bits(want[i].t), want[i].bits);
		ck_assert(tc_dtype_is_float(want[i].t) == want[i].is_float);
		ck_assert(tc_dtype_is_int(want[i].t) == want[i].is_int);
	}
	for (int t = TC_DT_NONE + 1; t < TC_DT_COUNT; t++)
		ck_assert_int_eq(tc_dtype_from_name(tc_dtype_name(t)), t);
	ck_assert_int_eq(tc_dtype_from_name("float"), TC_DT_NONE);
	ck_assert_int_eq(tc_dtype_from_name(""), TC_DT_NONE);
}
END_TEST

START_TEST(operator_tables)
{
	ck_assert_str_eq(tc_binop_name(TC_OP_SHL), "<<");
	ck_assert_str_eq(tc_binop_name(TC_OP_LAND), "&&");
	ck_assert_str_eq(tc_unop_name(TC_UOP_BNOT), "~");
	/* C's precedence ladder. */
	ck_assert_int_gt(tc_binop_prec(TC_OP_MUL), tc_binop_prec(TC_OP_ADD));
	ck_assert_int_eq(tc_binop_prec(TC_OP_MUL), tc_binop_prec(TC_OP_REM));
	ck_assert_int_gt(tc_binop_prec(TC_OP_ADD), tc_binop_prec(TC_OP_SHL));
	ck_assert_int_gt(tc_binop_prec(TC_OP_SHL), tc_binop_prec(TC_OP_LT));
	ck_assert_int_gt(tc_binop_prec(TC_OP_LT), tc_binop_prec(TC_OP_EQ));
	ck_assert_int_gt(tc_binop_prec(TC_OP_EQ), tc_binop_prec(TC_OP_BAND));
	ck_assert_int_gt(tc_binop_prec(TC_OP_BAND), tc_binop_prec(TC_OP_BXOR));
	ck_assert_int_gt(tc_binop_prec(TC_OP_BXOR), tc_binop_prec(TC_OP_BOR));
	ck_assert_int_gt(tc_binop_prec(TC_OP_BOR), tc_binop_prec(TC_OP_LAND));
	ck_assert_int_gt(tc_binop_prec(TC_OP_LAND), tc_binop_prec(TC_OP_LOR));
	for (int op = 0; op < TC_OP_COUNT; op++)
		ck_assert_ptr_nonnull(tc_binop_name(op));
}
END_TEST

START_TEST(function_and_kind_tables)
{
	for (int fn = 0; fn < TC_FN_COUNT; fn++) {
		ck_assert_int_eq(tc_func_from_name(tc_func_name(fn)), fn);
		ck_assert_int_ge(tc_func_arity(fn), 1);
	}
	ck_assert_int_eq(tc_func_arity(TC_FN_FMAXF), 2);
	ck_assert_int_eq(tc_func_arity(TC_FN_EXP2F), 1);
	ck_assert_int_eq(tc_func_from_name("printf"), TC_FN_COUNT);
	ck_assert_str_eq(tc_varkind_name(TC_VAR_TUNABLE), "tunable");
	ck_assert_str_eq(tc_scope_name(TC_SCOPE_FRAGMENT), "fragment");
	ck_assert_str_eq(tc_scope_name(TC_SCOPE_NONE), "none");
	ck_assert_str_eq(tc_exprkind_name(TC_EX_LOAD), "load");
	ck_assert_str_eq(tc_stmtkind_name(TC_ST_ATOMIC_ADD), "atomic_add");
	ck_assert_str_eq(tc_reduce_name(TC_RED_ABSMAX), "absmax");
	for (int k = 0; k < TC_ST_COUNT; k++)
		ck_assert_ptr_nonnull(tc_stmtkind_name(k));
	for (int k = 0; k < TC_EX_COUNT; k++)
		ck_assert_ptr_nonnull(tc_exprkind_name(k));
}
END_TEST

START_TEST(binop_types_follow_c)
{
	/* Narrow floats compute in f32. */
	ck_assert_int_eq(tc_binop_type(TC_OP_ADD, TC_DT_F16, TC_DT_F16),
			 TC_DT_F32);
	ck_assert_int_eq(tc_binop_type(TC_OP_MUL, TC_DT_BF16, TC_DT_I32),
			 TC_DT_F32);
	ck_assert_int_eq(tc_binop_type(TC_OP_MUL, TC_DT_F32, TC_DT_F64),
			 TC_DT_F64);
	ck_assert_int_eq(tc_binop_type(TC_OP_SUB, TC_DT_I32, TC_DT_F32),
			 TC_DT_F32);
	/* Integers promote to int, or to i64. */
	ck_assert_int_eq(tc_binop_type(TC_OP_ADD, TC_DT_I8, TC_DT_U8),
			 TC_DT_I32);
	ck_assert_int_eq(tc_binop_type(TC_OP_ADD, TC_DT_I64, TC_DT_I32),
			 TC_DT_I64);
	ck_assert_int_eq(tc_binop_type(TC_OP_SHL, TC_DT_I32, TC_DT_I64),
			 TC_DT_I32);
	ck_assert_int_eq(tc_binop_type(TC_OP_SHR, TC_DT_I64, TC_DT_I32),
			 TC_DT_I64);
	/* Comparisons and logic give int. */
	ck_assert_int_eq(tc_binop_type(TC_OP_LT, TC_DT_F64, TC_DT_F64),
			 TC_DT_I32);
	ck_assert_int_eq(tc_binop_type(TC_OP_LAND, TC_DT_F32, TC_DT_I64),
			 TC_DT_I32);
}
END_TEST

/* A tunable with value v, outside any kernel. */
static TcVar *
tunable(TcArena *a, const char *name, long long v)
{
	TcVar *t = tc_var_new(a, NULL, TC_VAR_TUNABLE, name, TC_DT_I32, noloc);
	t->value = v;
	return t;
}

static TcExpr *
call2(TcArena *a, TcFunc fn, TcExpr *x, TcExpr *y)
{
	TcExpr *e = tc_expr_new(a, TC_EX_CALL, TC_DT_I32, noloc);
	e->u.call.fn = fn;
	e->u.call.nargs = 2;
	e->u.call.args = tc_alloc(a, 2 * sizeof(TcExpr *));
	e->u.call.args[0] = x;
	e->u.call.args[1] = y;
	return e;
}

START_TEST(const_folds_tunables_and_literals)
{
	TcArena *a = tc_arena_new();
	TcExpr *bm = tc_expr_var(a, tunable(a, "BLOCK_M", 128), noloc);
	TcExpr *c7 = tc_expr_int(a, 7, noloc);
	long long v;

	ck_assert(tc_expr_const(tc_expr_int(a, -3, noloc), &v));
	ck_assert_int_eq(v, -3);
	ck_assert(tc_expr_const(bm, &v));
	ck_assert_int_eq(v, 128);
	ck_assert(tc_expr_const(tc_expr_binary(a, TC_OP_MUL, bm, c7, noloc),
				&v));
	ck_assert_int_eq(v, 896);
	ck_assert(tc_expr_const(call2(a, TC_FN_CEILDIV, c7,
				      tc_expr_int(a, 2, noloc)), &v));
	ck_assert_int_eq(v, 4);
	ck_assert(tc_expr_const(call2(a, TC_FN_MIN, bm, c7), &v));
	ck_assert_int_eq(v, 7);
	ck_assert(tc_expr_const(call2(a, TC_FN_MAX, bm, c7), &v));
	ck_assert_int_eq(v, 128);
	ck_assert(tc_expr_const(tc_expr_unary(a, TC_UOP_NEG, bm, noloc), &v));
	ck_assert_int_eq(v, -128);
	ck_assert(tc_expr_const(tc_expr_binary(a, TC_OP_SHL, c7,
					       tc_expr_int(a, 2, noloc), noloc),
				&v));
	ck_assert_int_eq(v, 28);

	TcExpr *sel = tc_expr_new(a, TC_EX_SELECT, TC_DT_I32, noloc);
	sel->u.sel.cond = tc_expr_binary(a, TC_OP_LT, c7, bm, noloc);
	sel->u.sel.then = c7;
	sel->u.sel.els = bm;
	ck_assert(tc_expr_const(sel, &v));
	ck_assert_int_eq(v, 7);
	tc_arena_free(a);
}
END_TEST

START_TEST(const_refuses_what_is_not_constant)
{
	TcArena *a = tc_arena_new();
	TcKernel k = { 0 };
	TcVar *n = tc_var_new(a, &k, TC_VAR_SCALAR, "N", TC_DT_I32, noloc);
	TcExpr *en = tc_expr_var(a, n, noloc);
	TcExpr *zero = tc_expr_int(a, 0, noloc);
	TcExpr *one = tc_expr_int(a, 1, noloc);
	long long v;

	ck_assert(!tc_expr_const(en, &v));
	ck_assert(!tc_expr_const(tc_expr_binary(a, TC_OP_ADD, en, one, noloc),
				 &v));
	ck_assert(!tc_expr_const(tc_expr_binary(a, TC_OP_DIV, one, zero,
						noloc), &v));
	ck_assert(!tc_expr_const(tc_expr_binary(a, TC_OP_REM, one, zero,
						noloc), &v));
	ck_assert(!tc_expr_const(call2(a, TC_FN_CEILDIV, one, zero), &v));
	ck_assert(!tc_expr_const(tc_expr_binary(a, TC_OP_SHL, one,
						tc_expr_int(a, 64, noloc),
						noloc), &v));
	ck_assert(!tc_expr_const(tc_expr_float(a, 1.0, TC_DT_F32, noloc), &v));
	ck_assert(!tc_expr_const(tc_expr_binary(
					 a, TC_OP_ADD, one,
					 tc_expr_float(a, 1.0, TC_DT_F32, noloc),
					 noloc), &v));
	tc_arena_free(a);
}
END_TEST

/* Overflow is its own answer, step by step in the C type: an int product
 * that wraps, a long long one past 2^63, ceildiv near INT_MAX. */
START_TEST(eval_reports_overflow)
{
	TcArena *a = tc_arena_new();
	TcExpr *big = tc_expr_var(a, tunable(a, "B", 65536), noloc);
	long long v;

	ck_assert_int_eq(tc_expr_eval(tc_expr_binary(a, TC_OP_MUL, big, big,
						     noloc), &v),
			 TC_EVAL_OVERFLOW);
	TcExpr *l = tc_expr_int(a, 1LL << 62, noloc);
	l->dtype = TC_DT_I64;
	ck_assert_int_eq(tc_expr_eval(tc_expr_binary(a, TC_OP_MUL, l,
						     tc_expr_int(a, 4, noloc),
						     noloc), &v),
			 TC_EVAL_OVERFLOW);
	ck_assert_int_eq(tc_expr_eval(tc_expr_binary(a, TC_OP_MUL, l,
						     tc_expr_int(a, 1, noloc),
						     noloc), &v),
			 TC_EVAL_CONST);
	ck_assert(v == 1LL << 62);
	/* (a + b - 1) / b wrapped here. */
	TcExpr *m = tc_expr_int(a, 2147483644, noloc);
	ck_assert_int_eq(tc_expr_eval(call2(a, TC_FN_CEILDIV, m,
					    tc_expr_int(a, 128, noloc)), &v),
			 TC_EVAL_CONST);
	ck_assert_int_eq(v, 16777216);
	/* abs folds; abs(INT_MIN) overflows. */
	TcExpr *ab = call2(a, TC_FN_ABS, tc_expr_int(a, -7, noloc), NULL);
	ab->u.call.nargs = 1;
	ck_assert_int_eq(tc_expr_eval(ab, &v), TC_EVAL_CONST);
	ck_assert_int_eq(v, 7);
	ab->u.call.args[0] = tc_expr_int(a, -2147483647 - 1, noloc);
	ck_assert_int_eq(tc_expr_eval(ab, &v), TC_EVAL_OVERFLOW);
	ck_assert_int_eq(tc_ceildiv(2147483647, 2147483647), 1);
	ck_assert_int_eq(tc_ceildiv(0, 5), 0);
	ck_assert_int_eq(tc_ceildiv(-5, 4), -1);
	tc_arena_free(a);
}
END_TEST

START_TEST(equal_is_structural)
{
	TcArena *a = tc_arena_new();
	TcKernel k = { 0 };
	TcVar *i = tc_var_new(a, &k, TC_VAR_LOOP, "i", TC_DT_I32, noloc);
	TcVar *j = tc_var_new(a, &k, TC_VAR_LOOP, "i", TC_DT_I32, noloc);
	TcExpr *x = tc_expr_binary(a, TC_OP_ADD, tc_expr_var(a, i, noloc),
				   tc_expr_int(a, 1, noloc), noloc);
	TcExpr *y = tc_expr_binary(a, TC_OP_ADD, tc_expr_var(a, i, noloc),
				   tc_expr_int(a, 1, noloc), noloc);
	TcExpr *other_var = tc_expr_binary(a, TC_OP_ADD,
					   tc_expr_var(a, j, noloc),
					   tc_expr_int(a, 1, noloc), noloc);
	TcExpr *other_op = tc_expr_binary(a, TC_OP_SUB,
					  tc_expr_var(a, i, noloc),
					  tc_expr_int(a, 1, noloc), noloc);
	ck_assert(tc_expr_equal(x, y));
	ck_assert(tc_expr_equal(x, x));
	/* Same name, different var. */
	ck_assert(!tc_expr_equal(x, other_var));
	ck_assert(!tc_expr_equal(x, other_op));
	ck_assert(!tc_expr_equal(x, NULL));
	ck_assert(tc_expr_equal(NULL, NULL));
	ck_assert(!tc_expr_equal(tc_expr_float(a, 1.0, TC_DT_F32, noloc),
				 tc_expr_float(a, 1.0, TC_DT_F64, noloc)));
	tc_arena_free(a);
}
END_TEST

/* x[i][c] for a rank-2 f32 buffer x. */
static TcExpr *
load_at(TcArena *a, TcVar *x, TcVar *i, long long c)
{
	TcExpr *e = tc_expr_new(a, TC_EX_LOAD, TC_DT_F32, noloc);
	e->u.load.var = x;
	e->u.load.idx[0] = tc_expr_var(a, i, noloc);
	e->u.load.idx[1] = tc_expr_int(a, c, noloc);
	return e;
}

START_TEST(clone_is_deep)
{
	TcArena *a = tc_arena_new();
	TcKernel k = { 0 };
	TcVar *x = tc_var_new(a, &k, TC_VAR_BUFFER, "x", TC_DT_F32, noloc);
	x->rank = 2;
	TcVar *i = tc_var_new(a, &k, TC_VAR_LOOP, "i", TC_DT_I32, noloc);
	TcExpr *load = load_at(a, x, i, 3);
	TcExpr *e = tc_expr_unary(a, TC_UOP_NEG, load, noloc);
	TcExpr *c = tc_expr_clone(a, e);
	ck_assert(tc_expr_equal(e, c));
	ck_assert_ptr_ne(c, e);
	ck_assert_ptr_ne(c->u.un.arg, load);
	ck_assert_ptr_ne(c->u.un.arg->u.load.idx[0], load->u.load.idx[0]);
	ck_assert_ptr_eq(c->u.un.arg->u.load.var, x);
	c->u.un.arg->u.load.idx[1]->u.ival = 4;
	ck_assert_int_eq(load->u.load.idx[1]->u.ival, 3);
	ck_assert_ptr_null(tc_expr_clone(a, NULL));
	tc_arena_free(a);
}
END_TEST

START_TEST(vars_join_their_kernel)
{
	TcArena *a = tc_arena_new();
	TcKernel k = { 0 };
	TcVar *x = tc_var_new(a, &k, TC_VAR_LOCAL, "x", TC_DT_F32, noloc);
	TcVar *y = tc_var_new(a, &k, TC_VAR_LOCAL, "y", TC_DT_F32, noloc);
	TcVar *t = tc_var_new(a, NULL, TC_VAR_TUNABLE, "T", TC_DT_I32, noloc);
	ck_assert_int_eq(k.vars.len, 2);
	ck_assert_int_eq(x->index, 0);
	ck_assert_int_eq(y->index, 1);
	ck_assert_ptr_eq(k.vars.items[1], y);
	ck_assert_int_eq(t->index, -1);
	ck_assert_int_eq(x->param, -1);
	tc_arena_free(a);
}
END_TEST

/* What a visit sees, one word a node: statements and expressions by
 * kind, vars by name; a LOAD is skipped over or stops the walk when the
 * test says so. */
typedef struct Trace {
	TcBuf b;       /* the words */
	TcVisit load;  /* what to answer at a LOAD */
} Trace;

static TcVisit
trace_expr(void *ctx, const TcExpr *e)
{
	Trace *t = ctx;
	tc_buf_printf(&t->b, "%s ", tc_exprkind_name(e->kind));
	if (e->kind == TC_EX_VAR || e->kind == TC_EX_LOAD)
		tc_buf_printf(&t->b, "%s ", e->kind == TC_EX_VAR
						    ? e->u.var->name
						    : e->u.load.var->name);
	return e->kind == TC_EX_LOAD ? t->load : TC_VISIT_INTO;
}

static TcVisit
trace_stmt(void *ctx, const TcStmt *s)
{
	Trace *t = ctx;
	tc_buf_printf(&t->b, "%s ", tc_stmtkind_name(s->kind));
	return TC_VISIT_INTO;
}

static void
trace_var(void *ctx, const TcVar *v)
{
	Trace *t = ctx;
	tc_buf_printf(&t->b, "<%s> ", v->name);
}

static const char *
trace(TcArena *a, const TcStmt *s, TcVisit load, bool *stopped)
{
	Trace t = { .load = load };
	tc_buf_init(&t.b);
	TcVisitor v = { trace_expr, trace_stmt, trace_var, &t, false };
	tc_stmt_visit(s, &v);
	*stopped = v.stop;
	const char *text = tc_strdup(a, t.b.data);
	tc_buf_free(&t.b);
	return text;
}

START_TEST(visit_in_source_order)
{
	/* for (i = 0; i < 4; i++) { y = x[i][3]; x[i][0] = -y; } */
	TcArena *a = tc_arena_new();
	TcKernel k = { 0 };
	TcVar *x = tc_var_new(a, &k, TC_VAR_BUFFER, "x", TC_DT_F32, noloc);
	x->rank = 2;
	TcVar *y = tc_var_new(a, &k, TC_VAR_LOCAL, "y", TC_DT_F32, noloc);
	TcVar *i = tc_var_new(a, &k, TC_VAR_LOOP, "i", TC_DT_I32, noloc);
	TcExpr *rd = load_at(a, x, i, 3), *wr = load_at(a, x, i, 0);
	TcStmt *s1 = tc_stmt_new(a, TC_ST_ASSIGN, noloc);
	s1->u.assign.dst = tc_expr_var(a, y, noloc);
	s1->u.assign.value = rd;
	TcStmt *s2 = tc_stmt_new(a, TC_ST_ASSIGN, noloc);
	s2->u.assign.dst = wr;
	s2->u.assign.value = tc_expr_unary(a, TC_UOP_NEG,
					   tc_expr_var(a, y, noloc), noloc);
	TcStmt *body = tc_stmt_new(a, TC_ST_BLOCK, noloc);
	tc_vec_push(a, &body->u.block.body, s1);
	tc_vec_push(a, &body->u.block.body, s2);
	TcStmt *loop = tc_stmt_new(a, TC_ST_FOR, noloc);
	loop->u.loop.var = i;
	loop->u.loop.begin = tc_expr_int(a, 0, noloc);
	loop->u.loop.end = tc_expr_int(a, 4, noloc);
	loop->u.loop.body = body;

	bool stopped;
	ck_assert_str_eq(trace(a, loop, TC_VISIT_INTO, &stopped),
			 "for <i> int int block assign var y load x var i int "
			 "assign load x var i int unary var y ");
	ck_assert(!stopped);
	ck_assert_str_eq(trace(a, loop, TC_VISIT_OVER, &stopped),
			 "for <i> int int block assign var y load x "
			 "assign load x unary var y ");
	ck_assert(!stopped);
	ck_assert_str_eq(trace(a, loop, TC_VISIT_STOP, &stopped),
			 "for <i> int int block assign var y load x ");
	ck_assert(stopped);

	/* The accesses built on the visit: x read and written, locals not
	 * elements. */
	ck_assert_int_eq(tc_stmt_touches(loop, NULL, x),
			 TC_ROLE_READ | TC_ROLE_WRITE);
	ck_assert_int_eq(tc_stmt_touches(loop, s1, x), TC_ROLE_WRITE);
	ck_assert_int_eq(tc_stmt_touches(loop, NULL, y), 0);
	tc_arena_free(a);
}
END_TEST

/* tc_walk_stmts's trace: each statement's kind and parallel depth. */
static void
trace_depth(void *ctx, TcStmt *s, int par_depth)
{
	TcBuf *b = ctx;
	tc_buf_printf(b, "%s@%d ", tc_stmtkind_name(s->kind), par_depth);
}

START_TEST(walk_counts_parallel_loops)
{
	/* { f32 t; parallel i { f32 u; for j { if (1) { f32 w; } } } } */
	TcArena *a = tc_arena_new();
	TcKernel k = { 0 };
	TcVar *t = tc_var_new(a, &k, TC_VAR_LOCAL, "t", TC_DT_F32, noloc);
	TcVar *u = tc_var_new(a, &k, TC_VAR_LOCAL, "u", TC_DT_F32, noloc);
	TcVar *w = tc_var_new(a, &k, TC_VAR_LOCAL, "w", TC_DT_F32, noloc);
	TcVar *i = tc_var_new(a, &k, TC_VAR_LOOP, "i", TC_DT_I32, noloc);
	TcVar *j = tc_var_new(a, &k, TC_VAR_LOOP, "j", TC_DT_I32, noloc);
	TcStmt *decl[3];
	TcVar *vars[3] = { t, u, w };
	for (int d = 0; d < 3; d++) {
		decl[d] = tc_stmt_new(a, TC_ST_DECL, noloc);
		decl[d]->u.decl.var = vars[d];
	}
	TcStmt *then = tc_stmt_new(a, TC_ST_BLOCK, noloc);
	tc_vec_push(a, &then->u.block.body, decl[2]);
	TcStmt *cond = tc_stmt_new(a, TC_ST_IF, noloc);
	cond->u.cond.cond = tc_expr_int(a, 1, noloc);
	cond->u.cond.then = then;
	TcStmt *inner = tc_stmt_new(a, TC_ST_BLOCK, noloc);
	tc_vec_push(a, &inner->u.block.body, cond);
	TcStmt *serial = tc_stmt_new(a, TC_ST_FOR, noloc);
	serial->u.loop.kind = TC_LOOP_SERIAL;
	serial->u.loop.var = j;
	serial->u.loop.body = inner;
	TcStmt *pbody = tc_stmt_new(a, TC_ST_BLOCK, noloc);
	tc_vec_push(a, &pbody->u.block.body, decl[1]);
	tc_vec_push(a, &pbody->u.block.body, serial);
	TcStmt *par = tc_stmt_new(a, TC_ST_FOR, noloc);
	par->u.loop.kind = TC_LOOP_PARALLEL;
	par->u.loop.var = i;
	par->u.loop.body = pbody;
	TcStmt *body = tc_stmt_new(a, TC_ST_BLOCK, noloc);
	tc_vec_push(a, &body->u.block.body, decl[0]);
	tc_vec_push(a, &body->u.block.body, par);
	k.body = body;

	TcBuf b;
	tc_buf_init(&b);
	tc_walk_stmts(body, 0, trace_depth, &b);
	ck_assert_str_eq(b.data, "block@0 decl@0 for@0 block@1 decl@1 for@1 "
			 "block@1 if@1 block@1 decl@1 ");
	tc_buf_free(&b);

	/* At block level only t is in scope. */
	bool visible[6];
	tc_walk_block_visible(&k, visible);
	ck_assert(visible[t->index]);
	ck_assert(!visible[u->index] && !visible[w->index]);
	ck_assert(!visible[i->index] && !visible[j->index]);
	tc_arena_free(a);
}
END_TEST

Suite *
unit_suite_ir(void)
{
	Suite *s = suite_create("ir");
	TCase *tc = tcase_create("ir");
	tcase_add_test(tc, dtype_table_round_trips);
	tcase_add_test(tc, operator_tables);
	tcase_add_test(tc, function_and_kind_tables);
	tcase_add_test(tc, binop_types_follow_c);
	tcase_add_test(tc, const_folds_tunables_and_literals);
	tcase_add_test(tc, const_refuses_what_is_not_constant);
	tcase_add_test(tc, eval_reports_overflow);
	tcase_add_test(tc, equal_is_structural);
	tcase_add_test(tc, clone_is_deep);
	tcase_add_test(tc, vars_join_their_kernel);
	tcase_add_test(tc, visit_in_source_order);
	tcase_add_test(tc, walk_counts_parallel_loops);
	suite_add_tcase(s, tc);
	return s;
}
