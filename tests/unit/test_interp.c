/*
 * test_interp.c - interp.c, the reference interpreter.
 *
 * Hand-built IR checks each statement's meaning from docs/ir.md on its
 * own: tile copies with ragged bounds (out-of-range elements read as zero
 * and are not written), gemm with each transpose, reductions with and
 * without accumulate, direct element accesses out of bounds reported with
 * their location.  The samples, parsed and checked, are run against plain C
 * references; samples/gemm.c at 256^3 must take well under a second.
 */
#include "unit.h"
#include "tilec_runtime.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- A small kernel builder ------------------------------------------------- */

typedef struct Kb {
	TcArena *a;     /* owns the IR */
	TcProgram *p;   /* one kernel */
	TcKernel *k;
	TcStmt *body;   /* k->body */
} Kb;

static TcLoc
loc(int line, int col)
{
	return (TcLoc){ "t.c", line, col };
}

static void
kb_init(Kb *b)
{
	memset(b, 0, sizeof *b);
	b->a = tc_arena_new();
	b->p = tc_alloc(b->a, sizeof *b->p);
	b->p->path = "t.c";
	b->p->text = "";
	b->k = tc_alloc(b->a, sizeof *b->k);
	b->k->name = "k";
	b->k->loc = loc(1, 1);
	tc_vec_push(b->a, &b->p->kernels, b->k);
	b->body = tc_stmt_new(b->a, TC_ST_BLOCK, loc(1, 1));
	b->k->body = b->body;
}

static TcExpr *
I(Kb *b, long long v)
{
	return tc_expr_int(b->a, v, loc(2, 1));
}

static TcExpr *
V(Kb *b, TcVar *v)
{
	return tc_expr_var(b->a, v, loc(2, 1));
}

static TcVar *
scalar(Kb *b, const char *name)
{
	TcVar *v = tc_var_new(b->a, b->k, TC_VAR_SCALAR, name, TC_DT_I32,
			      loc(1, 10));
	v->param = b->k->params.len;
	tc_vec_push(b->a, &b->k->params, v);
	return v;
}

static TcVar *
tensor(Kb *b, const char *name, TcDtype t, TcExpr *d0, TcExpr *d1)
{
	TcVar *v = tc_var_new(b->a, b->k, TC_VAR_TENSOR, name, t, loc(1, 20));
	v->param = b->k->params.len;
	v->rank = d1 ? 2 : 1;
	v->shape[0] = d0;
	v->shape[1] = d1;
	tc_vec_push(b->a, &b->k->params, v);
	return v;
}

/* A buffer and its DECL, appended to the body. */
static TcVar *
buffer(Kb *b, const char *name, TcDtype t, long long d0, long long d1)
{
	TcVar *v = tc_var_new(b->a, b->k, TC_VAR_BUFFER, name, t, loc(3, 2));
	v->scope = TC_SCOPE_FRAGMENT;
	v->rank = d1 ? 2 : 1;
	v->shape[0] = I(b, d0);
	v->shape[1] = d1 ? I(b, d1) : NULL;
	TcStmt *s = tc_stmt_new(b->a, TC_ST_DECL, loc(3, 2));
	s->u.decl.var = v;
	tc_vec_push(b->a, &b->body->u.block.body, s);
	return v;
}

static TcRegion
whole(Kb *b, TcVar *v)
{
	TcRegion r;
	memset(&r, 0, sizeof r);
	r.var = v;
	r.whole = true;
	r.ndims = v->rank;
	for (int i = 0; i < v->rank; i++) {
		r.dims[i] = i;
		r.origin[i] = I(b, 0);
	}
	r.loc = v->loc;
	return r;
}

/* The region of a rank-2 var at (o0, o1) spanning both dims. */
static TcRegion
at(TcVar *v, TcExpr *o0, TcExpr *o1)
{
	TcRegion r;
	memset(&r, 0, sizeof r);
	r.var = v;
	r.origin[0] = o0;
	r.origin[1] = o1;
	r.ndims = 2;
	r.dims[0] = 0;
	r.dims[1] = 1;
	r.loc = loc(4, 7);
	return r;
}

static TcStmt *
push(Kb *b, TcStmtKind kind, int line)
{
	TcStmt *s = tc_stmt_new(b->a, kind, loc(line, 3));
	tc_vec_push(b->a, &b->body->u.block.body, s);
	return s;
}

static void
copy(Kb *b, TcRegion dst, TcRegion src)
{
	TcStmt *s = push(b, TC_ST_COPY, 5);
	s->u.copy.dst = dst;
	s->u.copy.src = src;
}

/* Run b's kernel with int scalars and tensors, in parameter order. */
static bool
run(Kb *b, void **args, TcDiags *d)
{
	tc_diags_init(d, "t.c", NULL, 0);
	return tc_interp_run(b->k, args, false, NULL, d);
}

/* --- Copies ------------------------------------------------------------------- */

