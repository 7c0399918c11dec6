/*
 * test_print.c - the IR printer on hand-built IR: the whole gemm program,
 * then expressions (parentheses, literals) and each statement form.
 */
#include "unit.h"

#include <math.h>
#include <string.h>

static const TcLoc noloc;

/* The printed text of an expression, in a (leaked-to-arena) string. */
static const char *
expr_text(TcArena *a, const TcExpr *e)
{
	TcBuf b;
	tc_buf_init(&b);
	tc_print_expr(&b, e);
	const char *s = tc_strdup(a, b.data ? b.data : "");
	tc_buf_free(&b);
	return s;
}

START_TEST(gemm_program)
{
	Fixture f;
	fixture_init(&f);
	TcBuf b;
	tc_buf_init(&b);
	tc_print_program(&b, f.p);
	ck_assert_str_eq(b.data,
		"tunable BLOCK_M = 128  // choices 64 128 256; gemm.c:11\n"
		"tunable BLOCK_N = 128  // choices 64 128 256; gemm.c:12\n"
		"tunable BLOCK_K = 32  // choices 32 64; gemm.c:13\n"
		"tunable STAGES = 3  // choices 2 3 4; gemm.c:14\n"
		"\n"
		"kernel gemm(M: i32, N: i32, K: i32, A: const f16[M][K], "
		"B: const f16[K][N], C: f16[M][N])  // gemm.c:17\n"
		"\tthreads 128\n"
		"\tgrid x = ceildiv(N, BLOCK_N) as bx, "
		"y = ceildiv(M, BLOCK_M) as by\n"
		"{\n"
		"\tshared f16 As[BLOCK_M][BLOCK_K]  // 23:2\n"
		"\tshared f16 Bs[BLOCK_K][BLOCK_N]  // 24:2\n"
		"\tfragment f32 acc[BLOCK_M][BLOCK_N]  // 25:2\n"
		"\tfill acc, 0.0f  // 27:2\n"
		"\tpipelined k in 0 .. ceildiv(K, BLOCK_K), stages STAGES {"
		"  // 28:2\n"
		"\t\tcopy As <- A[by * BLOCK_M, k * BLOCK_K] dims (0, 1)"
		"  // 29:3\n"
		"\t\tcopy Bs <- B[k * BLOCK_K, bx * BLOCK_N] dims (0, 1)"
		"  // 30:3\n"
		"\t\tgemm acc += As * Bs  // 31:3\n"
		"\t}\n"
		"\tcopy C[by * BLOCK_M, bx * BLOCK_N] dims (0, 1) <- acc"
		"  // 33:2\n"
		"}\n");
	tc_buf_free(&b);
	fixture_free(&f);
}
END_TEST

START_TEST(bound_tunables_show_their_default)
{
	Fixture f;
	fixture_init(&f);
	f.block_m->value = 64;
	f.block_m->bound = true;
	f.block_k->value = 16;
	f.p->kernels.len = 0;
	TcBuf b;
	tc_buf_init(&b);
	tc_print_program(&b, f.p);
	ck_assert_str_eq(b.data,
		"tunable BLOCK_M = 64  // bound, default 128; "
		"choices 64 128 256; gemm.c:11\n"
		"tunable BLOCK_N = 128  // choices 64 128 256; gemm.c:12\n"
		"tunable BLOCK_K = 16  // default 32; choices 32 64; "
		"gemm.c:13\n"
		"tunable STAGES = 3  // choices 2 3 4; gemm.c:14\n");
	tc_buf_free(&b);
	fixture_free(&f);
}
END_TEST

