/*
 * gpu_runtime_check.c - check the runtime's CUDA path on a GPU machine
 * that has no translator: compile generated sources through NVRTC, load
 * them, and run a gemm against a CPU reference.
 *
 * Input: standalone .cu files made elsewhere by
 * `tilec FILE -t cuda --standalone` (they carry the helpers inline, so
 * they need nothing of tilec).  For each, it reports the cold compile
 * time (a fresh, private cache directory) and the warm one (the same
 * compile again, a cache hit), and loads every `extern "C" __global__`
 * kernel found in it.  With --gemm FILE it runs FILE's kernel gemm(M, N,
 * K, A, B, C) (f16, row-major, fp32 accumulation, the signature and grid
 * of samples/gemm.c) on random inputs over ragged shapes, with C poisoned
 * first, and compares with a double-precision CPU product, printing the
 * largest relative error; with --bench it times one shape with device
 * events.  The launch numbers (BLOCK_M, BLOCK_N, threads, shared memory)
 * come from the file's header comment unless given on the command line,
 * where they are the values `tilec FILE -t cuda --emit=launch` prints.
 * A file X.cu with X.launch.json beside it whose kernels list "aligned"
 * tensors (docs/launch.md) is compiled twice: with that document, the
 * build for aligned launches, then without, the general build.
 * With --manifest DOC (that launch document) the gemm is compiled with it
 * and every check runs through tilec_launch_checked instead: the runtime
 * computes the grid from the document and checks the tensors, and a
 * launch with A and B swapped must be refused, C left untouched.
 *
 * Uses only the public runtime API (tilec_runtime.h).  Exit status: 0 all
 * good, 1 a result was wrong, 2 something could not run.
 */
#include "tilec_runtime.h"
#include "runtime_int.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_FILES 64
#define MAX_SHAPES 16
#define MAX_KERNELS 16

/* The command line. */
typedef struct Args {
	int device;                  /* --device, or TILEC_DEVICE_NONE */
	const char *arch;            /* --arch, or NULL for the device's */
	const char *files[MAX_FILES]; /* sources to compile */
	int nfiles;
	const char *gemm;            /* --gemm FILE, or NULL */
	const char *manifest;        /* --manifest DOC for the gemm, or NULL */
	const char *kernel;          /* --kernel: gemm's name */
	long long shapes[MAX_SHAPES][3]; /* --shape M N K */
	int nshapes;
	long long bench[3];          /* --bench M N K; M = 0: none */
	long long block_m, block_n;  /* --block-m/-n, 0: from the file */
	long long threads, smem;     /* --threads, --smem; -1: from the file */
	double tol;                  /* --tol, or < 0: the manifest's */
} Args;

/* Launch numbers of the gemm. */
typedef struct GemmLaunch {
	long long block_m, block_n;  /* the tile: grid = N/BN x M/BM */
	long long threads;           /* threads per block */
	long long smem;              /* dynamic shared memory bytes */
} GemmLaunch;

static void
usage(FILE *f)
{
	fputs("usage: gpu_runtime_check [options] FILE.cu ...\n"
	      "\n"
	      "Compile each generated CUDA source through the tilec runtime\n"
	      "(NVRTC), cold and from the cache, and load its kernels; with\n"
	      "--gemm, run that file's gemm and check it against the CPU.\n"
	      "\n"
	      "options:\n"
	      "  --device N        CUDA device (default 0); -1 compiles only\n"
	      "  --arch A          NVRTC architecture (default: the device's)\n"
	      "  --gemm FILE.cu    run gemm(M, N, K, A, B, C) from FILE (f16)\n"
	      "  --manifest DOC    the gemm's launch document: launches checked\n"
	      "                    by the runtime (tilec_launch_checked)\n"
	      "  --kernel NAME     the gemm kernel's name (default gemm)\n"
	      "  --shape MxNxK     a shape to check (repeatable; default\n"
	      "                    200x130x70 1x1x1 65x1x129 256x256x64\n"
	      "                    1000x1000x1000)\n"
	      "  --bench MxNxK     time the gemm at this shape\n"
	      "  --block-m N, --block-n N, --threads N, --smem BYTES\n"
	      "                    launch numbers (default: the file's header)\n"
	      "  --tol T           relative tolerance (default: the manifest's\n"
	      "                    for an f16 output against an independent\n"
	      "                    reference, else 0.01)\n",
	      f);
}