START_TEST(copy_ragged_reads_zero_and_skips_writes)
{
	/* A[5][7] -> x[4][4] from (3, 4): rows 3..4 and cols 4..6 exist.
	 * Then x -> C[5][7] at (3, 5): only rows 3..4, cols 5..6 written. */
	Kb b;
	kb_init(&b);
	TcVar *m = scalar(&b, "M"), *n = scalar(&b, "N");
	TcVar *A = tensor(&b, "A", TC_DT_F32, V(&b, m), V(&b, n));
	TcVar *C = tensor(&b, "C", TC_DT_F32, V(&b, m), V(&b, n));
	A->is_const = true;
	TcVar *x = buffer(&b, "x", TC_DT_F32, 4, 4);
	copy(&b, whole(&b, x), at(A, I(&b, 3), I(&b, 4)));
	copy(&b, at(C, I(&b, 3), I(&b, 5)), whole(&b, x));

	int32_t M = 5, N = 7;
	float a[35], c[35];
	for (int i = 0; i < 35; i++) {
		a[i] = (float)(i + 1);
		c[i] = -1;
	}
	void *pa = a, *pc = c;
	void *args[] = { &M, &N, &pa, &pc };
	TcDiags d;
	ck_assert(run(&b, args, &d));
	for (int i = 0; i < 5; i++) {
		for (int j = 0; j < 7; j++) {
			float want = -1;
			/* C[i][j] = x[i-3][j-5] = A[i][j-1] if in range. */
			if (i >= 3 && j >= 5) {
				int ai = i, aj = j - 5 + 4;
				want = aj < 7 ? a[ai * 7 + aj] : 0.0f;
			}
			ck_assert_msg(c[i * 7 + j] == want, "C[%d][%d] = %g, want %g",
				      i, j, c[i * 7 + j], want);
		}
	}
	tc_diags_free(&d);
	tc_arena_free(b.a);
}
END_TEST

START_TEST(copy_converts_and_rounds_to_the_stored_dtype)
{
	/* f32 -> f16 tensor: round to nearest even; f32 -> i32: truncate. */
	Kb b;
	kb_init(&b);
	TcVar *A = tensor(&b, "A", TC_DT_F32, I(&b, 1), I(&b, 4));
	TcVar *H = tensor(&b, "H", TC_DT_F16, I(&b, 1), I(&b, 4));
	TcVar *Q = tensor(&b, "Q", TC_DT_I32, I(&b, 1), I(&b, 4));
	TcVar *x = buffer(&b, "x", TC_DT_F32, 1, 4);
	copy(&b, whole(&b, x), at(A, I(&b, 0), I(&b, 0)));
	copy(&b, at(H, I(&b, 0), I(&b, 0)), whole(&b, x));
	copy(&b, at(Q, I(&b, 0), I(&b, 0)), whole(&b, x));
	/* 1 + 2^-11 is halfway between f16 1 and 1 + 2^-10: even is 1. */
	float a[4] = { 1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, -2.75f, 65520.0f };
	uint16_t h[4];
	int32_t q[4];
	void *pa = a, *ph = h, *pq = q;
	void *args[] = { &pa, &ph, &pq };
	TcDiags d;
	ck_assert(run(&b, args, &d));
	ck_assert_uint_eq(h[0], 0x3c00);
	ck_assert_uint_eq(h[1], 0x3c02);
	ck_assert_uint_eq(h[2], 0xc180);
	ck_assert_uint_eq(h[3], 0x7c00); /* rounds past 65504: infinity */
	ck_assert_int_eq(q[0], 1);
	ck_assert_int_eq(q[2], -2);
	tc_diags_free(&d);
	tc_arena_free(b.a);
}
END_TEST

/* --- Gemm ----------------------------------------------------------------------- */

/* c[M][N] = op(a) * op(b) through buffers loaded from tensors. */
static void
gemm_case(bool ta, bool tb)
{
	enum { M = 5, N = 3, K = 4 };
	Kb b;
	kb_init(&b);
	TcVar *A = tensor(&b, "A", TC_DT_F32, I(&b, ta ? K : M), I(&b, ta ? M : K));
	TcVar *B = tensor(&b, "B", TC_DT_F32, I(&b, tb ? N : K), I(&b, tb ? K : N));
	TcVar *C = tensor(&b, "C", TC_DT_F32, I(&b, M), I(&b, N));
	TcVar *as = buffer(&b, "as", TC_DT_F32, ta ? K : M, ta ? M : K);
	TcVar *bs = buffer(&b, "bs", TC_DT_F32, tb ? N : K, tb ? K : N);
	TcVar *acc = buffer(&b, "acc", TC_DT_F32, M, N);
	copy(&b, whole(&b, as), at(A, I(&b, 0), I(&b, 0)));
	copy(&b, whole(&b, bs), at(B, I(&b, 0), I(&b, 0)));
	TcStmt *f = push(&b, TC_ST_FILL, 6);
	f->u.fill.dst = whole(&b, acc);
	f->u.fill.value = tc_expr_float(b.a, 0.5, TC_DT_F32, loc(6, 9));
	TcStmt *g = push(&b, TC_ST_GEMM, 7);
	g->u.gemm.c = whole(&b, acc);
	g->u.gemm.a = whole(&b, as);
	g->u.gemm.b = whole(&b, bs);
	g->u.gemm.trans_a = ta;
	g->u.gemm.trans_b = tb;
	copy(&b, at(C, I(&b, 0), I(&b, 0)), whole(&b, acc));

	float a[M * K], bb[K * N], c[M * N];
	for (int i = 0; i < M * K; i++)
		a[i] = (float)(i % 7) - 3;
	for (int i = 0; i < K * N; i++)
		bb[i] = (float)(i % 5) * 0.5f - 1;
	void *pa = a, *pb = bb, *pc = c;
	void *args[] = { &pa, &pb, &pc };
	TcDiags d;
	TcInterpStats st;
	tc_diags_init(&d, "t.c", NULL, 0);
	ck_assert(tc_interp_run(b.k, args, false, &st, &d));
	ck_assert(st.gemm_flops == 2.0 * M * N * K);
	for (int m = 0; m < M; m++) {
		for (int n = 0; n < N; n++) {
			double want = 0.5;
			for (int k = 0; k < K; k++)
				want += (double)(ta ? a[k * M + m] : a[m * K + k]) *
					(tb ? bb[n * K + k] : bb[k * N + n]);
			ck_assert_msg(c[m * N + n] == (float)want,
				      "trans %d%d: C[%d][%d] = %g, want %g", ta,
				      tb, m, n, c[m * N + n], want);
		}
	}
	tc_diags_free(&d);
	tc_arena_free(b.a);
}