START_TEST(minimal_parentheses)
{
	Fixture f;
	fixture_init(&f);
	TcArena *a = f.a;
	TcExpr *m = tc_expr_var(a, f.m, noloc), *n = tc_expr_var(a, f.n, noloc);
	TcExpr *k = tc_expr_var(a, f.kk, noloc);
#define BIN(op, l, r) tc_expr_binary(a, TC_OP_##op, l, r, noloc)
	ck_assert_str_eq(expr_text(a, BIN(ADD, BIN(MUL, m, n), k)),
			 "M * N + K");
	ck_assert_str_eq(expr_text(a, BIN(MUL, BIN(ADD, m, n), k)),
			 "(M + N) * K");
	ck_assert_str_eq(expr_text(a, BIN(SUB, BIN(SUB, m, n), k)),
			 "M - N - K");
	ck_assert_str_eq(expr_text(a, BIN(SUB, m, BIN(SUB, n, k))),
			 "M - (N - K)");
	/* The tree's shape is kept even where C would not care. */
	ck_assert_str_eq(expr_text(a, BIN(ADD, m, BIN(ADD, n, k))),
			 "M + (N + K)");
	ck_assert_str_eq(expr_text(a, BIN(DIV, m, BIN(MUL, n, k))),
			 "M / (N * K)");
	ck_assert_str_eq(expr_text(a, BIN(LOR, BIN(LAND, BIN(LT, m, n), k),
					  BIN(EQ, BIN(BAND, m, n), k))),
			 "M < N && K || (M & N) == K");
	ck_assert_str_eq(expr_text(a, BIN(SHL, BIN(ADD, m, n), k)),
			 "M + N << K");

	TcExpr *neg = tc_expr_unary(a, TC_UOP_NEG, m, noloc);
	ck_assert_str_eq(expr_text(a, neg), "-M");
	ck_assert_str_eq(expr_text(a, tc_expr_unary(a, TC_UOP_NEG, neg, noloc)),
			 "-(-M)");
	ck_assert_str_eq(expr_text(a, tc_expr_unary(a, TC_UOP_NEG,
						    tc_expr_int(a, -2, noloc),
						    noloc)),
			 "-(-2)");
	ck_assert_str_eq(expr_text(a, tc_expr_unary(a, TC_UOP_NOT,
						    BIN(LT, m, n), noloc)),
			 "!(M < N)");
	ck_assert_str_eq(expr_text(a, BIN(MUL, neg, n)), "-M * N");
	ck_assert_str_eq(expr_text(a, BIN(SUB, m, tc_expr_int(a, -1, noloc))),
			 "M - -1");

	TcExpr *cast = tc_expr_new(a, TC_EX_CAST, TC_DT_F32, noloc);
	cast->u.cast.arg = BIN(ADD, m, n);
	ck_assert_str_eq(expr_text(a, cast), "(f32)(M + N)");
	ck_assert_str_eq(expr_text(a, BIN(DIV, k, cast)), "K / (f32)(M + N)");

	TcExpr *sel = tc_expr_new(a, TC_EX_SELECT, TC_DT_I32, noloc);
	sel->u.sel.cond = BIN(LT, m, n);
	sel->u.sel.then = m;
	sel->u.sel.els = n;
	ck_assert_str_eq(expr_text(a, sel), "M < N ? M : N");
	ck_assert_str_eq(expr_text(a, BIN(ADD, sel, k)), "(M < N ? M : N) + K");
	TcExpr *chain = tc_expr_new(a, TC_EX_SELECT, TC_DT_I32, noloc);
	chain->u.sel.cond = k;
	chain->u.sel.then = m;
	chain->u.sel.els = sel;
	ck_assert_str_eq(expr_text(a, chain), "K ? M : M < N ? M : N");
	TcExpr *nested = tc_expr_new(a, TC_EX_SELECT, TC_DT_I32, noloc);
	nested->u.sel.cond = sel;
	nested->u.sel.then = sel;
	nested->u.sel.els = k;
	ck_assert_str_eq(expr_text(a, nested),
			 "(M < N ? M : N) ? (M < N ? M : N) : K");

	TcExpr *load = fx_load(&f, f.acc, BIN(ADD, m, n), k, noloc);
	ck_assert_str_eq(expr_text(a, load), "acc[M + N][K]");
	ck_assert_str_eq(expr_text(a, fx_call(&f, TC_FN_FMAXF, load,
					      tc_expr_float(a, 0.0, TC_DT_F32,
							    noloc), noloc)),
			 "fmaxf(acc[M + N][K], 0.0f)");
	ck_assert_str_eq(expr_text(a, NULL), "<null>");
#undef BIN
	fixture_free(&f);
}
END_TEST