/* --- Small helpers --------------------------------------------------------------- */

/* The whole file, NUL-terminated (malloc'd), or NULL with errno set. */
static char *
read_file(const char *path, size_t *len)
{
	char *data;
	return tilec_rt_read_file(path, &data, len) == TILEC_OK ? data : NULL;
}

static bool
parse_shape(const char *s, long long out[3])
{
	char tail;
	return sscanf(s, "%lldx%lldx%lld%c", &out[0], &out[1], &out[2],
		      &tail) == 3 &&
	       out[0] >= 1 && out[1] >= 1 && out[2] >= 1;
}

static bool
parse_count(const char *s, long long *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < 0)
		return false;
	*out = v;
	return true;
}

/* Returns -1 to go on, else an exit status. */
static int
parse_args(Args *a, int argc, char **argv)
{
	a->kernel = "gemm";
	a->threads = a->smem = -1;
	a->tol = -1;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		long long n;
		bool ok = true;
		if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
			usage(stdout);
			return 0;
		} else if (arg[0] != '-') {
			if (a->nfiles == MAX_FILES) {
				fprintf(stderr, "more than %d files\n", MAX_FILES);
				return 2;
			}
			a->files[a->nfiles++] = arg;
			continue;
		} else if (!v) {
			ok = false;
		} else if (strcmp(arg, "--device") == 0) {
			char *end;
			a->device = (int)strtol(v, &end, 10);
			ok = *end == '\0' && end != v;
		} else if (strcmp(arg, "--arch") == 0) {
			a->arch = v;
		} else if (strcmp(arg, "--gemm") == 0) {
			a->gemm = v;
		} else if (strcmp(arg, "--manifest") == 0) {
			a->manifest = v;
		} else if (strcmp(arg, "--kernel") == 0) {
			a->kernel = v;
		} else if (strcmp(arg, "--shape") == 0) {
			ok = a->nshapes < MAX_SHAPES &&
			     parse_shape(v, a->shapes[a->nshapes]);
			a->nshapes += ok;
		} else if (strcmp(arg, "--bench") == 0) {
			ok = parse_shape(v, a->bench);
		} else if (strcmp(arg, "--block-m") == 0) {
			ok = parse_count(v, &a->block_m) && a->block_m > 0;
		} else if (strcmp(arg, "--block-n") == 0) {
			ok = parse_count(v, &a->block_n) && a->block_n > 0;
		} else if (strcmp(arg, "--threads") == 0) {
			ok = parse_count(v, &n) && n > 0;
			a->threads = n;
		} else if (strcmp(arg, "--smem") == 0) {
			ok = parse_count(v, &a->smem);
		} else if (strcmp(arg, "--tol") == 0) {
			char *end;
			a->tol = strtod(v, &end);
			ok = *end == '\0' && end != v && a->tol >= 0;
		} else {
			fprintf(stderr, "unknown option '%s'\n", arg);
			usage(stderr);
			return 2;
		}
		if (!ok) {
			fprintf(stderr, "option %s: missing or bad value%s%s\n",
				arg, v ? " " : "", v ? v : "");
			return 2;
		}
		i++;
	}
	if (a->nfiles == 0 && !a->gemm) {
		usage(stderr);
		return 2;
	}
	if (a->nshapes == 0) {
		static const long long defaults[][3] = {
			{ 200, 130, 70 }, { 1, 1, 1 },       { 65, 1, 129 },
			{ 256, 256, 64 }, { 1000, 1000, 1000 },
		};
		for (size_t i = 0; i < sizeof defaults / sizeof *defaults; i++)
			memcpy(a->shapes[a->nshapes++], defaults[i],
			       sizeof defaults[i]);
	}
	return -1;
}