START_TEST(gemm_with_each_transpose)
{
	gemm_case(false, false);
	gemm_case(true, false);
	gemm_case(false, true);
	gemm_case(true, true);
}
END_TEST

START_TEST(gemm_rounds_a_to_b_type)
{
	/* gemm.round_a (reg_operands.c): A is f32, each element rounded to
	 * B's f16 as it is read.  1 + 2^-12 rounds to 1 in f16, so the
	 * product is B's sum; unrounded it would not be. */
	enum { M = 2, N = 2, K = 3 };
	Kb b;
	kb_init(&b);
	TcVar *A = tensor(&b, "A", TC_DT_F32, I(&b, M), I(&b, K));
	TcVar *B = tensor(&b, "B", TC_DT_F16, I(&b, K), I(&b, N));
	TcVar *C = tensor(&b, "C", TC_DT_F32, I(&b, M), I(&b, N));
	TcVar *as = buffer(&b, "as", TC_DT_F32, M, K);
	TcVar *bs = buffer(&b, "bs", TC_DT_F16, K, N);
	TcVar *acc = buffer(&b, "acc", TC_DT_F32, M, N);
	copy(&b, whole(&b, as), at(A, I(&b, 0), I(&b, 0)));
	copy(&b, whole(&b, bs), at(B, I(&b, 0), I(&b, 0)));
	TcStmt *f = push(&b, TC_ST_FILL, 6);
	f->u.fill.dst = whole(&b, acc);
	f->u.fill.value = tc_expr_float(b.a, 0.0, TC_DT_F32, loc(6, 9));
	TcStmt *g = push(&b, TC_ST_GEMM, 7);
	g->u.gemm.c = whole(&b, acc);
	g->u.gemm.a = whole(&b, as);
	g->u.gemm.b = whole(&b, bs);
	copy(&b, at(C, I(&b, 0), I(&b, 0)), whole(&b, acc));
	float a[M * K], c[M * N];
	uint16_t bb[K * N];
	for (int i = 0; i < M * K; i++)
		a[i] = 1.0f + 1.0f / 4096;
	for (int i = 0; i < K * N; i++)
		bb[i] = 0x4000; /* 2.0 */
	void *pa = a, *pb = bb, *pc = c;
	void *args[] = { &pa, &pb, &pc };
	for (int round = 0; round < 2; round++) {
		g->u.gemm.round_a = round;
		TcDiags d;
		tc_diags_init(&d, "t.c", NULL, 0);
		ck_assert(tc_interp_run(b.k, args, false, NULL, &d));
		double want = round ? 3 * 2.0 : (float)(3 * 2.0 * (1.0 + 1.0 / 4096));
		for (int i = 0; i < M * N; i++)
			ck_assert_msg(c[i] == want, "round_a %d: C = %.9g, want %.9g",
				      round, c[i], want);
		tc_diags_free(&d);
	}
	tc_arena_free(b.a);
}
END_TEST

START_TEST(gemm_fixture_ragged_f16)
{
	/* samples/gemm.c as built by the fixture, with M, N, K not
	 * multiples of the 128 x 128 x 32 tiles. */
	Fixture f;
	fixture_init(&f);
	int32_t M = 100, N = 130, K = 70;
	uint16_t *A = malloc(sizeof *A * M * K), *B = malloc(sizeof *B * K * N);
	uint16_t *C = malloc(sizeof *C * M * N);
	for (int i = 0; i < M * K; i++)
		A[i] = tilec_f16_from_double((i % 13) / 8.0 - 0.75);
	for (int i = 0; i < K * N; i++)
		B[i] = tilec_f16_from_double((i % 11) / 4.0 - 1.25);
	for (int i = 0; i < M * N; i++)
		C[i] = 0x7eab;
	void *pa = A, *pb = B, *pc = C;
	void *args[] = { &M, &N, &K, &pa, &pb, &pc };
	TcDiags d;
	tc_diags_init(&d, "gemm.c", NULL, 0);
	TcInterpStats st;
	ck_assert_msg(tc_interp_run(f.k, args, false, &st, &d), "%s",
		      d.text.data ? d.text.data : "");
	ck_assert_int_eq(st.blocks, 2); /* 2 x 1 blocks of 128 x 128 */
	for (int m = 0; m < M; m++) {
		for (int n = 0; n < N; n++) {
			double want = 0;
			for (int k = 0; k < K; k++)
				want += tilec_f16_to_double(A[m * K + k]) *
					tilec_f16_to_double(B[k * N + n]);
			ck_assert_uint_eq(C[m * N + n], tilec_f16_from_double(want));
		}
	}
	free(A);
	free(B);
	free(C);
	tc_diags_free(&d);
	fixture_free(&f);
}
END_TEST