START_TEST(float_literals_are_exact)
{
	TcArena *a = tc_arena_new();
#define FLT(v, t) expr_text(a, tc_expr_float(a, v, TC_DT_##t, noloc))
	ck_assert_str_eq(FLT(0.0, F32), "0.0f");
	ck_assert_str_eq(FLT(3.0, F32), "3.0f");
	ck_assert_str_eq(FLT(-2.0, F64), "-2.0");
	ck_assert_str_eq(FLT(1.5, F32), "1.5f");
	ck_assert_str_eq(FLT((double)0.1f, F32), "0.100000001f");
	ck_assert_str_eq(FLT(0.1, F64), "0.10000000000000001");
	ck_assert_str_eq(FLT((double)1.44269504f, F32), "1.44269502f");
	ck_assert_str_eq(FLT(1e30, F64), "1e+30");
	ck_assert_str_eq(FLT(1.0 / 3.0, F64), "0.33333333333333331");
	ck_assert_str_eq(FLT((double)1e-7f, F32), "1.00000001e-07f");
	ck_assert_str_eq(FLT(1e20, F32), "1e+20f");
	ck_assert_str_eq(FLT(INFINITY, F32), "inff");
	ck_assert_str_eq(FLT(-INFINITY, F32), "-inff");
	ck_assert_str_eq(FLT(INFINITY, F64), "inf");
	ck_assert_str_eq(FLT(NAN, F32), "nanf");
	ck_assert_str_eq(FLT(-0.0, F32), "-0.0f");
#undef FLT
	TcExpr *wide = tc_expr_int(a, -9000000000LL, noloc);
	wide->dtype = TC_DT_I64;
	ck_assert_str_eq(expr_text(a, wide), "-9000000000LL");
	ck_assert_str_eq(expr_text(a, tc_expr_int(a, 7, noloc)), "7");
	tc_arena_free(a);
}
END_TEST

/* The printed text of a kernel's body, between its braces. */
static const char *
body_text(Fixture *f)
{
	TcBuf b;
	tc_buf_init(&b);
	tc_print_kernel(&b, f->k);
	const char *s = strstr(b.data, "{\n");
	s = tc_strdup(f->a, s ? s + 2 : "");
	tc_buf_free(&b);
	return s;
}