/* The names of the `extern "C" __global__` functions in src. */
static int
kernel_names(const char *src, char names[][128], int max)
{
	int n = 0;
	const char *p = src;
	while (n < max && (p = strstr(p, "extern \"C\" __global__"))) {
		const char *paren = strchr(p, '(');
		/* Skip __launch_bounds__(...) to the name's parenthesis. */
		const char *lb = strstr(p, "__launch_bounds__");
		if (paren && lb && lb < paren)
			paren = strchr(strchr(lb, ')') + 1, '(');
		if (!paren)
			break;
		const char *end = paren;
		while (end > p && (end[-1] == ' ' || end[-1] == '\n'))
			end--;
		const char *start = end;
		while (start > p && (start[-1] == '_' || (start[-1] >= 'a' &&
			start[-1] <= 'z') || (start[-1] >= 'A' &&
			start[-1] <= 'Z') || (start[-1] >= '0' &&
			start[-1] <= '9')))
			start--;
		if (end > start && end - start < 128) {
			memcpy(names[n], start, (size_t)(end - start));
			names[n][end - start] = '\0';
			n++;
		}
		p = paren;
	}
	return n;
}

/* The tolerance the launch document doc gives an f16 output checked
 * against an independent reference (its "tolerance"."library"."f16",
 * docs/launch.md), or -1 if it gives none. */
static double
manifest_tolerance(const char *doc, size_t len)
{
	char err[256];
	TilecJson *j = tilec_rt_json_parse(doc, len, err, sizeof err);
	const TilecJson *ks = j ? tilec_rt_json_get(j, "kernels") : NULL;
	const TilecJson *k = ks && ks->kind == TILEC_JSON_ARRAY && ks->n > 0
				     ? ks->items[0]
				     : NULL;
	const TilecJson *tol = k ? tilec_rt_json_get(k, "tolerance") : NULL;
	const TilecJson *lib = tol ? tilec_rt_json_get(tol, "library") : NULL;
	const TilecJson *f16 = lib ? tilec_rt_json_get(lib, "f16") : NULL;
	double v = f16 && f16->kind == TILEC_JSON_NUMBER ? f16->fvalue : -1;
	tilec_rt_json_free(j);
	return v;
}

/* --- Compiling ---------------------------------------------------------------------- */

static const char *
base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* Compile src cold and warm; load its kernels.  Returns the warm module
 * (owned by the caller) or NULL. */
static tilec_module *
compile_file(tilec_context *ctx, const Args *a, const char *path,
	     const char *manifest, const tilec_device_info *dev)
{
	size_t len;
	char *src = read_file(path, &len);
	if (!src) {
		fprintf(stderr, "%s: cannot read: %s\n", path, strerror(errno));
		return NULL;
	}
	tilec_compile_options o;
	tilec_compile_options_init(&o);
	o.name = base_name(path);
	o.arch = a->arch;
	o.manifest = manifest;
	tilec_module *cold = tilec_compile(ctx, src, len, &o);
	if (!cold) {
		fprintf(stderr, "%s: %s\n", path, tilec_error(ctx));
		free(src);
		return NULL;
	}
	tilec_module_info ci, wi;
	tilec_module_get_info(cold, &ci);
	tilec_module_free(cold);
	tilec_module *warm = tilec_compile(ctx, src, len, &o);
	if (!warm) {
		fprintf(stderr, "%s: %s\n", path, tilec_error(ctx));
		free(src);
		return NULL;
	}
	tilec_module_get_info(warm, &wi);
	long long cubin = -1;
	FILE *f = fopen(wi.path, "rb");
	if (f && fseek(f, 0, SEEK_END) == 0)
		cubin = ftell(f);
	if (f)
		fclose(f);
	printf("%-28s %-7s %s %8.1f ms (NVRTC %.1f ms), warm %6.2f ms%s, "
	       "cubin %lld bytes\n",
	       base_name(path), a->arch ? a->arch : dev->arch,
	       ci.from_cache ? "cached" : "cold", ci.total_seconds * 1e3,
	       ci.compile_seconds * 1e3, wi.total_seconds * 1e3,
	       wi.from_cache ? " (cache hit)" : " (NOT a cache hit)", cubin);
	bool ok = wi.from_cache;
	char names[MAX_KERNELS][128];
	int n = dev->compile_only ? 0 : kernel_names(src, names, MAX_KERNELS);
	for (int i = 0; i < n; i++) {
		tilec_kernel *k = tilec_module_kernel(warm, names[i]);
		printf("  kernel %-20s %s\n", names[i],
		       k ? "loaded" : tilec_error(ctx));
		ok = ok && k;
	}
	free(src);
	if (!ok) {
		tilec_module_free(warm);
		return NULL;
	}
	return warm;
}