/* --- Reductions ------------------------------------------------------------------ */

static void
reduce_case(TcReduceOp op, int dim, bool accumulate)
{
	enum { R = 3, S = 4 };
	Kb b;
	kb_init(&b);
	TcVar *A = tensor(&b, "A", TC_DT_F32, I(&b, R), I(&b, S));
	TcVar *Y = tensor(&b, "Y", TC_DT_F32, I(&b, dim ? R : S), NULL);
	TcVar *x = buffer(&b, "x", TC_DT_F32, R, S);
	int len = dim ? R : S;
	TcVar *y = buffer(&b, "y", TC_DT_F32, len, 0);
	copy(&b, whole(&b, x), at(A, I(&b, 0), I(&b, 0)));
	TcStmt *f = push(&b, TC_ST_FILL, 6);
	f->u.fill.dst = whole(&b, y);
	f->u.fill.value = tc_expr_float(b.a, -10.0, TC_DT_F32, loc(6, 9));
	TcStmt *s = push(&b, TC_ST_REDUCE, 7);
	s->u.reduce.op = op;
	s->u.reduce.dst = whole(&b, y);
	s->u.reduce.src = whole(&b, x);
	s->u.reduce.dim = dim;
	s->u.reduce.accumulate = accumulate;
	TcRegion out = whole(&b, y);
	out.var = Y;
	out.whole = false;
	copy(&b, out, whole(&b, y));

	float a[R * S] = { 1, -7, 3, 2, -4, 5, 0.5f, 6, 2, -2, 8, -9 };
	float yv[R > S ? R : S];
	void *pa = a, *py = yv;
	void *args[] = { &pa, &py };
	TcDiags d;
	ck_assert(run(&b, args, &d));
	for (int o = 0; o < len; o++) {
		double acc = accumulate ? -10.0 : 0;
		if (!accumulate && op == TC_RED_MAX)
			acc = -INFINITY;
		if (!accumulate && op == TC_RED_MIN)
			acc = INFINITY;
		if (op == TC_RED_ABSMAX)
			acc = fabs(acc);
		for (int j = 0; j < (dim ? S : R); j++) {
			double v = dim ? a[o * S + j] : a[j * S + o];
			switch (op) {
			case TC_RED_SUM: acc += v; break;
			case TC_RED_MAX: acc = fmax(acc, v); break;
			case TC_RED_MIN: acc = fmin(acc, v); break;
			default: acc = fmax(acc, fabs(v)); break;
			}
		}
		ck_assert_msg(yv[o] == (float)acc, "%s dim %d acc %d: y[%d] = %g, "
			      "want %g", tc_reduce_name(op), dim, accumulate, o,
			      yv[o], acc);
	}
	tc_diags_free(&d);
	tc_arena_free(b.a);
}

START_TEST(reduce_each_op_dim_and_accumulate)
{
	for (int op = 0; op < TC_RED_COUNT; op++)
		for (int dim = 0; dim < 2; dim++)
			for (int acc = 0; acc < 2; acc++)
				reduce_case((TcReduceOp)op, dim, acc);
}
END_TEST

/* --- Direct element accesses --------------------------------------------------------- */

START_TEST(out_of_bounds_element_is_a_located_error)
{
	/* tile_parallel(i, 131) C[i][0] = A[i][0]; with A, C [128][1]. */
	Kb b;
	kb_init(&b);
	TcVar *A = tensor(&b, "A", TC_DT_F32, I(&b, 128), I(&b, 1));
	TcVar *C = tensor(&b, "C", TC_DT_F32, I(&b, 128), I(&b, 1));
	TcVar *i = tc_var_new(b.a, b.k, TC_VAR_LOOP, "i", TC_DT_I32, loc(8, 16));
	TcStmt *l = push(&b, TC_ST_FOR, 8);
	l->u.loop.kind = TC_LOOP_PARALLEL;
	l->u.loop.var = i;
	l->u.loop.begin = I(&b, 0);
	l->u.loop.end = I(&b, 131);
	l->u.loop.step = I(&b, 1);
	l->u.loop.body = tc_stmt_new(b.a, TC_ST_BLOCK, loc(8, 2));
	TcStmt *s = tc_stmt_new(b.a, TC_ST_ASSIGN, loc(9, 3));
	TcExpr *src = tc_expr_new(b.a, TC_EX_LOAD, TC_DT_F32, loc(9, 13));
	src->u.load.var = A;
	src->u.load.idx[0] = tc_expr_binary(b.a, TC_OP_ADD, V(&b, i), I(&b, 2),
					    loc(9, 15));
	src->u.load.idx[1] = I(&b, 0);
	TcExpr *dst = tc_expr_new(b.a, TC_EX_LOAD, TC_DT_F32, loc(9, 3));
	dst->u.load.var = C;
	dst->u.load.idx[0] = V(&b, i);
	dst->u.load.idx[1] = I(&b, 0);
	s->u.assign.dst = dst;
	s->u.assign.value = src;
	tc_vec_push(b.a, &l->u.loop.body->u.block.body, s);

	float a[128], c[128];
	for (int j = 0; j < 128; j++)
		a[j] = (float)j, c[j] = -1;
	void *pa = a, *pc = c;
	void *args[] = { &pa, &pc };
	TcDiags d;
	ck_assert(!run(&b, args, &d));
	ck_assert_int_eq(d.errors, 1);
	ck_assert_str_eq(d.text.data, "t.c:9:13: error: index 128 out of "
				      "bounds for dim 0 of A (extent 128)\n");
	/* Everything before the bad access ran; nothing after. */
	ck_assert(c[125] == 127 && c[126] == -1);
	tc_diags_free(&d);
	tc_arena_free(b.a);
}
END_TEST