START_TEST(statement_forms)
{
	Fixture f;
	fixture_init(&f);
	TcArena *a = f.a;
	TcStmt *body = fx_block(&f, fx_loc(18, 1));
	f.k->body = body;

	/* f32 s = 1.5; for n0 in 0 .. N step BLOCK_N { ... } */
	TcVar *s = tc_var_new(a, f.k, TC_VAR_LOCAL, "s", TC_DT_F32,
			      fx_loc(40, 8));
	fx_push(&f, body, fx_decl(&f, s, tc_expr_float(a, 1.5, TC_DT_F32,
						       noloc), fx_loc(40, 2)));
	TcVar *t = tc_var_new(a, f.k, TC_VAR_LOCAL, "t", TC_DT_I32,
			      fx_loc(41, 6));
	fx_push(&f, body, fx_decl(&f, t, NULL, fx_loc(41, 2)));
	fx_push(&f, body, fx_decl(&f, f.acc, NULL, fx_loc(42, 2)));
	TcVar *row = fx_buffer(&f, "row", TC_SCOPE_LOCAL, TC_DT_F32,
			       tc_expr_var(a, f.block_m, noloc), NULL,
			       fx_loc(43, 2));
	fx_push(&f, body, fx_decl(&f, row, NULL, fx_loc(43, 2)));
	TcVar *n0 = tc_var_new(a, f.k, TC_VAR_LOOP, "n0", TC_DT_I32,
			       fx_loc(44, 11));
	TcStmt *serial = fx_loop(&f, TC_LOOP_SERIAL, n0,
				 tc_expr_var(a, f.n, noloc), fx_loc(44, 2));
	serial->u.loop.step = tc_expr_var(a, f.block_n, noloc);
	fx_push(&f, body, serial);

	TcVar *i = tc_var_new(a, f.k, TC_VAR_LOOP, "i", TC_DT_I32,
			      fx_loc(45, 17));
	TcStmt *par = fx_loop(&f, TC_LOOP_PARALLEL, i,
			      tc_expr_var(a, f.block_m, noloc), fx_loc(45, 3));
	fx_push(&f, serial->u.loop.body, par);

	TcStmt *cond = tc_stmt_new(a, TC_ST_IF, fx_loc(46, 4));
	cond->u.cond.cond = tc_expr_binary(a, TC_OP_GE,
					   tc_expr_var(a, n0, noloc),
					   tc_expr_var(a, f.n, noloc), noloc);
	cond->u.cond.then = fx_block(&f, fx_loc(46, 20));
	cond->u.cond.els = fx_block(&f, fx_loc(48, 11));
	fx_push(&f, par->u.loop.body, cond);
	TcStmt *asg = tc_stmt_new(a, TC_ST_ASSIGN, fx_loc(47, 5));
	asg->u.assign.dst = fx_load(&f, row, tc_expr_var(a, i, noloc), NULL,
				    noloc);
	asg->u.assign.value = tc_expr_float(a, -INFINITY, TC_DT_F32, noloc);
	fx_push(&f, cond->u.cond.then, asg);
	TcStmt *asg2 = tc_stmt_new(a, TC_ST_ASSIGN, fx_loc(49, 5));
	asg2->u.assign.dst = tc_expr_var(a, s, noloc);
	asg2->u.assign.value = tc_expr_binary(a, TC_OP_MUL,
					      tc_expr_var(a, s, noloc),
					      tc_expr_float(a, 2.0, TC_DT_F32,
							    noloc), noloc);
	fx_push(&f, cond->u.cond.els, asg2);

	TcStmt *red = tc_stmt_new(a, TC_ST_REDUCE, fx_loc(52, 3));
	red->u.reduce.op = TC_RED_MAX;
	red->u.reduce.dst = fx_whole(&f, row);
	red->u.reduce.src = fx_whole(&f, f.acc);
	red->u.reduce.dim = 1;
	red->u.reduce.accumulate = true;
	fx_push(&f, serial->u.loop.body, red);

	TcStmt *g = tc_stmt_new(a, TC_ST_GEMM, fx_loc(53, 3));
	g->u.gemm.c = fx_whole(&f, f.acc);
	g->u.gemm.a = fx_whole(&f, f.acc);
	g->u.gemm.b = fx_whole(&f, f.acc);
	g->u.gemm.trans_a = true;
	g->u.gemm.trans_b = true;
	fx_push(&f, serial->u.loop.body, g);

	TcStmt *at = tc_stmt_new(a, TC_ST_ATOMIC_ADD, fx_loc(55, 2));
	at->u.copy.dst.var = f.tcv;
	at->u.copy.dst.ndims = 1;
	at->u.copy.dst.dims[0] = 1;
	at->u.copy.dst.origin[0] = tc_expr_var(a, f.bx, noloc);
	at->u.copy.dst.origin[1] = tc_expr_int(a, 0, noloc);
	at->u.copy.src = fx_whole(&f, row);
	fx_push(&f, body, at);
	TcStmt *nested = fx_block(&f, fx_loc(56, 2));
	fx_push(&f, body, nested);
	TcStmt *noloc_fill = tc_stmt_new(a, TC_ST_FILL, noloc);
	noloc_fill->u.fill.dst = fx_whole(&f, row);
	noloc_fill->u.fill.value = tc_expr_int(a, 0, noloc);
	fx_push(&f, nested, noloc_fill);

	ck_assert_str_eq(body_text(&f),
		"\tf32 s = 1.5f  // 40:2\n"
		"\ti32 t  // 41:2\n"
		"\tfragment f32 acc[BLOCK_M][BLOCK_N]  // 42:2\n"
		"\tlocal f32 row[BLOCK_M]  // 43:2\n"
		"\tfor n0 in 0 .. N step BLOCK_N {  // 44:2\n"
		"\t\tparallel i in 0 .. BLOCK_M {  // 45:3\n"
		"\t\t\tif n0 >= N {  // 46:4\n"
		"\t\t\t\trow[i] = -inff  // 47:5\n"
		"\t\t\t} else {\n"
		"\t\t\t\ts = s * 2.0f  // 49:5\n"
		"\t\t\t}\n"
		"\t\t}\n"
		"\t\treduce max row <- acc, dim 1, accumulate  // 52:3\n"
		"\t\tgemm acc += acc^T * acc^T  // 53:3\n"
		"\t}\n"
		"\tatomic_add C[bx, 0] dims (1) += row  // 55:2\n"
		"\t{  // 56:2\n"
		"\t\tfill row, 0\n"
		"\t}\n"
		"}\n");
	fixture_free(&f);
}
END_TEST