/* --- The gemm ----------------------------------------------------------------------- */

/* Tunables and launch numbers from the generated header comment:
 *   // Tunables: BLOCK_M=128 BLOCK_N=128 BLOCK_K=32 STAGES=3.
 *   // 128 threads; 56832 bytes of shared memory. */
static void
header_launch(const char *src, GemmLaunch *g)
{
	const char *t = strstr(src, "// Tunables:");
	const char *eol = t ? strchr(t, '\n') : NULL;
	const char *m = t ? strstr(t, "BLOCK_M=") : NULL;
	const char *n = t ? strstr(t, "BLOCK_N=") : NULL;
	if (m && (!eol || m < eol))
		g->block_m = atoll(m + 8);
	if (n && (!eol || n < eol))
		g->block_n = atoll(n + 8);
	for (const char *p = src; (p = strstr(p, "// ")); p += 3) {
		long long th, sm;
		if (sscanf(p, "// %lld threads; %lld bytes of shared memory",
			   &th, &sm) == 2) {
			g->threads = th;
			g->smem = sm;
			break;
		}
	}
}

/* splitmix64 */
static uint64_t
next_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* f16 values in [-1, -1/16] u [1/16, 1]: never zero. */
static void
fill_f16(uint16_t *x, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t r = next_random(&seed);
		double v = 0.0625 + 0.9375 * (double)(r >> 11) * 0x1p-53;
		x[i] = tilec_f16_from_double((r >> 63) ? -v : v);
	}
}

/* Device copies of A, B, C for one shape. */
typedef struct GemmBuffers {
	void *a, *b, *c;  /* device pointers */
	int m, n, k;      /* the shape, as the kernel takes it */
	void *args[6];    /* kernelParams */
} GemmBuffers;

static void
gemm_free(tilec_context *ctx, GemmBuffers *g)
{
	tilec_free(ctx, g->a);
	tilec_free(ctx, g->b);
	tilec_free(ctx, g->c);
}

static bool
gemm_setup(tilec_context *ctx, GemmBuffers *g, const long long s[3],
	   const uint16_t *a, const uint16_t *b, const uint16_t *c)
{
	memset(g, 0, sizeof *g);
	g->m = (int)s[0];
	g->n = (int)s[1];
	g->k = (int)s[2];
	size_t na = (size_t)(s[0] * s[2]) * 2, nb = (size_t)(s[2] * s[1]) * 2,
	       nc = (size_t)(s[0] * s[1]) * 2;
	if (tilec_alloc(ctx, na, &g->a) != TILEC_OK ||
	    tilec_alloc(ctx, nb, &g->b) != TILEC_OK ||
	    tilec_alloc(ctx, nc, &g->c) != TILEC_OK ||
	    tilec_memcpy_h2d(ctx, g->a, a, na) != TILEC_OK ||
	    tilec_memcpy_h2d(ctx, g->b, b, nb) != TILEC_OK ||
	    tilec_memcpy_h2d(ctx, g->c, c, nc) != TILEC_OK) {
		fprintf(stderr, "%s\n", tilec_error(ctx));
		gemm_free(ctx, g);
		return false;
	}
	void *args[6] = { &g->m, &g->n, &g->k, &g->a, &g->b, &g->c };
	memcpy(g->args, args, sizeof args);
	return true;
}

static tilec_launch_config
gemm_config(const GemmLaunch *l, const long long s[3])
{
	tilec_launch_config cfg;
	memset(&cfg, 0, sizeof cfg);
	cfg.grid[0] = (unsigned)((s[1] + l->block_n - 1) / l->block_n);
	cfg.grid[1] = (unsigned)((s[0] + l->block_m - 1) / l->block_m);
	cfg.grid[2] = 1;
	cfg.block[0] = (unsigned)l->threads;
	cfg.block[1] = cfg.block[2] = 1;
	cfg.shared_bytes = (size_t)l->smem;
	return cfg;
}