/* --- Element formats ----------------------------------------------------------------- */

START_TEST(element_formats_round_trip)
{
	uint8_t raw[16] = { 0 };
	tc_elem_store(TC_DT_I4, raw, 0, -3);
	tc_elem_store(TC_DT_I4, raw, 1, 7);
	tc_elem_store(TC_DT_I4, raw, 2, 9); /* wraps to -7 */
	ck_assert_uint_eq(raw[0], 0x7d);
	ck_assert(tc_elem_load(TC_DT_I4, raw, 0) == -3);
	ck_assert(tc_elem_load(TC_DT_I4, raw, 1) == 7);
	ck_assert(tc_elem_load(TC_DT_I4, raw, 2) == -7);
	tc_elem_store(TC_DT_I8, raw, 0, -129.7); /* truncates, then wraps */
	ck_assert(tc_elem_load(TC_DT_I8, raw, 0) == 127);
	tc_elem_store(TC_DT_BF16, raw, 0, 1.0 + 0x1p-8); /* tie: to even */
	ck_assert(tc_elem_load(TC_DT_BF16, raw, 0) == 1.0);
	tc_elem_store(TC_DT_FP8E4M3, raw, 0, 448);
	ck_assert(tc_elem_load(TC_DT_FP8E4M3, raw, 0) == 448);
	tc_elem_store(TC_DT_FP8E4M3, raw, 0, 480); /* past the largest */
	ck_assert(isnan(tc_elem_load(TC_DT_FP8E4M3, raw, 0)));
	tc_elem_store(TC_DT_FP8E5M2, raw, 0, 0x1p-16); /* smallest subnormal */
	ck_assert(tc_elem_load(TC_DT_FP8E5M2, raw, 0) == 0x1p-16);
	tc_elem_store(TC_DT_F16, raw, 0, 0x1p-25); /* tie with zero: even */
	ck_assert(tc_elem_load(TC_DT_F16, raw, 0) == 0);
	tc_elem_store(TC_DT_F16, raw, 0, 0x1.8p-25);
	ck_assert(tc_elem_load(TC_DT_F16, raw, 0) == 0x1p-24);
	/* Overflow, up to the top of the double range. */
	ck_assert_uint_eq(tilec_f16_from_double(65520.0), 0x7c00);
	ck_assert_uint_eq(tilec_f16_from_double(-0x1.fffp+1023), 0xfc00);
	ck_assert_uint_eq(tilec_bf16_from_double(0x1.ff4bfd9c87041p+1023), 0x7f80);
	ck_assert_uint_eq(tilec_fp8e4m3_from_double(1e300), 0x7f);
	ck_assert_uint_eq(tilec_fp8e5m2_from_double(-1e300), 0xfc);
	ck_assert_uint_eq(tilec_fp8e5m2_from_double(57344.0), 0x7b); /* largest */
	ck_assert_uint_eq(tc_elem_bytes(TC_DT_I4, 5), 3);
	ck_assert_uint_eq(tc_elem_bytes(TC_DT_BF16, 5), 10);

	/* Every f16 and bf16 bit pattern survives decode + encode. */
	for (uint32_t h = 0; h < 65536; h++) {
		double v = tilec_f16_to_double((uint16_t)h);
		if (!isnan(v))
			ck_assert_uint_eq(tilec_f16_from_double(v), h);
		v = tilec_bf16_to_double((uint16_t)h);
		if (!isnan(v))
			ck_assert_uint_eq(tilec_bf16_from_double(v), h);
	}
	for (uint32_t h = 0; h < 256; h++) {
		double v = tilec_fp8e4m3_to_double((uint8_t)h);
		if (!isnan(v))
			ck_assert_uint_eq(tilec_fp8e4m3_from_double(v), h);
		v = tilec_fp8e5m2_to_double((uint8_t)h);
		if (!isnan(v))
			ck_assert_uint_eq(tilec_fp8e5m2_from_double(v), h);
	}
}
END_TEST

/* --- Integer semantics ------------------------------------------------------------ */
/*
 * docs/language.md, "Integer arithmetic": C's, exactly, for every integer
 * dtype (the interpreter once held integers in double and multiplied
 * operands of opposite signs as unsigned: -2 * 3 gave -1024 in i32), and
 * what C leaves undefined is a located error.
 */

/* A kernel from tile-program text, parsed, specialized and checked. */
static TcKernel *
load_text(TcArena *a, const char *text, TcDiags *d)
{
	TcOptions opt;
	ck_assert(tc_options_init(&opt, "openmp", NULL));
	tc_diags_init(d, "t.c", text, strlen(text));
	TcProgram *p = tc_parse(a, "t.c", text, &opt, d);
	ck_assert_msg(p, "%s", d->text.data);
	ck_assert_msg(tc_specialize(a, p, &opt, d), "%s", d->text.data);
	ck_assert_msg(tc_check(a, p, &opt, d), "%s", d->text.data);
	return p->kernels.items[0];
}

