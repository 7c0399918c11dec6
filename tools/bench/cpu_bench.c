/*
 * cpu_bench.c - time tilec's OpenMP kernels against a baseline in one run.
 *
 * Linked with the C that `tilec -t openmp --standalone` generates for
 * samples/gemm_f32.c, samples/softmax.c, an fp32 copy of samples/rmsnorm.c
 * and samples/flash_attention.c (tools/bench_cpu.sh builds all of it), and
 * with OpenBLAS.  Each mode prints one table row:
 *
 *   cpu_bench gemm N              fp32 N^3 GEMM vs OpenBLAS sgemm (GFLOP/s)
 *   cpu_bench softmax M N         vs a parallel row copy (GB/s moved)
 *   cpu_bench rmsnorm M N         likewise
 *   cpu_bench attention B S H     fp16 flash attention (HEAD_DIM 128) vs a
 *                                 naive parallel C loop nest (GFLOP/s)
 *   cpu_bench peak                the FMA throughput of all threads: the
 *                                 compute floor (GFLOP/s)
 *
 * Method: random inputs in [-1, 1); both sides warm up twice, then run
 * alternately REPEATS times (env TILEC_BENCH_REPEATS, default 9), with a
 * 0.1 s pause after each run; the figure is the median.  Each row also checks tilec's result against the
 * baseline's and prints the largest relative difference, so a fast wrong
 * kernel cannot hide.  Threads come from OMP_NUM_THREADS and
 * OPENBLAS_NUM_THREADS.
 */
#include "cpu/tilec_cpu.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The generated kernels' entry points: args[i] points to parameter i. */
void tilec_entry_gemm_f32(void **args);
void tilec_entry_softmax(void **args);
void tilec_entry_rmsnorm(void **args);
void tilec_entry_flash_attention(void **args);

/* OpenBLAS's CBLAS, declared here so no include path is needed. */
enum { CBLAS_ROW_MAJOR = 101, CBLAS_NO_TRANS = 111 };
void cblas_sgemm(int layout, int trans_a, int trans_b, int m, int n, int k,
		 float alpha, const float *a, int lda, const float *b, int ldb,
		 float beta, float *c, int ldc);

static double
now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void *
xmalloc(size_t n)
{
	void *p = aligned_alloc(64, (n + 63) / 64 * 64);
	if (!p) {
		fprintf(stderr, "cpu_bench: out of memory\n");
		exit(2);
	}
	return p;
}

