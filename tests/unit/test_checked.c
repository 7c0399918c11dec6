/*
 * test_checked.c - tilec_launch_checked: launches checked against the
 * kernel's signature (runtime/signature.c, from the launch document that
 * tilec_jit hands the runtime).
 *
 * Runs on one backend: openmp, or the one TILEC_CHECKED_BACKEND names
 * ("cuda", "hip"; exit 77 where the context cannot be made).  Kernels come
 * from tile programs through tilec_jit: samples/gemm_f32.c and the `pack`
 * kernel of tests/launch/two_kernels.c (a float scalar, extents that are
 * expressions).  Every misuse (swapped, missing or extra arguments, a
 * wrong dtype, rank, shape, stride, kind or name, a kernel without a
 * signature, a malformed document) must be TILEC_ERR_INVALID with a
 * message naming the parameter, and must launch nothing: the output
 * stays poisoned.  The correct launches are checked against a double
 * precision reference on random data with ragged shapes.
 *
 * Each test forks (Check's default), so a crash fails that test alone.
 */
#include <check.h>

#include "tilec_translator.h"

#include <math.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tilec_backend backend = TILEC_BACKEND_OPENMP;

typedef struct Fx {
	tilec_context *ctx;
	tilec_translator *tr;
	tilec_module *gemm_mod, *pack_mod;
	tilec_kernel *gemm, *pack;
} Fx;

static Fx fx;

static char *
source_path(const char *rel)
{
	const char *root = getenv("TILEC_SOURCE_ROOT");
	static char buf[2][4096];
	static int n;
	char *b = buf[n++ % 2];
	snprintf(b, sizeof buf[0], "%s/%s", root ? root : ".", rel);
	return b;
}

static tilec_kernel *
jit(const char *rel, const char *kernel, tilec_module **mod)
{
	tilec_kernel *k = tilec_jit(fx.ctx, fx.tr, source_path(rel), NULL, 0,
				    kernel, NULL, mod);
	ck_assert_msg(k, "%s", tilec_translator_diagnostics(fx.tr));
	return k;
}

static void
setup(void)
{
	tilec_init_error err;
	fx.ctx = tilec_context_new(backend, 0, &err);
	ck_assert_msg(fx.ctx, "%s", err.message);
	const char *cache = getenv("TILEC_CACHE_DIR");
	if (cache)
		ck_assert_int_eq(tilec_set_cache_dir(fx.ctx, cache), TILEC_OK);
	fx.tr = tilec_translator_new();
	ck_assert(fx.tr);
	fx.gemm = jit("samples/gemm_f32.c", "gemm_f32", &fx.gemm_mod);
	fx.pack = jit("tests/launch/two_kernels.c", "pack", &fx.pack_mod);
}

static void
teardown(void)
{
	tilec_module_free(fx.gemm_mod);
	tilec_module_free(fx.pack_mod);
	tilec_translator_free(fx.tr);
	tilec_context_free(fx.ctx);
}

/* --- Device buffers of floats --------------------------------------------- */

typedef struct Buf {
	float *host;  /* the host copy */
	void *dev;    /* the kernel's (== host memory on the CPU) */
	size_t n;     /* elements */
} Buf;

static unsigned long long rng = 0x9e3779b97f4a7c15ull;