static const char int_ops[] =
	"#include <tilec.h>\n"
	"TILE_KERNEL void\n"
	"k(long long a, long long b, int x, int y, i64 Y[9], i32 Z[11])\n"
	"{\n"
	"\tY[0] = a * b;\n"
	"\tY[1] = a / b;\n"
	"\tY[2] = a % b;\n"
	"\tY[3] = a >> 3;\n"
	"\tY[4] = a ^ b;\n"
	"\tY[5] = (a & 1023) << 2;\n"
	"\tY[6] = a > b + 1;\n"
	"\tY[7] = ~a;\n"
	"\tY[8] = a + 1;\n"
	"\ti8 c = x;\n"
	"\tu8 u = y;\n"
	"\tbool t = x;\n"
	"\tZ[0] = c;\n"
	"\tZ[1] = u;\n"
	"\tZ[2] = t;\n"
	"\tZ[3] = (int)a;\n"
	"\tZ[4] = y / 2;\n"
	"\tZ[5] = y % 2;\n"
	"\tZ[6] = y >> 1;\n"
	"\tZ[7] = u + u;\n"
	"\tZ[8] = (long long)y < x;\n"
	"\tZ[9] = x * y;\n"
	"\tZ[10] = -x;\n"
	"}\n";

/* int_ops on (a, b, x, y), each result against the same C expression. */
static void
int_ops_case(long long a, long long b, int x, int y)
{
	TcArena *ar = tc_arena_new();
	TcDiags d;
	TcKernel *k = load_text(ar, int_ops, &d);
	int64_t Y[9];
	int32_t Z[11];
	void *pY = Y, *pZ = Z;
	void *args[] = { &a, &b, &x, &y, &pY, &pZ };
	ck_assert_msg(tc_interp_run(k, args, false, NULL, &d), "%s",
		      d.text.data);
	int64_t wantY[9] = { a * b, a / b, a % b, a >> 3, a ^ b,
			     (a & 1023) << 2, a > b + 1, ~a, a + 1 };
	signed char c = (signed char)x;
	unsigned char u = (unsigned char)y;
	_Bool t = x;
	int32_t wantZ[11] = { c, u, t, (int)a, y / 2, y % 2, y >> 1, u + u,
			      (long long)y < x, x * y, -x };
	for (int i = 0; i < 9; i++)
		ck_assert_msg(Y[i] == wantY[i], "Y[%d] = %lld, want %lld "
			      "(a=%lld b=%lld)", i, (long long)Y[i],
			      (long long)wantY[i], a, b);
	for (int i = 0; i < 11; i++)
		ck_assert_msg(Z[i] == wantZ[i], "Z[%d] = %d, want %d (x=%d "
			      "y=%d)", i, Z[i], wantZ[i], x, y);
	tc_diags_free(&d);
	tc_arena_free(ar);
}

START_TEST(integers_are_exact_as_in_c)
{
	/* Opposite signs; i64 values past 2^53, where a double is not
	 * exact; truncating division and remainder of negatives;
	 * conversions to i8, u8 and bool that wrap. */
	int_ops_case(-2, 3, -2, 3);
	int_ops_case((1ll << 60) + 1, -3, 300, -1);
	int_ops_case(-(1ll << 55) - 7, 101, -129, -7);
	int_ops_case(9007199254740993ll, 2, 255, 46341);
	int_ops_case(-9007199254740993ll, 1023, 5, -46340);
}
END_TEST

/* The first error running `body` (with x, y ints, a a long long and
 * Z an i32 tensor in scope) on the given values. */
static void
int_error_case(const char *body, long long a, int x, int y, const char *want)
{
	char text[1024];
	snprintf(text, sizeof text,
		 "#include <tilec.h>\n"
		 "TILE_KERNEL void\n"
		 "k(long long a, int x, int y, const f32 F[1], i32 Z[1])\n"
		 "{\n"
		 "\t%s\n"
		 "}\n", body);
	TcArena *ar = tc_arena_new();
	TcDiags d;
	TcKernel *k = load_text(ar, text, &d);
	float f = 3e9f;
	int32_t z = 0;
	void *pf = &f, *pz = &z;
	void *args[] = { &a, &x, &y, &pf, &pz };
	d.to_stderr = false;
	ck_assert_msg(!tc_interp_run(k, args, false, NULL, &d), "%s ran", body);
	ck_assert_msg(strstr(d.text.data, want), "%s: got %s, want %s", body,
		      d.text.data, want);
	ck_assert_msg(strncmp(d.text.data, "t.c:5:", 6) == 0, "not located: %s",
		      d.text.data);
	tc_diags_free(&d);
	tc_arena_free(ar);
}