/* Uniform in [-1, 1), from a fixed seed. */
static void
fill_random(float *x, size_t n, unsigned seed)
{
	unsigned long long s = 0x9e3779b97f4a7c15ULL * (seed + 1);
	for (size_t i = 0; i < n; i++) {
		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		x[i] = (float)((s >> 40) * (1.0 / (1 << 24)) * 2.0 - 1.0);
	}
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double
median(double *t, int n)
{
	qsort(t, (size_t)n, sizeof *t, cmp_double);
	return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* Largest |a - b| over the largest |b|: the difference relative to the
 * result's scale. */
static double
rel_diff(const float *a, const float *b, size_t n)
{
	double diff = 0, scale = 0;
	for (size_t i = 0; i < n; i++) {
		double d = fabs((double)a[i] - b[i]);
		diff = d > diff || d != d ? d : diff;
		scale = fabs((double)b[i]) > scale ? fabs((double)b[i]) : scale;
	}
	return scale > 0 ? diff / scale : diff;
}

typedef void (*RunFn)(void *ctx);

/* Median seconds of `tilec` and `base`, run alternately after a warm-up. */
static void
time_pair(RunFn tilec, RunFn base, void *ctx, double *t_tilec, double *t_base)
{
	const char *env = getenv("TILEC_BENCH_REPEATS");
	int reps = env ? atoi(env) : 9;
	if (reps < 1 || reps > 1000)
		reps = 9;
	double *a = xmalloc(sizeof(double) * (size_t)reps);
	double *b = xmalloc(sizeof(double) * (size_t)reps);
	for (int i = 0; i < 2; i++) {
		tilec(ctx);
		base(ctx);
	}
	/* A pause after each run lets the other side's worker threads stop
	 * spinning (OpenBLAS's spin for up to ~2^28 cycles after a call) so
	 * they do not steal the cores being timed. */
	const struct timespec pause = { 0, 100 * 1000 * 1000 };
	for (int i = 0; i < reps; i++) {
		double t0 = now();
		tilec(ctx);
		a[i] = now() - t0;
		nanosleep(&pause, NULL);
		t0 = now();
		base(ctx);
		b[i] = now() - t0;
		nanosleep(&pause, NULL);
	}
	*t_tilec = median(a, reps);
	*t_base = median(b, reps);
	free(a);
	free(b);
}

static void
row(const char *kernel, const char *shape, double tilec, const char *base_name,
    double base, const char *unit, double diff)
{
	printf("%-16s %-20s %8.1f %-7s %-9s %8.1f %-7s %6.2f   %.1e\n", kernel,
	       shape, tilec, unit, base_name, base, unit, tilec / base, diff);
}

/* --- GEMM ------------------------------------------------------------------ */

typedef struct Gemm {
	int n;            /* M = N = K */
	float *a, *b;     /* inputs, n x n */
	float *c, *ref;   /* tilec's and OpenBLAS's results */
} Gemm;

static void
gemm_tilec(void *ctx)
{
	Gemm *g = ctx;
	void *args[] = { &g->n, &g->n, &g->n, &g->a, &g->b, &g->c };
	tilec_entry_gemm_f32(args);
}

static void
gemm_blas(void *ctx)
{
	Gemm *g = ctx;
	cblas_sgemm(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_NO_TRANS, g->n, g->n,
		    g->n, 1.0f, g->a, g->n, g->b, g->n, 0.0f, g->ref, g->n);
}

static void
bench_gemm(int n)
{
	size_t count = (size_t)n * (size_t)n;
	Gemm g = { n, xmalloc(count * 4), xmalloc(count * 4), xmalloc(count * 4),
		   xmalloc(count * 4) };
	fill_random(g.a, count, 1);
	fill_random(g.b, count, 2);
	double tt, tb;
	time_pair(gemm_tilec, gemm_blas, &g, &tt, &tb);
	double flop = 2.0 * n * n * (double)n;
	char shape[64];
	snprintf(shape, sizeof shape, "%d^3 f32", n);
	row("gemm_f32", shape, flop / tt * 1e-9, "OpenBLAS", flop / tb * 1e-9,
	    "GFLOP/s", rel_diff(g.c, g.ref, count));
	free(g.a);
	free(g.b);
	free(g.c);
	free(g.ref);
}

/* --- Row kernels: softmax, RMSNorm ------------------------------------------ */

typedef struct Rows {
	int m, n;         /* rows, columns */
	float eps;        /* RMSNorm's epsilon */
	float *x, *w;     /* inputs */
	float *y, *copy;  /* tilec's output; the copy's destination */
	bool rms;         /* RMSNorm, else softmax */
} Rows;

static void
rows_tilec(void *ctx)
{
	Rows *r = ctx;
	if (r->rms) {
		void *args[] = { &r->m, &r->n, &r->eps, &r->x, &r->w, &r->y };
		tilec_entry_rmsnorm(args);
	} else {
		void *args[] = { &r->m, &r->n, &r->x, &r->y };
		tilec_entry_softmax(args);
	}
}

/* The memory floor: each row copied once, read and written, in parallel. */
static void
rows_copy(void *ctx)
{
	Rows *r = ctx;
	size_t n = (size_t)r->n;
#pragma omp parallel for schedule(static)
	for (int i = 0; i < r->m; i++)
		memcpy(r->copy + (size_t)i * n, r->x + (size_t)i * n,
		       n * sizeof(float));
}

/* Reference rows in double, for the check (every 97th row). */
static double
rows_check(const Rows *r)
{
	double worst = 0;
	double *ref = malloc(sizeof(double) * (size_t)r->n);
	for (int i = 0; i < r->m; i += 97) {
		const float *x = r->x + (size_t)i * r->n;
		double acc = 0, mx = -INFINITY, scale = 0;
		for (int j = 0; j < r->n; j++)
			mx = x[j] > mx ? x[j] : mx;
		for (int j = 0; j < r->n; j++)
			acc += r->rms ? (double)x[j] * x[j] : exp(x[j] - mx);
		for (int j = 0; j < r->n; j++) {
			ref[j] = r->rms ? x[j] / sqrt(acc / r->n + r->eps) * r->w[j]
					: exp(x[j] - mx) / acc;
			scale = fabs(ref[j]) > scale ? fabs(ref[j]) : scale;
		}
		for (int j = 0; j < r->n; j++) {
			double d = fabs(r->y[(size_t)i * r->n + j] - ref[j]) / scale;
			worst = d > worst || d != d ? d : worst;
		}
	}
	free(ref);
	return worst;
}

static void
bench_rows(bool rms, int m, int n)
{
	size_t count = (size_t)m * (size_t)n;
	Rows r = { m, n, 1e-5f, xmalloc(count * 4), xmalloc((size_t)n * 4),
		   xmalloc(count * 4), xmalloc(count * 4), rms };
	fill_random(r.x, count, 3);
	fill_random(r.w, (size_t)n, 4);
	double tt, tb;
	time_pair(rows_tilec, rows_copy, &r, &tt, &tb);
	double bytes = 2.0 * (double)count * sizeof(float);
	char shape[64];
	snprintf(shape, sizeof shape, "%dx%d f32", m, n);
	row(rms ? "rmsnorm" : "softmax", shape, bytes / tt * 1e-9, "copy",
	    bytes / tb * 1e-9, "GB/s", rows_check(&r));
	free(r.x);
	free(r.w);
	free(r.y);
	free(r.copy);
}

/* --- Attention ---------------------------------------------------------------- */

enum { HEAD_DIM = 128 };

typedef struct Attention {
	int b, s, h;                 /* batch, sequence, heads */
	tilec_f16 *q, *k, *v;        /* [b][s][h][HEAD_DIM] */
	tilec_f16 *o, *ref;          /* tilec's and the loop nest's output */
} Attention;

static void
attention_tilec(void *ctx)
{
	Attention *a = ctx;
	void *args[] = { &a->b, &a->s, &a->h, &a->q, &a->k, &a->v, &a->o };
	tilec_entry_flash_attention(args);
}

/* softmax(q k^T / sqrt(d)) v one query at a time, as written in a
 * textbook: scores for every key, then the weighted sum of values. */
static void
attention_naive(void *ctx)
{
	Attention *a = ctx;
	int S = a->s, H = a->h;
	float scale = 1.0f / sqrtf((float)HEAD_DIM);
#pragma omp parallel for collapse(3) schedule(static)
	for (int b = 0; b < a->b; b++)
		for (int h = 0; h < H; h++)
			for (int i = 0; i < S; i++) {
				float *p = malloc(sizeof(float) * (size_t)S);
				float q[HEAD_DIM], o[HEAD_DIM] = { 0 };
				size_t qi = (((size_t)b * S + i) * H + h) * HEAD_DIM;
				for (int d = 0; d < HEAD_DIM; d++)
					q[d] = tilec_f16_to_f32(a->q[qi + d]);
				float mx = -INFINITY, sum = 0;
				for (int j = 0; j < S; j++) {
					size_t kj = (((size_t)b * S + j) * H + h) * HEAD_DIM;
					float dot = 0;
					for (int d = 0; d < HEAD_DIM; d++)
						dot += q[d] * tilec_f16_to_f32(a->k[kj + d]);
					p[j] = dot * scale;
					mx = p[j] > mx ? p[j] : mx;
				}
				for (int j = 0; j < S; j++) {
					p[j] = expf(p[j] - mx);
					sum += p[j];
				}
				for (int j = 0; j < S; j++) {
					size_t vj = (((size_t)b * S + j) * H + h) * HEAD_DIM;
					for (int d = 0; d < HEAD_DIM; d++)
						o[d] += p[j] * tilec_f16_to_f32(a->v[vj + d]);
				}
				for (int d = 0; d < HEAD_DIM; d++)
					a->ref[qi + d] = tilec_f32_to_f16(o[d] / sum);
				free(p);
			}
}

static void
bench_attention(int b, int s, int h)
{
	size_t count = (size_t)b * s * h * HEAD_DIM;
	Attention a = { .b = b, .s = s, .h = h };
	tilec_f16 **bufs[] = { &a.q, &a.k, &a.v, &a.o, &a.ref };
	float *tmp = xmalloc(count * sizeof(float));
	for (int i = 0; i < 5; i++) {
		*bufs[i] = xmalloc(count * sizeof(tilec_f16));
		fill_random(tmp, count, 5 + (unsigned)i);
		for (size_t j = 0; j < count; j++)
			(*bufs[i])[j] = tilec_f32_to_f16(tmp[j]);
	}
	double tt, tb;
	time_pair(attention_tilec, attention_naive, &a, &tt, &tb);
	float *o = tmp, *ref = xmalloc(count * sizeof(float));
	for (size_t j = 0; j < count; j++) {
		o[j] = tilec_f16_to_f32(a.o[j]);
		ref[j] = tilec_f16_to_f32(a.ref[j]);
	}
	double flop = 4.0 * b * h * (double)s * s * HEAD_DIM;
	char shape[64];
	snprintf(shape, sizeof shape, "%dx%dx%dx%d f16", b, s, h, HEAD_DIM);
	row("flash_attention", shape, flop / tt * 1e-9, "C loops",
	    flop / tb * 1e-9, "GFLOP/s", rel_diff(o, ref, count));
	for (int i = 0; i < 5; i++)
		free(*bufs[i]);
	free(tmp);
	free(ref);
}

/* --- Peak ---------------------------------------------------------------------- */

/* 12 independent chains of FMAs per thread (enough to cover the FMA
 * latency), counted as 2 FLOP per lane, as wide as the host's vectors: a
 * 64-byte vector on an AVX2 host is split and spilled, a tenth of its
 * peak. */
#ifdef __AVX512F__
#define PEAK_LANES 16
#else
#define PEAK_LANES 8
#endif
typedef float PeakVec __attribute__((vector_size(PEAK_LANES * 4)));

static void
bench_peak(void)
{
	const long iters = 100000000;
	double t0 = now(), sink = 0;
	int threads = 1;
#pragma omp parallel reduction(+ : sink)
	{
		PeakVec acc[12], mul, add;
		for (int i = 0; i < PEAK_LANES; i++) {
			mul[i] = 0.9999f;
			add[i] = 1e-4f;
		}
		for (int i = 0; i < 12; i++)
			acc[i] = mul * (float)i;
		for (long n = 0; n < iters; n++)
#pragma GCC unroll 12
			for (int i = 0; i < 12; i++)
				acc[i] = acc[i] * mul + add;
		for (int i = 0; i < 12; i++)
			sink += acc[i][0];
#pragma omp master
		threads = omp_get_num_threads();
	}
	double t = now() - t0;
	printf("peak: %.1f GFLOP/s fp32 FMA on %d threads (%.1f per thread)%s\n",
	       threads * iters * 12.0 * 2 * PEAK_LANES / t * 1e-9, threads,
	       iters * 12.0 * 2 * PEAK_LANES / t * 1e-9, sink == 0 ? " " : "");
}

int
main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "header") == 0) {
		printf("%-16s %-20s %16s %-9s %16s %6s   %s\n", "kernel", "shape",
		       "tilec", "baseline", "", "ratio", "max rel diff");
	} else if (argc == 2 && strcmp(argv[1], "peak") == 0) {
		bench_peak();
	} else if (argc == 3 && strcmp(argv[1], "gemm") == 0) {
		bench_gemm(atoi(argv[2]));
	} else if (argc == 4 && strcmp(argv[1], "softmax") == 0) {
		bench_rows(false, atoi(argv[2]), atoi(argv[3]));
	} else if (argc == 4 && strcmp(argv[1], "rmsnorm") == 0) {
		bench_rows(true, atoi(argv[2]), atoi(argv[3]));
	} else if (argc == 5 && strcmp(argv[1], "attention") == 0) {
		bench_attention(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
	} else {
		fprintf(stderr, "usage: cpu_bench header | peak | gemm N | "
			"softmax M N | rmsnorm M N | attention B S H\n");
		return 2;
	}
	return 0;
}