/* Run one shape and compare; 0 ok, 1 wrong, 2 could not run. */
static int
gemm_check(tilec_context *ctx, tilec_kernel *k, const GemmLaunch *l,
	   const long long s[3], double tol, bool checked)
{
	size_t m = (size_t)s[0], n = (size_t)s[1], kk = (size_t)s[2];
	uint16_t *a = malloc(m * kk * 2), *b = malloc(kk * n * 2),
		 *c = malloc(m * n * 2);
	double *ref = calloc(m * n, sizeof *ref);
	int status = 2;
	GemmBuffers g;
	if (!a || !b || !c || !ref) {
		fprintf(stderr, "out of memory\n");
		goto done;
	}
	fill_f16(a, m * kk, 1 + m);
	fill_f16(b, kk * n, 2 + n);
	for (size_t i = 0; i < m * n; i++)
		c[i] = 0x7eab; /* a NaN the kernel must overwrite */
	if (!gemm_setup(ctx, &g, s, a, b, c))
		goto done;
	tilec_launch_config cfg = gemm_config(l, s);
	double t0 = tilec_now();
	tilec_status st;
	if (checked) {
		/* The runtime's own grid and checks; first a launch with A
		 * and B swapped, which it must refuse. */
		int64_t sa[2] = { s[0], s[2] }, sb[2] = { s[2], s[1] },
			sc[2] = { s[0], s[1] };
		tilec_arg args[3] = {
			tilec_arg_tensor("A", g.a, TILEC_F16, 2, sa, NULL),
			tilec_arg_tensor("B", g.b, TILEC_F16, 2, sb, NULL),
			tilec_arg_tensor("C", g.c, TILEC_F16, 2, sc, NULL),
		};
		tilec_arg swapped[3] = { args[1], args[0], args[2] };
		swapped[0].name = swapped[1].name = NULL;
		swapped[2].name = NULL;
		if (s[0] != s[2] &&
		    tilec_launch_checked(k, swapped, 3, NULL) != TILEC_ERR_INVALID) {
			printf("  gemm %lldx%lldx%lld: a launch with A and B "
			       "swapped was not refused  FAIL\n", s[0], s[1],
			       s[2]);
			gemm_free(ctx, &g);
			status = 1;
			goto done;
		}
		t0 = tilec_now();
		st = tilec_launch_checked(k, args, 3, NULL);
	} else {
		st = tilec_launch(k, g.args, &cfg);
	}
	if (st != TILEC_OK || tilec_synchronize(ctx) != TILEC_OK ||
	    tilec_memcpy_d2h(ctx, c, g.c, m * n * 2) != TILEC_OK) {
		fprintf(stderr, "%s\n", tilec_error(ctx));
		gemm_free(ctx, &g);
		goto done;
	}
	double run_ms = (tilec_now() - t0) * 1e3;
	gemm_free(ctx, &g);

	/* B decoded once: the product's inner loop is then plain doubles. */
	double *bd = malloc(kk * n * sizeof *bd);
	if (!bd) {
		fprintf(stderr, "out of memory\n");
		goto done;
	}
	for (size_t i = 0; i < kk * n; i++)
		bd[i] = tilec_f16_to_double(b[i]);
	for (size_t i = 0; i < m; i++)
		for (size_t p = 0; p < kk; p++) {
			double x = tilec_f16_to_double(a[i * kk + p]);
			const double *brow = bd + p * n;
			double *crow = ref + i * n;
			for (size_t j = 0; j < n; j++)
				crow[j] += x * brow[j];
		}
	free(bd);
	double max_err = 0, max_ref = 0;
	size_t unwritten = 0, worst = 0;
	for (size_t i = 0; i < m * n; i++) {
		if (c[i] == 0x7eab) {
			unwritten++;
			continue;
		}
		double got = tilec_f16_to_double(c[i]);
		double err = isfinite(got) ? fabs(got - ref[i]) : INFINITY;
		if (err > max_err) {
			max_err = err;
			worst = i;
		}
		if (fabs(ref[i]) > max_ref)
			max_ref = fabs(ref[i]);
	}
	double rel = max_ref > 0 ? max_err / max_ref : max_err;
	bool ok = rel <= tol && unwritten == 0;
	if (checked)
		printf("  gemm %5lldx%5lldx%5lld  checked launch%s  max rel "
		       "err %.2e (tol %g)", s[0], s[1], s[2],
		       s[0] != s[2] ? ", swapped operands refused" : "", rel,
		       tol);
	else
		printf("  gemm %5lldx%5lldx%5lld  grid %ux%u, %u threads, %zu B "
		       "shared  max rel err %.2e (tol %g)",
		       s[0], s[1], s[2], cfg.grid[0], cfg.grid[1], cfg.block[0],
		       cfg.shared_bytes, rel, tol);
	if (rel > tol)
		printf(", worst C[%zu][%zu]: got %g, want %g", worst / n,
		       worst % n, tilec_f16_to_double(c[worst]), ref[worst]);
	if (unwritten)
		printf(", %zu unwritten", unwritten);
	printf(", %.2f ms  %s\n", run_ms, ok ? "ok" : "FAIL");
	status = ok ? 0 : 1;
done:
	free(a);
	free(b);
	free(c);
	free(ref);
	return status;
}