START_TEST(undefined_integer_operations_are_errors)
{
	int_error_case("Z[0] = x + y;", 0, 2147483647, 1,
		       "signed overflow: 2147483647 + 1 does not fit in i32");
	int_error_case("Z[0] = x * y;", 0, 65536, -32769,
		       "signed overflow: 65536 * -32769 does not fit in i32");
	int_error_case("Z[0] = x - y;", 0, -2147483647 - 1, 1,
		       "signed overflow");
	int_error_case("Z[0] = x / y;", 0, -2147483647 - 1, -1,
		       "signed overflow");
	int_error_case("Z[0] = x % y;", 0, 1, 0, "integer division by zero");
	int_error_case("Z[0] = -x;", 0, -2147483647 - 1, 0, "signed overflow");
	int_error_case("Z[0] = x << y;", 0, 1, 32,
		       "shift count 32 is out of range for i32");
	int_error_case("Z[0] = x >> y;", 0, 1, -1,
		       "shift count -1 is out of range for i32");
	int_error_case("Z[0] = x << y;", 0, -1, 1,
		       "left shift of the negative value -1");
	int_error_case("Z[0] = x << y;", 0, 3, 30, "signed overflow");
	int_error_case("Z[0] = a * a > 0;", 1ll << 32, 0, 0,
		       "does not fit in i64");
	int_error_case("Z[0] = F[0];", 0, 0, 0,
		       "3e+09 converted to i32 does not fit");
}
END_TEST

/* --- Float conversions ------------------------------------------------------------- */

/*
 * An integer converted to a float type rounds once, from the exact value,
 * as C converts it (tests/run/f32_rounding.c checks f32 against the
 * backends): 2^24 + 2^16 + 1 lies past the midpoint of bf16's neighbours
 * 2^24 and 2^24 + 2^17, but through f32 it would round to that midpoint
 * first and then to even, 2^24; 2^60 + 2^52 + 1 likewise through a
 * double.
 */
START_TEST(int_to_narrow_float_rounds_once)
{
	static const char text[] =
		"#include <tilec.h>\n"
		"TILE_KERNEL void\n"
		"k(int a, long long b, bf16 Y[2], f32 Z[1])\n"
		"{\n"
		"\tY[0] = a;\n"
		"\tY[1] = b;\n"
		"\tZ[0] = b;\n"
		"}\n";
	TcArena *ar = tc_arena_new();
	TcDiags d;
	TcKernel *k = load_text(ar, text, &d);
	int32_t a = (1 << 24) + (1 << 16) + 1;
	long long b = (1ll << 60) + (1ll << 52) + 1;
	uint16_t Y[2];
	float Z[1];
	void *pY = Y, *pZ = Z;
	void *args[] = { &a, &b, &pY, &pZ };
	ck_assert_msg(tc_interp_run(k, args, false, NULL, &d), "%s",
		      d.text.data);
	ck_assert_uint_eq(Y[0], tilec_bf16_from_double(0x1p24 + 0x1p17));
	ck_assert_uint_eq(Y[1], tilec_bf16_from_double(0x1p60 + 0x1p53));
	ck_assert(Z[0] == (float)b);
	tc_diags_free(&d);
	tc_arena_free(ar);
}
END_TEST

/* --- The samples ------------------------------------------------------------------ */

/* Parse, specialize and check samples/NAME.c; NULL (test failed) if not. */
static TcKernel *
load_sample(TcArena *a, const char *name, const TcOptions *opt, TcDiags *d)
{
	const char *root = getenv("TILEC_SOURCE_ROOT");
	char path[4096];
	snprintf(path, sizeof path, "%s/samples/%s.c", root ? root : ".", name);
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f, "cannot read %s (set TILEC_SOURCE_ROOT)", path);
	static char text[65536];
	size_t len = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	text[len] = '\0';
	const char *path_copy = tc_strdup(a, path);
	tc_diags_init(d, path_copy, text, len);
	TcProgram *p = tc_parse(a, path_copy, text, opt, d);
	ck_assert_msg(p, "cannot parse %s (set TILEC_SOURCE_ROOT)", path);
	ck_assert(tc_specialize(a, p, opt, d));
	ck_assert(tc_check(a, p, opt, d));
	ck_assert_int_eq(p->kernels.len, 1);
	return p->kernels.items[0];
}

static void
fill_f16(uint16_t *x, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		x[i] = tilec_f16_from_double(((seed >> 8) % 2001) / 1000.0 - 1.0);
	}
}

/* The sample's gemm at 256^3 on the reference, exact; its speed is not
 * asserted (a loaded machine is slow at any bound). */
START_TEST(sample_gemm_256_is_exact)
{
	TcOptions opt;
	ck_assert(tc_options_init(&opt, "openmp", NULL));
	TcArena *a = tc_arena_new();
	TcDiags d;
	TcKernel *k = load_sample(a, "gemm", &opt, &d);
	int32_t M = 256, N = 256, K = 256;
	uint16_t *A = malloc(2 * M * K), *B = malloc(2 * K * N), *C = malloc(2 * M * N);
	fill_f16(A, (size_t)M * K, 1);
	fill_f16(B, (size_t)K * N, 2);
	void *pa = A, *pb = B, *pc = C;
	void *args[] = { &M, &N, &K, &pa, &pb, &pc };
	ck_assert(tc_interp_run(k, args, false, NULL, &d));
	for (int m = 0; m < M; m += 37) {
		for (int n = 0; n < N; n += 11) {
			double want = 0;
			for (int kk = 0; kk < K; kk++)
				want += tilec_f16_to_double(A[m * K + kk]) *
					tilec_f16_to_double(B[kk * N + n]);
			ck_assert_uint_eq(C[m * N + n], tilec_f16_from_double(want));
		}
	}
	free(A);
	free(B);
	free(C);
	tc_diags_free(&d);
	tc_arena_free(a);
}
END_TEST