START_TEST(gpu_schedule)
{
	Fixture f;
	fixture_init(&f);
	f.k->smem_bytes = 49152;
	f.k->scratch_offset = 40960;
	f.as->stages = 3;
	f.as->pad = 8;
	f.as->smem_offset = 0;
	f.bs->smem_offset = 27648;
	f.acc->layout = (TcLayout){
		.kind = TC_LAYOUT_MMA,
		.dim = { { .id = 0, .kind = TC_LAYOUT_MMA, .axis = 0,
			   .extent = 128, .count = 8, .tiles = 4 },
			 { .id = 1, .kind = TC_LAYOUT_MMA, .axis = 1,
			   .extent = 128, .count = 16, .tiles = 8 } },
		.warps_m = 2,
		.warps_n = 2,
	};
	f.loop->u.loop.async_copies = 2;
	TcVar *i = tc_var_new(f.a, f.k, TC_VAR_LOOP, "i", TC_DT_I32,
			      fx_loc(34, 16));
	TcStmt *par = fx_loop(&f, TC_LOOP_PARALLEL, i,
			      tc_expr_var(f.a, f.block_m, noloc), fx_loc(34, 2));
	par->u.loop.anchor = f.acc;
	fx_push(&f, f.k->body, par);
	fx_push(&f, par->u.loop.body, tc_stmt_new(f.a, TC_ST_BARRIER,
						  fx_loc(35, 3)));
	TcBuf b;
	tc_buf_init(&b);
	tc_print_kernel(&b, f.k);
	const char *want[] = {
		"\tsmem 49152 bytes, reduction scratch at +40960\n{\n",
		"\tshared f16 As[BLOCK_M][BLOCK_K] (stages 3, pad 8, smem +0)"
		"  // 23:2\n",
		"\tshared f16 Bs[BLOCK_K][BLOCK_N] (smem +27648)  // 24:2\n",
		"\tfragment f32 acc[BLOCK_M][BLOCK_N] (layout mma [class 0 rows "
		"x8, 2x2 warps, 4 tiles] [class 1 cols x16, 2x2 warps, 8 tiles])"
		"  // 25:2\n",
		"stages STAGES, async copies 2 {  // 28:2\n",
		"\tparallel i in 0 .. BLOCK_M over acc dim 0 {  // 34:2\n"
		"\t\tbarrier  // 35:3\n\t}\n",
	};
	for (size_t w = 0; w < sizeof want / sizeof want[0]; w++)
		ck_assert_msg(strstr(b.data, want[w]), "wanted:\n%s\nin:\n%s",
			      want[w], b.data);
	tc_buf_free(&b);
	fixture_free(&f);
}
END_TEST

START_TEST(broken_ir_still_prints)
{
	Fixture f;
	fixture_init(&f);
	f.gemm->u.gemm.a.var = NULL;
	f.fill->u.fill.value = NULL;
	f.copy_b->kind = (TcStmtKind)77;
	TcBuf b;
	tc_buf_init(&b);
	tc_print_program(&b, f.p);
	ck_assert_ptr_nonnull(strstr(b.data, "gemm acc += <null> * Bs"));
	ck_assert_ptr_nonnull(strstr(b.data, "fill acc, <null>"));
	ck_assert_ptr_nonnull(strstr(b.data, "<stmt kind 77>  // 30:3"));
	tc_buf_free(&b);
	fixture_free(&f);
}
END_TEST

Suite *
unit_suite_print(void)
{
	Suite *s = suite_create("print");
	TCase *tc = tcase_create("print");
	tcase_add_test(tc, gemm_program);
	tcase_add_test(tc, bound_tunables_show_their_default);
	tcase_add_test(tc, minimal_parentheses);
	tcase_add_test(tc, float_literals_are_exact);
	tcase_add_test(tc, statement_forms);
	tcase_add_test(tc, gpu_schedule);
	tcase_add_test(tc, broken_ir_still_prints);
	suite_add_tcase(s, tc);
	return s;
}