/* Time one shape with device events. */
static int
gemm_bench(tilec_context *ctx, tilec_kernel *k, const GemmLaunch *l,
	   const long long s[3])
{
	size_t m = (size_t)s[0], n = (size_t)s[1], kk = (size_t)s[2];
	uint16_t *a = malloc(m * kk * 2), *b = malloc(kk * n * 2),
		 *c = calloc(m * n, 2);
	int status = 2;
	GemmBuffers g;
	if (!a || !b || !c) {
		fprintf(stderr, "out of memory\n");
	} else {
		fill_f16(a, m * kk, 3);
		fill_f16(b, kk * n, 4);
		if (gemm_setup(ctx, &g, s, a, b, c)) {
			tilec_launch_config cfg = gemm_config(l, s);
			void **sets[1] = { g.args };
			tilec_bench_result r;
			if (tilec_bench(k, sets, 1, &cfg, 5, 20, &r) != TILEC_OK) {
				fprintf(stderr, "%s\n", tilec_error(ctx));
			} else {
				double flops = 2.0 * (double)m * (double)n *
					       (double)kk;
				printf("  bench %lldx%lldx%lld: median %.3f ms "
				       "(min %.3f, %d runs, device events), "
				       "%.1f TFLOP/s\n",
				       s[0], s[1], s[2], r.median_s * 1e3,
				       r.min_s * 1e3, r.runs,
				       flops / r.median_s / 1e12);
				status = 0;
			}
			gemm_free(ctx, &g);
		}
	}
	free(a);
	free(b);
	free(c);
	return status;
}

static int
run_gemm(tilec_context *ctx, const Args *a, tilec_module *mod,
	 const char *src)
{
	GemmLaunch l = { 0, 0, -1, -1 };
	header_launch(src, &l);
	if (a->block_m)
		l.block_m = a->block_m;
	if (a->block_n)
		l.block_n = a->block_n;
	if (a->threads > 0)
		l.threads = a->threads;
	if (a->smem >= 0)
		l.smem = a->smem;
	if (l.block_m <= 0 || l.block_n <= 0 || l.threads <= 0 || l.smem < 0) {
		fprintf(stderr, "%s: no launch numbers in its header; give "
			"--block-m, --block-n, --threads and --smem\n",
			a->gemm);
		return 2;
	}
	tilec_kernel *k = tilec_module_kernel(mod, a->kernel);
	if (!k) {
		fprintf(stderr, "%s: %s\n", a->gemm, tilec_error(ctx));
		return 2;
	}
	printf("%s: kernel %s, BLOCK_M=%lld BLOCK_N=%lld, %lld threads, "
	       "%lld bytes of shared memory\n",
	       base_name(a->gemm), a->kernel, l.block_m, l.block_n, l.threads,
	       l.smem);
	int status = 0;
	for (int i = 0; i < a->nshapes; i++) {
		int st = gemm_check(ctx, k, &l, a->shapes[i], a->tol,
				    a->manifest != NULL);
		if (st > status)
			status = st;
		if (st == 2)
			break;
	}
	if (status == 0 && a->bench[0])
		status = gemm_bench(ctx, k, &l, a->bench);
	return status;
}