START_TEST(sample_softmax_ragged)
{
	TcOptions opt;
	ck_assert(tc_options_init(&opt, "openmp", NULL));
	TcArena *a = tc_arena_new();
	TcDiags d;
	TcKernel *k = load_sample(a, "softmax", &opt, &d);
	int32_t M = 7, N = 1500; /* two chunks of 1024, the second ragged */
	float *X = malloc(sizeof *X * M * N), *Y = malloc(sizeof *Y * M * N);
	for (int i = 0; i < M * N; i++)
		X[i] = (float)sin(i * 0.37) * 4;
	void *px = X, *py = Y;
	void *args[] = { &M, &N, &px, &py };
	ck_assert(tc_interp_run(k, args, false, NULL, &d));
	for (int i = 0; i < M; i++) {
		double mx = -INFINITY, sum = 0;
		for (int j = 0; j < N; j++)
			mx = fmax(mx, X[i * N + j]);
		for (int j = 0; j < N; j++)
			sum += exp(X[i * N + j] - mx);
		for (int j = 0; j < N; j++)
			ck_assert(fabs(Y[i * N + j] - exp(X[i * N + j] - mx) / sum) <
				  1e-7);
	}
	free(X);
	free(Y);
	tc_diags_free(&d);
	tc_arena_free(a);
}
END_TEST

START_TEST(sample_flash_attention_causal)
{
	TcOptions opt;
	ck_assert(tc_options_init(&opt, "openmp", NULL));
	opt.ndefines = 2;
	opt.define_name[0] = "CAUSAL";
	opt.define_value[0] = 1;
	opt.define_name[1] = "HEAD_DIM";
	opt.define_value[1] = 32;
	TcArena *a = tc_arena_new();
	TcDiags d;
	TcKernel *k = load_sample(a, "flash_attention", &opt, &d);
	int32_t B = 2, S = 150, H = 3, D = 32;
	size_t n = (size_t)B * S * H * D;
	uint16_t *Q = malloc(2 * n), *K = malloc(2 * n), *V = malloc(2 * n),
		 *O = malloc(2 * n);
	fill_f16(Q, n, 3);
	fill_f16(K, n, 4);
	fill_f16(V, n, 5);
	void *pq = Q, *pk = K, *pv = V, *po = O;
	void *args[] = { &B, &S, &H, &pq, &pk, &pv, &po };
	ck_assert_msg(tc_interp_run(k, args, false, NULL, &d), "%s",
		      d.text.data ? d.text.data : "");
#define AT(T, b, s, h, e) tilec_f16_to_double(T[(((size_t)(b) * S + (s)) * H + (h)) * D + (e)])
	double worst = 0;
	double *w = malloc(sizeof *w * S);
	for (int b = 0; b < B; b++) {
		for (int h = 0; h < H; h++) {
			for (int q = 0; q < S; q++) {
				double mx = -INFINITY, sum = 0;
				for (int kv = 0; kv <= q; kv++) {
					double s = 0;
					for (int e = 0; e < D; e++)
						s += AT(Q, b, q, h, e) * AT(K, b, kv, h, e);
					w[kv] = s / sqrt(D);
					mx = fmax(mx, w[kv]);
				}
				for (int kv = 0; kv <= q; kv++)
					sum += (w[kv] = exp(w[kv] - mx));
				for (int e = 0; e < D; e++) {
					double o = 0;
					for (int kv = 0; kv <= q; kv++)
						o += w[kv] / sum * AT(V, b, kv, h, e);
					worst = fmax(worst, fabs(o - AT(O, b, q, h, e)));
				}
			}
		}
	}
#undef AT
	/* p is an f16 fragment: the reference rounds it like any backend. */
	ck_assert_msg(worst < 2e-3, "flash attention off by %g", worst);
	free(w);
	free(Q);
	free(K);
	free(V);
	free(O);
	tc_diags_free(&d);
	tc_arena_free(a);
}
END_TEST

Suite *
unit_suite_interp(void)
{
	Suite *s = suite_create("interp");
	TCase *c = tcase_create("ir");
	tcase_add_test(c, copy_ragged_reads_zero_and_skips_writes);
	tcase_add_test(c, copy_converts_and_rounds_to_the_stored_dtype);
	tcase_add_test(c, gemm_with_each_transpose);
	tcase_add_test(c, gemm_rounds_a_to_b_type);
	tcase_add_test(c, gemm_fixture_ragged_f16);
	tcase_add_test(c, reduce_each_op_dim_and_accumulate);
	tcase_add_test(c, out_of_bounds_element_is_a_located_error);
	tcase_add_test(c, element_formats_round_trip);
	tcase_add_test(c, integers_are_exact_as_in_c);
	tcase_add_test(c, undefined_integer_operations_are_errors);
	tcase_add_test(c, int_to_narrow_float_rounds_once);
	suite_add_tcase(s, c);
	TCase *samples = tcase_create("samples");
	tcase_set_timeout(samples, 60);
	tcase_add_test(samples, sample_gemm_256_is_exact);
	tcase_add_test(samples, sample_softmax_ragged);
	tcase_add_test(samples, sample_flash_attention_causal);
	suite_add_tcase(s, samples);
	return s;
}
