/*
 * onednn_gemm.c - one of tilec's CPU GEMMs against oneDNN's matmul in one
 * process, alternately (tools/bench_onednn.sh builds and runs it).
 *
 * usage: onednn_gemm TYPE KERNEL.so ENTRY M N K
 *
 * TYPE is f32 (B stored [K][N], as samples/gemm_f32.c has it), bf16 (f32
 * result) or i8 (i32 result), these two with B stored [N][K] (a linear
 * layer's weights, tests/cpu_gemm/gemm_bf16.c and gemm_i8.c); KERNEL.so
 * holds the `tilec --standalone` C of a kernel computing C[M][N] = A[M][K]
 * * B, ENTRY its tilec_entry_* function.  oneDNN computes the same product
 * with the same plain layouts, as torch.matmul and F.linear call it on the
 * CPU, so each side pays for whatever it does to the operands inside the
 * call.
 *
 * First a check on a ragged shape (M-3, N-5, K-7 when those are positive)
 * against oneDNN: integers exactly, floats within 1e-3 of the largest
 * |C| (both sum the same bf16 or f32 products in f32); a failure exits 1.
 * Then each side warms up twice and runs REPEATS times alternately (env
 * TILEC_BENCH_REPEATS, default 7), a 0.05 s pause between calls; one line:
 *
 *   TYPE MxNxK threads T: tilec X GFLOP/s, oneDNN Y GFLOP/s, ratio R
 *
 * (medians; GOP/s for i8).  Threads from OMP_NUM_THREADS: the kernels and
 * oneDNN (built with GNU OpenMP) share the one OpenMP runtime.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "oneapi/dnnl/dnnl.h"

typedef void (*Entry)(void **args);
enum Type { F32, BF16, I8 };

static double
now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void
pause_briefly(void)
{
	struct timespec t = { 0, 50 * 1000 * 1000 };
	nanosleep(&t, NULL);
}

static void
die(const char *what, dnnl_status_t st)
{
	fprintf(stderr, "onednn_gemm: %s failed (status %d)\n", what, (int)st);
	exit(2);
}

#define DNNL(call)                           \
	do {                                 \
		dnnl_status_t st_ = (call);  \
		if (st_ != dnnl_success)     \
			die(#call, st_);     \
	} while (0)

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t
next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

/* A bf16 of a float, rounded to nearest even. */
static uint16_t
to_bf16(float x)
{
	uint32_t u;
	memcpy(&u, &x, 4);
	u += 0x7fff + (u >> 16 & 1);
	return (uint16_t)(u >> 16);
}

/* Random operands of the type: floats in [-1, 1), int8 in -128 .. 127. */
static void
fill(enum Type t, void *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		float x = (float)(next() % 65536) / 32768.0f - 1.0f;
		if (t == F32)
			((float *)p)[i] = x;
		else if (t == BF16)
			((uint16_t *)p)[i] = to_bf16(x);
		else
			((int8_t *)p)[i] = (int8_t)(next() % 256 - 128);
	}
}

/* One oneDNN matmul of one shape, its memories bound to our buffers. */
typedef struct Dnnl {
	dnnl_engine_t eng;
	dnnl_stream_t stream;
	dnnl_primitive_t prim;
	dnnl_memory_t a, b, c;
} Dnnl;

static void
dnnl_setup(Dnnl *d, enum Type t, int m, int n, int k, void *a, void *b,
	   void *c)
{
	dnnl_data_type_t in = t == F32 ? dnnl_f32 : t == BF16 ? dnnl_bf16 : dnnl_s8;
	dnnl_data_type_t out = t == I8 ? dnnl_s32 : dnnl_f32;
	dnnl_dims_t ad = { m, k }, bd = { k, n }, cd = { m, n };
	dnnl_memory_desc_t amd, bmd, cmd;
	DNNL(dnnl_engine_create(&d->eng, dnnl_cpu, 0));
	DNNL(dnnl_stream_create(&d->stream, d->eng, dnnl_stream_default_flags));
	DNNL(dnnl_memory_desc_create_with_tag(&amd, 2, ad, in, dnnl_ab));
	/* weights dims (K, N): stored [N][K] (ba) but for f32's [K][N] */
	DNNL(dnnl_memory_desc_create_with_tag(&bmd, 2, bd, in,
					      t == F32 ? dnnl_ab : dnnl_ba));
	DNNL(dnnl_memory_desc_create_with_tag(&cmd, 2, cd, out, dnnl_ab));
	dnnl_primitive_desc_t pd;
	DNNL(dnnl_matmul_primitive_desc_create(&pd, d->eng, amd, bmd, NULL, cmd,
					       NULL));
	DNNL(dnnl_primitive_create(&d->prim, pd));
	DNNL(dnnl_primitive_desc_destroy(pd));
	DNNL(dnnl_memory_create(&d->a, amd, d->eng, a));
	DNNL(dnnl_memory_create(&d->b, bmd, d->eng, b));
	DNNL(dnnl_memory_create(&d->c, cmd, d->eng, c));
	dnnl_memory_desc_destroy(amd);
	dnnl_memory_desc_destroy(bmd);
	dnnl_memory_desc_destroy(cmd);
}

static void
dnnl_run(Dnnl *d)
{
	dnnl_exec_arg_t args[3] = { { DNNL_ARG_SRC, d->a },
				    { DNNL_ARG_WEIGHTS, d->b },
				    { DNNL_ARG_DST, d->c } };
	DNNL(dnnl_primitive_execute(d->prim, d->stream, 3, args));
	DNNL(dnnl_stream_wait(d->stream));
}