int
main(int argc, char **argv)
{
	Args a;
	memset(&a, 0, sizeof a);
	int status = parse_args(&a, argc, argv);
	if (status >= 0)
		return status;

	tilec_init_error ierr;
	tilec_context *ctx = tilec_context_new(TILEC_BACKEND_CUDA, a.device,
					       &ierr);
	if (!ctx) {
		fprintf(stderr, "gpu_runtime_check: %s (%s)\n", ierr.message,
			tilec_status_string(ierr.status));
		return 2;
	}
	tilec_device_info dev;
	tilec_device_get_info(ctx, &dev);
	if (dev.compile_only) {
		printf("compile only (no device), arch %s\n",
		       a.arch ? a.arch : "(none given)");
	} else {
		printf("device %d: %s, compute capability %d.%d (%s), %d SMs, "
		       "%zu KiB shared memory per block, %.1f GiB\n",
		       a.device, dev.name, dev.cc_major, dev.cc_minor, dev.arch,
		       dev.multiprocessors, dev.max_shared_bytes / 1024,
		       (double)dev.total_memory / (1u << 30));
	}
	/* A private cache, so the first compile of each file is cold. */
	char cache[4096];
	const char *tmp = getenv("TMPDIR");
	snprintf(cache, sizeof cache, "%s/tilec-gpu-check-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(cache) || tilec_set_cache_dir(ctx, cache) != TILEC_OK) {
		fprintf(stderr, "cannot make a cache directory %s\n", cache);
		tilec_context_free(ctx);
		return 2;
	}

	status = 0;
	for (int i = 0; i < a.nfiles; i++) {
		/* With its launch document beside it (X.launch.json), as
		 * tilec_jit compiles it: a kernel that lists aligned tensors
		 * is built for aligned launches first; then the general
		 * build, which unaligned launches compile later. */
		char docpath[4096];
		size_t n = strlen(a.files[i]), mlen;
		char *doc = NULL;
		if (n > 3 && strcmp(a.files[i] + n - 3, ".cu") == 0 &&
		    n + 9 < sizeof docpath) {
			snprintf(docpath, sizeof docpath, "%.*s.launch.json",
				 (int)(n - 3), a.files[i]);
			doc = access(docpath, R_OK) == 0 ? read_file(docpath, &mlen) : NULL;
		}
		if (doc && strstr(doc, "\"aligned\"")) {
			tilec_module *m = compile_file(ctx, &a, a.files[i], doc, &dev);
			if (!m)
				status = 2;
			tilec_module_free(m);
			printf("  (above: the build for aligned launches; below: "
			       "the general build)\n");
		}
		free(doc);
		tilec_module *m = compile_file(ctx, &a, a.files[i], NULL, &dev);
		if (!m)
			status = 2;
		tilec_module_free(m);
	}
	if (a.gemm && dev.compile_only) {
		printf("%s: not run (compile-only)\n", a.gemm);
	} else if (a.gemm) {
		size_t len, mlen;
		char *src = read_file(a.gemm, &len);
		char *doc = a.manifest ? read_file(a.manifest, &mlen) : NULL;
		tilec_module *m = src && (doc || !a.manifest)
					  ? compile_file(ctx, &a, a.gemm, doc, &dev)
					  : NULL;
		if (!src || (a.manifest && !doc))
			fprintf(stderr, "%s: cannot read: %s\n",
				src ? a.manifest : a.gemm, strerror(errno));
		if (doc && a.tol < 0)
			a.tol = manifest_tolerance(doc, mlen);
		if (a.tol < 0)
			a.tol = 1e-2; /* neither --tol nor a manifest */
		free(doc);
		int st = m ? run_gemm(ctx, &a, m, src) : 2;
		if (st > status)
			status = st;
		tilec_module_free(m);
		free(src);
	}
	tilec_context_free(ctx);
	tilec_rt_remove_tree(cache);
	printf("%s\n", status == 0 ? "PASS" : status == 1 ? "FAIL" : "ERROR");
	return status;
}