static float
random_float(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (float)((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

/* n random floats, or n NaNs (poison). */
static Buf
buf_new(size_t n, bool poison)
{
	Buf b = { .n = n };
	b.host = malloc((n ? n : 1) * sizeof(float));
	ck_assert(b.host);
	for (size_t i = 0; i < n; i++)
		b.host[i] = poison ? NAN : random_float();
	ck_assert_int_eq(tilec_alloc(fx.ctx, (n ? n : 1) * sizeof(float), &b.dev),
			 TILEC_OK);
	ck_assert_int_eq(tilec_memcpy_h2d(fx.ctx, b.dev, b.host,
					  n * sizeof(float)), TILEC_OK);
	return b;
}

/* The device copy, back in host[]. */
static void
buf_read(Buf *b)
{
	ck_assert_int_eq(tilec_synchronize(fx.ctx), TILEC_OK);
	ck_assert_int_eq(tilec_memcpy_d2h(fx.ctx, b->host, b->dev,
					  b->n * sizeof(float)), TILEC_OK);
}

static bool
all_poisoned(Buf *b)
{
	buf_read(b);
	for (size_t i = 0; i < b->n; i++)
		if (!isnan(b->host[i]))
			return false;
	return true;
}

static void
buf_free(Buf *b)
{
	tilec_free(fx.ctx, b->dev);
	free(b->host);
}

/* --- gemm_f32: C[M][N] = A[M][K] B[K][N] ------------------------------- */

enum { M = 70, N = 50, K = 33 };

typedef struct Gemm {
	Buf a, b, c;
	int64_t sa[2], sb[2], sc[2];
} Gemm;

static Gemm
gemm_new(void)
{
	Gemm g = { .a = buf_new(M * K, false), .b = buf_new(K * N, false),
		   .c = buf_new(M * N, true),
		   .sa = { M, K }, .sb = { K, N }, .sc = { M, N } };
	return g;
}

static void
gemm_free(Gemm *g)
{
	buf_free(&g->a);
	buf_free(&g->b);
	buf_free(&g->c);
}

static void
gemm_check(Gemm *g)
{
	buf_read(&g->c);
	double worst = 0, scale = 0;
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			double want = 0;
			for (int k = 0; k < K; k++)
				want += (double)g->a.host[i * K + k] *
					g->b.host[k * N + j];
			double got = g->c.host[i * N + j];
			ck_assert_msg(!isnan(got), "C[%d][%d] unwritten", i, j);
			worst = fmax(worst, fabs(got - want));
			scale = fmax(scale, fabs(want));
		}
	ck_assert_msg(worst <= 1e-5 * scale, "max error %g (scale %g)", worst,
		      scale);
}

/* The call must fail with INVALID and a message holding every word of
 * `words` (NULL-terminated). */
static void
expect_invalid(tilec_kernel *k, const tilec_arg *args, int nargs,
	       const char *const *words)
{
	tilec_status st = tilec_launch_checked(k, args, nargs, NULL);
	const char *msg = tilec_error(fx.ctx);
	ck_assert_msg(st == TILEC_ERR_INVALID, "status %d (%s)", st, msg);
	for (int i = 0; words[i]; i++)
		ck_assert_msg(strstr(msg, words[i]), "'%s' not in: %s", words[i],
			      msg);
}

#define WORDS(...) ((const char *const[]){ __VA_ARGS__, NULL })

START_TEST(gemm_tensors_only)
{
	Gemm g = gemm_new();
	tilec_arg args[] = {
		tilec_arg_tensor(NULL, g.a.dev, TILEC_F32, 2, g.sa, NULL),
		tilec_arg_tensor(NULL, g.b.dev, TILEC_F32, 2, g.sb, NULL),
		tilec_arg_tensor(NULL, g.c.dev, TILEC_F32, 2, g.sc, NULL),
	};
	ck_assert_msg(tilec_launch_checked(fx.gemm, args, 3, NULL) == TILEC_OK,
		      "%s", tilec_error(fx.ctx));
	ck_assert_int_eq(tilec_launch_problem(fx.gemm), TILEC_PROBLEM_NONE);
	gemm_check(&g);
	gemm_free(&g);
}
END_TEST

START_TEST(gemm_every_argument)
{
	Gemm g = gemm_new();
	/* Contiguous strides given explicitly; dims of extent 1 may have
	 * any stride, but these have none. */
	int64_t st_a[2] = { K, 1 }, st_b[2] = { N, 1 };
	tilec_arg args[] = {
		tilec_arg_int(NULL, M), tilec_arg_int(NULL, N),
		tilec_arg_int(NULL, K),
		tilec_arg_tensor(NULL, g.a.dev, TILEC_F32, 2, g.sa, st_a),
		tilec_arg_tensor(NULL, g.b.dev, TILEC_F32, 2, g.sb, st_b),
		tilec_arg_tensor(NULL, g.c.dev, TILEC_F32, 2, g.sc, NULL),
	};
	ck_assert_msg(tilec_launch_checked(fx.gemm, args, 6, NULL) == TILEC_OK,
		      "%s", tilec_error(fx.ctx));
	gemm_check(&g);
	gemm_free(&g);
}
END_TEST

START_TEST(gemm_by_name)
{
	Gemm g = gemm_new();
	tilec_arg args[] = {
		tilec_arg_tensor("C", g.c.dev, TILEC_F32, 2, g.sc, NULL),
		tilec_arg_int("K", K),
		tilec_arg_tensor("B", g.b.dev, TILEC_F32, 2, g.sb, NULL),
		tilec_arg_tensor("A", g.a.dev, TILEC_F32, 2, g.sa, NULL),
	};
	ck_assert_msg(tilec_launch_checked(fx.gemm, args, 4, NULL) == TILEC_OK,
		      "%s", tilec_error(fx.ctx));
	gemm_check(&g);
	gemm_free(&g);
}
END_TEST

START_TEST(gemm_swapped)
{
	Gemm g = gemm_new();
	tilec_arg args[] = {
		tilec_arg_tensor(NULL, g.b.dev, TILEC_F32, 2, g.sb, NULL),
		tilec_arg_tensor(NULL, g.a.dev, TILEC_F32, 2, g.sa, NULL),
		tilec_arg_tensor(NULL, g.c.dev, TILEC_F32, 2, g.sc, NULL),
	};
	/* B [K][N] as A makes M = K = 33, against C's 70 rows. */
	expect_invalid(fx.gemm, args, 3, WORDS("gemm_f32", "'M'", "'C'"));
	ck_assert(all_poisoned(&g.c));
	gemm_free(&g);
}
END_TEST

START_TEST(gemm_wrong_dtype)
{
	Gemm g = gemm_new();
	tilec_arg args[] = {
		tilec_arg_tensor(NULL, g.a.dev, TILEC_F16, 2, g.sa, NULL),
		tilec_arg_tensor(NULL, g.b.dev, TILEC_F32, 2, g.sb, NULL),
		tilec_arg_tensor(NULL, g.c.dev, TILEC_F32, 2, g.sc, NULL),
	};
	expect_invalid(fx.gemm, args, 3, WORDS("tensor 'A'", "f16", "f32"));
	ck_assert_int_eq(tilec_launch_problem(fx.gemm), TILEC_PROBLEM_TYPE);
	args[0].dtype = TILEC_DTYPE_COUNT;
	expect_invalid(fx.gemm, args, 3, WORDS("tensor 'A'", "no tilec dtype"));
	/* Memory the kernel does not run on (when the caller says). */
	args[0].dtype = TILEC_F32;
	args[0].memory = backend == TILEC_BACKEND_OPENMP ? TILEC_MEMORY_DEVICE
							 : TILEC_MEMORY_HOST;
	expect_invalid(fx.gemm, args, 3, WORDS("tensor 'A' is in"));
	ck_assert_int_eq(tilec_launch_problem(fx.gemm), TILEC_PROBLEM_VALUE);
	ck_assert(all_poisoned(&g.c));
	gemm_free(&g);
}
END_TEST

START_TEST(gemm_wrong_rank)
{
	Gemm g = gemm_new();
	int64_t flat[1] = { M * K };
	tilec_arg args[] = {
		tilec_arg_tensor(NULL, g.a.dev, TILEC_F32, 1, flat, NULL),
		tilec_arg_tensor(NULL, g.b.dev, TILEC_F32, 2, g.sb, NULL),
		tilec_arg_tensor(NULL, g.c.dev, TILEC_F32, 2, g.sc, NULL),
	};
	expect_invalid(fx.gemm, args, 3, WORDS("tensor 'A'", "rank 2",
					       "rank 1"));
	ck_assert(all_poisoned(&g.c));
	gemm_free(&g);
}
END_TEST

START_TEST(gemm_inconsistent_shapes)
{
	Gemm g = gemm_new();
	int64_t sb[2] = { K - 1, N };
	tilec_arg args[] = {
		tilec_arg_tensor(NULL, g.a.dev, TILEC_F32, 2, g.sa, NULL),
		tilec_arg_tensor(NULL, g.b.dev, TILEC_F32, 2, sb, NULL),
		tilec_arg_tensor(NULL, g.c.dev, TILEC_F32, 2, g.sc, NULL),
	};
	expect_invalid(fx.gemm, args, 3, WORDS("'K'", "'A'", "'B'", "33",
					       "32"));
	ck_assert_int_eq(tilec_launch_problem(fx.gemm), TILEC_PROBLEM_VALUE);
	ck_assert(all_poisoned(&g.c));
	/* An extent given that the tensors contradict. */
	tilec_arg named[] = {
		tilec_arg_int("M", M + 1),
		tilec_arg_tensor("A", g.a.dev, TILEC_F32, 2, g.sa, NULL),
		tilec_arg_tensor("B", g.b.dev, TILEC_F32, 2, g.sb, NULL),
		tilec_arg_tensor("C", g.c.dev, TILEC_F32, 2, g.sc, NULL),
	};
	expect_invalid(fx.gemm, named, 4, WORDS("tensor 'A'", "70", "71",
						"M"));
	ck_assert(all_poisoned(&g.c));
	gemm_free(&g);
}
END_TEST

START_TEST(gemm_too_few_and_too_many)
{
	Gemm g = gemm_new();
	tilec_arg args[] = {
		tilec_arg_tensor(NULL, g.a.dev, TILEC_F32, 2, g.sa, NULL),
		tilec_arg_tensor(NULL, g.b.dev, TILEC_F32, 2, g.sb, NULL),
		tilec_arg_tensor(NULL, g.c.dev, TILEC_F32, 2, g.sc, NULL),
		tilec_arg_tensor(NULL, g.c.dev, TILEC_F32, 2, g.sc, NULL),
	};
	expect_invalid(fx.gemm, args, 2, WORDS("2 arguments by position",
					       "A, B, C"));
	ck_assert_int_eq(tilec_launch_problem(fx.gemm), TILEC_PROBLEM_TYPE);
	expect_invalid(fx.gemm, args, 4, WORDS("4 arguments by position"));
	expect_invalid(fx.gemm, args, 0, WORDS("missing argument",
					       "tensor 'A'"));
	expect_invalid(fx.gemm, NULL, 3, WORDS("no argument array"));
	/* Named: C missing. */
	tilec_arg named[] = {
		tilec_arg_tensor("A", g.a.dev, TILEC_F32, 2, g.sa, NULL),
		tilec_arg_tensor("B", g.b.dev, TILEC_F32, 2, g.sb, NULL),
	};
	expect_invalid(fx.gemm, named, 2, WORDS("missing argument",
						"tensor 'C'", "f32[M][N]"));
	ck_assert(all_poisoned(&g.c));
	gemm_free(&g);
}
END_TEST

/* More arguments than the launch's room on the stack holds (its working
 * arrays are then allocated): refused as any extra argument is, and a
 * right launch after it runs. */
START_TEST(gemm_past_the_launch_buffer)
{
	Gemm g = gemm_new();
	enum { MANY = 40 };
	tilec_arg many[MANY];
	for (int i = 0; i < MANY; i++)
		many[i] = tilec_arg_tensor(NULL, g.a.dev, TILEC_F32, 2, g.sa,
					   NULL);
	expect_invalid(fx.gemm, many, MANY, WORDS("40 arguments by position"));
	ck_assert(all_poisoned(&g.c));
	tilec_arg args[] = {
		tilec_arg_tensor(NULL, g.a.dev, TILEC_F32, 2, g.sa, NULL),
		tilec_arg_tensor(NULL, g.b.dev, TILEC_F32, 2, g.sb, NULL),
		tilec_arg_tensor(NULL, g.c.dev, TILEC_F32, 2, g.sc, NULL),
	};
	ck_assert_msg(tilec_launch_checked(fx.gemm, args, 3, NULL) == TILEC_OK,
		      "%s", tilec_error(fx.ctx));
	gemm_check(&g);
	gemm_free(&g);
}
END_TEST

START_TEST(gemm_wrong_kind_name_stride)
{
	Gemm g = gemm_new();
	tilec_arg kind[] = {
		tilec_arg_float("M", 70.0),
		tilec_arg_tensor("A", g.a.dev, TILEC_F32, 2, g.sa, NULL),
		tilec_arg_tensor("B", g.b.dev, TILEC_F32, 2, g.sb, NULL),
		tilec_arg_tensor("C", g.c.dev, TILEC_F32, 2, g.sc, NULL),
	};
	expect_invalid(fx.gemm, kind, 4, WORDS("scalar 'M'", "float"));
	tilec_arg as_scalar[] = {
		tilec_arg_int("A", 1),
		tilec_arg_tensor("B", g.b.dev, TILEC_F32, 2, g.sb, NULL),
		tilec_arg_tensor("C", g.c.dev, TILEC_F32, 2, g.sc, NULL),
	};
	expect_invalid(fx.gemm, as_scalar, 3, WORDS("tensor 'A'", "integer"));
	tilec_arg name[] = {
		tilec_arg_tensor("Q", g.a.dev, TILEC_F32, 2, g.sa, NULL),
		tilec_arg_tensor("B", g.b.dev, TILEC_F32, 2, g.sb, NULL),
		tilec_arg_tensor("C", g.c.dev, TILEC_F32, 2, g.sc, NULL),
	};
	expect_invalid(fx.gemm, name, 3, WORDS("no parameter 'Q'",
					       "M, N, K, A, B, C"));
	tilec_arg twice[] = {
		tilec_arg_tensor("A", g.a.dev, TILEC_F32, 2, g.sa, NULL),
		tilec_arg_tensor("A", g.a.dev, TILEC_F32, 2, g.sa, NULL),
	};
	expect_invalid(fx.gemm, twice, 2, WORDS("'A' given twice"));
	/* A transposed view: strides {1, M} of a K x M buffer. */
	int64_t strided[2] = { 1, M };
	tilec_arg view[] = {
		tilec_arg_tensor(NULL, g.a.dev, TILEC_F32, 2, g.sa, strided),
		tilec_arg_tensor(NULL, g.b.dev, TILEC_F32, 2, g.sb, NULL),
		tilec_arg_tensor(NULL, g.c.dev, TILEC_F32, 2, g.sc, NULL),
	};
	expect_invalid(fx.gemm, view, 3, WORDS("tensor 'A'", "row-major"));
	tilec_arg null[] = {
		tilec_arg_tensor(NULL, NULL, TILEC_F32, 2, g.sa, NULL),
		tilec_arg_tensor(NULL, g.b.dev, TILEC_F32, 2, g.sb, NULL),
		tilec_arg_tensor(NULL, g.c.dev, TILEC_F32, 2, g.sc, NULL),
	};
	expect_invalid(fx.gemm, null, 3, WORDS("tensor 'A'", "NULL"));
	tilec_arg big[] = {
		tilec_arg_int("M", 1LL << 40),
		tilec_arg_int("N", N), tilec_arg_int("K", K),
		tilec_arg_tensor("A", g.a.dev, TILEC_F32, 2, g.sa, NULL),
		tilec_arg_tensor("B", g.b.dev, TILEC_F32, 2, g.sb, NULL),
		tilec_arg_tensor("C", g.c.dev, TILEC_F32, 2, g.sc, NULL),
	};
	expect_invalid(fx.gemm, big, 6, WORDS("'M'", "int"));
	tilec_arg unmade[3];
	memset(unmade, 0, sizeof unmade);
	expect_invalid(fx.gemm, unmade, 3, WORDS("tilec_arg_tensor"));
	ck_assert(all_poisoned(&g.c));
	gemm_free(&g);
}
END_TEST

/* A read-only tensor is refused where the kernel writes it (C) and
 * taken where it only reads it (const A and B). */
START_TEST(gemm_read_only)
{
	Gemm g = gemm_new();
	tilec_arg args[] = {
		tilec_arg_tensor(NULL, g.a.dev, TILEC_F32, 2, g.sa, NULL),
		tilec_arg_tensor(NULL, g.b.dev, TILEC_F32, 2, g.sb, NULL),
		tilec_arg_tensor(NULL, g.c.dev, TILEC_F32, 2, g.sc, NULL),
	};
	args[2].read_only = 1;
	expect_invalid(fx.gemm, args, 3, WORDS("gemm_f32", "tensor 'C'",
					       "read-only"));
	ck_assert_int_eq(tilec_launch_problem(fx.gemm), TILEC_PROBLEM_VALUE);
	ck_assert(all_poisoned(&g.c));
	args[0].read_only = args[1].read_only = 1;
	args[2].read_only = 0;
	ck_assert_msg(tilec_launch_checked(fx.gemm, args, 3, NULL) == TILEC_OK,
		      "%s", tilec_error(fx.ctx));
	gemm_check(&g);
	gemm_free(&g);
}
END_TEST

/* Arguments of the first tilec_arg, which ended at `device`: read_only
 * is not theirs to set, so what lies past their size is not read (here
 * a read_only flag that a newer caller would mean). */
START_TEST(gemm_first_arg_size)
{
	Gemm g = gemm_new();
	tilec_arg args[] = {
		tilec_arg_tensor(NULL, g.a.dev, TILEC_F32, 2, g.sa, NULL),
		tilec_arg_tensor(NULL, g.b.dev, TILEC_F32, 2, g.sb, NULL),
		tilec_arg_tensor(NULL, g.c.dev, TILEC_F32, 2, g.sc, NULL),
	};
	size_t first = offsetof(tilec_arg, read_only);
	ck_assert_uint_eq(first % _Alignof(tilec_arg), 0);
	unsigned char *old = malloc(3 * first + sizeof(tilec_arg));
	ck_assert(old);
	for (int i = 0; i < 3; i++) {
		args[i].size = first;
		args[i].read_only = 1;
		memcpy(old + i * first, &args[i], sizeof args[i]);
	}
	ck_assert_msg(tilec_launch_checked(fx.gemm, (const tilec_arg *)(void *)old,
					   3, NULL) == TILEC_OK,
		      "%s", tilec_error(fx.ctx));
	gemm_check(&g);
	/* Shorter than the first version: not made by tilec_arg_*. */
	for (int i = 0; i < 3; i++)
		args[i].size = first - sizeof(int);
	expect_invalid(fx.gemm, args, 3, WORDS("tilec_arg_tensor"));
	free(old);
	gemm_free(&g);
}
END_TEST

START_TEST(gemm_empty)
{
	Gemm g = gemm_new();
	int64_t sa[2] = { 0, K }, sc[2] = { 0, N };
	tilec_arg args[] = {
		tilec_arg_tensor(NULL, g.a.dev, TILEC_F32, 2, sa, NULL),
		tilec_arg_tensor(NULL, g.b.dev, TILEC_F32, 2, g.sb, NULL),
		tilec_arg_tensor(NULL, g.c.dev, TILEC_F32, 2, sc, NULL),
	};
	ck_assert_msg(tilec_launch_checked(fx.gemm, args, 3, NULL) == TILEC_OK,
		      "%s", tilec_error(fx.ctx));
	ck_assert(all_poisoned(&g.c));
	gemm_free(&g);
}
END_TEST

/* --- pack: Y[M][2 * N] = X[M][2 * N] + shift ---------------------------------- */

START_TEST(pack_expression_extents)
{
	enum { PM = 37, PN = 7 };
	Buf x = buf_new(PM * 2 * PN, false), y = buf_new(PM * 2 * PN, true);
	int64_t shape[2] = { PM, 2 * PN };
	/* N is no tensor's whole extent: it must be given. */
	tilec_arg missing[] = {
		tilec_arg_float("shift", 0.5),
		tilec_arg_tensor("X", x.dev, TILEC_F32, 2, shape, NULL),
		tilec_arg_tensor("Y", y.dev, TILEC_F32, 2, shape, NULL),
	};
	expect_invalid(fx.pack, missing, 3, WORDS("missing argument 'N'"));
	int64_t odd[2] = { PM, 2 * PN - 1 };
	tilec_arg wrong[] = {
		tilec_arg_int("N", PN), tilec_arg_float("shift", 0.5),
		tilec_arg_tensor("X", x.dev, TILEC_F32, 2, odd, NULL),
		tilec_arg_tensor("Y", y.dev, TILEC_F32, 2, shape, NULL),
	};
	expect_invalid(fx.pack, wrong, 4, WORDS("tensor 'X'", "(2 * N) = 14",
						"[37, 13]"));
	ck_assert(all_poisoned(&y));
	/* Positional: N, shift, X, Y (M from X). */
	tilec_arg args[] = {
		tilec_arg_int(NULL, PN), tilec_arg_int(NULL, 3),
		tilec_arg_tensor(NULL, x.dev, TILEC_F32, 2, shape, NULL),
		tilec_arg_tensor(NULL, y.dev, TILEC_F32, 2, shape, NULL),
	};
	ck_assert_msg(tilec_launch_checked(fx.pack, args, 4, NULL) == TILEC_OK,
		      "%s", tilec_error(fx.ctx));
	buf_read(&y);
	for (size_t i = 0; i < y.n; i++)
		ck_assert_msg(y.host[i] == x.host[i] + 3.0f, "Y[%zu] = %g, "
			      "want %g", i, y.host[i], x.host[i] + 3.0f);
	buf_free(&x);
	buf_free(&y);
}
END_TEST

/* --- Signatures ------------------------------------------------------------- */

START_TEST(no_signature)
{
	/* The same source compiled without its launch document. */
	ck_assert_int_eq(tilec_translator_set_target(
				 fx.tr, tilec_backend_name(backend), NULL),
			 TILEC_OK);
	ck_assert_int_eq(tilec_translator_set_kernel(fx.tr, "pack"), TILEC_OK);
	/* Helpers inlined: the source compiles alone. */
	ck_assert_int_eq(tilec_translator_set_flags(fx.tr, TILEC_STANDALONE),
			 TILEC_OK);
	ck_assert_int_eq(tilec_translate_file(
				 fx.tr, source_path("tests/launch/two_kernels.c")),
			 TILEC_OK);
	size_t len;
	const char *src = tilec_translator_output(fx.tr, &len);
	tilec_compile_options o;
	tilec_compile_options_init(&o);
	o.name = backend == TILEC_BACKEND_OPENMP ? "pack.c" : "pack.cu";
	tilec_module *mod = tilec_compile(fx.ctx, src, len, &o);
	ck_assert_msg(mod, "%s", tilec_error(fx.ctx));
	tilec_kernel *k = tilec_module_kernel(mod, "pack");
	ck_assert(k);
	tilec_arg args[] = { tilec_arg_int("N", 1) };
	expect_invalid(k, args, 1, WORDS("pack has no signature"));
	tilec_module_free(mod);

	/* Malformed and foreign documents are refused at compile time. */
	static const char *const bad[] = {
		"{\"format\": \"tilec-launch/1\", \"kernels\": [",
		"{\"format\": \"other\", \"kernels\": []}",
		"{\"format\": \"tilec-launch/1\", \"kernels\": [{\"kernel\": "
		"\"pack\", \"target\": \"nowhere\"}]}",
		"{\"format\": \"tilec-launch/1\", \"kernels\": [{\"kernel\": "
		"\"pack\", \"target\": \"TARGET\", \"threads\": 1, "
		"\"smem_bytes\": 0, \"tunables\": {}, \"params\": [{\"name\": "
		"\"N\", \"kind\": \"scalar\", \"dtype\": \"i32\", \"ctype\": "
		"\"int\"}], \"grid\": [{\"op\": \"pow\", \"args\": []}, "
		"{\"int\": 1}, {\"int\": 1}]}]}",
		"{\"format\": \"tilec-launch/1\", \"kernels\": [{\"kernel\": "
		"\"pack\", \"target\": \"TARGET\", \"threads\": 1, "
		"\"smem_bytes\": 0, \"tunables\": {}, \"params\": [], \"grid\": "
		"[{\"param\": \"Q\"}, {\"int\": 1}, {\"int\": 1}]}]}",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char doc[1024];
		const char *t = strstr(bad[i], "TARGET");
		if (t)
			snprintf(doc, sizeof doc, "%.*s%s%s", (int)(t - bad[i]),
				 bad[i], tilec_backend_name(backend), t + 6);
		else
			snprintf(doc, sizeof doc, "%s", bad[i]);
		o.manifest = doc;
		ck_assert_msg(!tilec_compile(fx.ctx, src, len, &o), "%s", doc);
		ck_assert_msg(strstr(tilec_error(fx.ctx), "launch document") ||
				      strstr(tilec_error(fx.ctx), "not JSON"),
			      "%s", tilec_error(fx.ctx));
	}
	/* The reader's limits: nesting, integers past 64 bits. */
	char deep[1024];
	memset(deep, '[', 300);
	memset(deep + 300, ']', 300);
	deep[600] = '\0';
	o.manifest = deep;
	ck_assert(!tilec_compile(fx.ctx, src, len, &o));
	ck_assert_msg(strstr(tilec_error(fx.ctx), "nested too deeply"), "%s",
		      tilec_error(fx.ctx));
	o.manifest = "{\"format\": \"tilec-launch/1\", \"n\": "
		     "99999999999999999999, \"kernels\": []}";
	ck_assert(!tilec_compile(fx.ctx, src, len, &o));
	ck_assert_msg(strstr(tilec_error(fx.ctx), "outside 64 bits"), "%s",
		      tilec_error(fx.ctx));
}
END_TEST

static Suite *
checked_suite(void)
{
	Suite *s = suite_create("checked");
	TCase *c = tcase_create("checked");
	tcase_add_checked_fixture(c, setup, teardown);
	tcase_set_timeout(c, 600);
	tcase_add_test(c, gemm_tensors_only);
	tcase_add_test(c, gemm_every_argument);
	tcase_add_test(c, gemm_by_name);
	tcase_add_test(c, gemm_swapped);
	tcase_add_test(c, gemm_wrong_dtype);
	tcase_add_test(c, gemm_wrong_rank);
	tcase_add_test(c, gemm_inconsistent_shapes);
	tcase_add_test(c, gemm_too_few_and_too_many);
	tcase_add_test(c, gemm_past_the_launch_buffer);
	tcase_add_test(c, gemm_wrong_kind_name_stride);
	tcase_add_test(c, gemm_read_only);
	tcase_add_test(c, gemm_first_arg_size);
	tcase_add_test(c, gemm_empty);
	tcase_add_test(c, pack_expression_extents);
	tcase_add_test(c, no_signature);
	suite_add_tcase(s, c);
	return s;
}

int
main(void)
{
	const char *b = getenv("TILEC_CHECKED_BACKEND");
	if (b && *b) {
		int k = tilec_backend_from_name(b);
		if (k < 0) {
			fprintf(stderr, "TILEC_CHECKED_BACKEND=%s: no such "
				"backend\n", b);
			return 2;
		}
		backend = (tilec_backend)k;
	}
	tilec_init_error err;
	tilec_context *ctx = tilec_context_new(backend, 0, &err);
	if (!ctx) {
		printf("skipped: no %s context: %s\n", tilec_backend_name(backend),
		       err.message);
		return 77;
	}
	tilec_context_free(ctx);
	SRunner *sr = srunner_create(checked_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