static void
dnnl_free(Dnnl *d)
{
	dnnl_memory_destroy(d->a);
	dnnl_memory_destroy(d->b);
	dnnl_memory_destroy(d->c);
	dnnl_primitive_destroy(d->prim);
	dnnl_stream_destroy(d->stream);
	dnnl_engine_destroy(d->eng);
}

static void
tilec_run(Entry f, int m, int n, int k, void *a, void *b, void *c)
{
	void *args[6] = { &m, &n, &k, &a, &b, &c };
	f(args);
}

static size_t
size_of(enum Type t)
{
	return t == F32 ? 4 : t == BF16 ? 2 : 1;
}

/* tilec against oneDNN on one shape: 0 if they agree. */
static int
check(enum Type t, Entry f, int m, int n, int k)
{
	size_t es = size_of(t);
	void *a = malloc((size_t)m * k * es), *b = malloc((size_t)n * k * es);
	void *c1 = malloc((size_t)m * n * 4), *c2 = malloc((size_t)m * n * 4);
	fill(t, a, (size_t)m * k);
	fill(t, b, (size_t)n * k);
	memset(c1, 0xab, (size_t)m * n * 4);
	memset(c2, 0xcd, (size_t)m * n * 4);
	tilec_run(f, m, n, k, a, b, c1);
	Dnnl d;
	dnnl_setup(&d, t, m, n, k, a, b, c2);
	dnnl_run(&d);
	dnnl_free(&d);
	int bad = 0;
	double big = 0;
	for (size_t i = 0; t != I8 && i < (size_t)m * n; i++)
		big = fmax(big, fabs(((float *)c2)[i]));
	for (size_t i = 0; i < (size_t)m * n && !bad; i++) {
		if (t == I8) {
			int x = ((int *)c1)[i], y = ((int *)c2)[i];
			bad = x != y;
			if (bad)
				fprintf(stderr, "CHECK FAILED: C[%zu][%zu] = %d, "
					"oneDNN %d\n", i / n, i % n, x, y);
		} else {
			float x = ((float *)c1)[i], y = ((float *)c2)[i];
			bad = !(fabs(x - y) <= 1e-3 * big);
			if (bad)
				fprintf(stderr, "CHECK FAILED: C[%zu][%zu] = %g, "
					"oneDNN %g\n", i / n, i % n, x, y);
		}
	}
	free(a);
	free(b);
	free(c1);
	free(c2);
	return bad;
}

static int
cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

int
main(int argc, char **argv)
{
	if (argc != 7) {
		fprintf(stderr, "usage: onednn_gemm f32|bf16|i8 KERNEL.so ENTRY "
			"M N K\n");
		return 2;
	}
	enum Type t = strcmp(argv[1], "f32") == 0 ? F32 :
		      strcmp(argv[1], "bf16") == 0 ? BF16 : I8;
	void *so = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
	if (!so) {
		fprintf(stderr, "onednn_gemm: %s\n", dlerror());
		return 2;
	}
	Entry f = (Entry)(uintptr_t)dlsym(so, argv[3]);
	if (!f) {
		fprintf(stderr, "onednn_gemm: no %s in %s\n", argv[3], argv[2]);
		return 2;
	}
	/* AMX kernels need the tile state, which Linux grants on request
	 * (arch_prctl ARCH_REQ_XCOMP_PERM, XTILEDATA), as tilec's runtime
	 * asks before it loads one; elsewhere the request fails, harmlessly. */
	(void)syscall(SYS_arch_prctl, 0x1023, 18);
	int m = atoi(argv[4]), n = atoi(argv[5]), k = atoi(argv[6]);
	if (check(t, f, m > 3 ? m - 3 : m, n > 5 ? n - 5 : n,
		  k > 7 ? k - 7 : k))
		return 1;
	size_t es = size_of(t);
	void *a = malloc((size_t)m * k * es), *b = malloc((size_t)n * k * es);
	void *c = malloc((size_t)m * n * 4);
	fill(t, a, (size_t)m * k);
	fill(t, b, (size_t)n * k);
	memset(c, 0, (size_t)m * n * 4);
	Dnnl d;
	dnnl_setup(&d, t, m, n, k, a, b, c);
	const char *r = getenv("TILEC_BENCH_REPEATS");
	int reps = r ? atoi(r) : 7;
	if (reps < 1 || reps > 1000)
		reps = 7;
	double *ts = calloc((size_t)reps, sizeof *ts);
	double *td = calloc((size_t)reps, sizeof *td);
	for (int i = 0; i < 2; i++) {
		tilec_run(f, m, n, k, a, b, c);
		dnnl_run(&d);
	}
	for (int i = 0; i < reps; i++) {
		pause_briefly();
		double t0 = now();
		tilec_run(f, m, n, k, a, b, c);
		ts[i] = now() - t0;
		pause_briefly();
		t0 = now();
		dnnl_run(&d);
		td[i] = now() - t0;
	}
	qsort(ts, (size_t)reps, sizeof *ts, cmp);
	qsort(td, (size_t)reps, sizeof *td, cmp);
	double flop = 2.0 * m * n * k / 1e9;
	double gt = flop / ts[reps / 2], gd = flop / td[reps / 2];
	printf("%s %dx%dx%d threads %d: tilec %.1f %s, oneDNN %.1f, ratio %.2f\n",
	       argv[1], m, n, k, omp_get_max_threads(), gt,
	       t == I8 ? "GOP/s" : "GFLOP/s", gd, gt / gd);
	dnnl_free(&d);
	free(a);
	free(b);
	free(c);
	free(ts);
	free(td);
	return 0;
}
