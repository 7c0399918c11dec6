/*
 * run.c - `tilec run`: translate a tile program, JIT-compile it, run one
 * kernel on random inputs and check it against the reference interpreter;
 * optionally time it.
 *
 * Input: the command line (docs/run.md).  Output: a short report on stdout
 * (or one JSON object with --json), diagnostics on stderr, and the exit
 * status: 0 when every output matches the reference within the tolerance,
 * 1 when the check fails (mismatch, an element left unwritten, an error in
 * the reference run), 2 for anything that stops the run before the check
 * (bad arguments or shapes, a translation error, a compiler failure).
 *
 * The work is the harness's (cmd/harness.c: the reference program, the
 * arguments, the translation and JIT, the check, the timing); this file
 * reads the command line into a harness spec and shape and reports what
 * each step returns.
 */
#include "cmd/harness.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	EXIT_PASS = 0,    /* every output matched */
	EXIT_MISMATCH = 1, /* the check failed */
	EXIT_STOPPED = 2, /* the run could not get as far as the check */
};

#define MAX_SHAPES TC_HARNESS_MAX_SHAPES

/* The command line. */
typedef struct RunArgs {
	const char *file;                    /* the tile program */
	const char *target;                  /* -t: "openmp", "cuda" */
	int device;                          /* --device: GPU ordinal */
	const char *arch;                    /* --arch for the translator */
	const char *march;                   /* --march for the C compiler */
	int cpu_strip;                       /* --cpu-strip (TcOptions) */
	const char *kernel;                  /* --kernel, or NULL */
	const char *cc;                      /* --cc, or NULL */
	const char *source;                  /* --source: generated code to
						use instead of translating */
	int ndefines;                        /* -D bindings */
	const char *define_name[TC_MAX_DEFINES];
	long long define_value[TC_MAX_DEFINES];
	int nshapes;                         /* --shape NAME=VALUE pairs */
	char *shape_name[MAX_SHAPES];
	char *shape_value[MAX_SHAPES];
	int nranges;                         /* --range NAME=LO:HI */
	char *range_name[MAX_SHAPES];
	char *range_lo[MAX_SHAPES];          /* the bounds as written */
	char *range_hi[MAX_SHAPES];
	unsigned long long seed;             /* --seed */
	double tol;                          /* --tol, or < 0 for the default */
	double flops;                        /* --flops, or < 0 to count */
	bool bench;                          /* --bench */
	int repeat;                          /* --repeat */
	int warmup;                          /* --warmup */
	bool check;                          /* false with --no-check */
	bool no_cache;                       /* --no-cache */
	bool json;                           /* --json */
	const char *config[TC_BUCKET_MAX];  /* --config: tuning records */
	int nconfigs;
	const char *chosen;                  /* the record bound: config[0],
						or the one the launch's shape
						picks of several */
} RunArgs;

/* Everything one run holds, freed by run_free. */
typedef struct Run {
	RunArgs args;
	TcHarness h;                /* the kernel, its arguments, the check */
	json_t *json;               /* the --json report */
} Run;

static void
usage(FILE *f)
{
	fputs("usage: tilec run FILE [options]\n"
	      "\n"
	      "Translate FILE, JIT-compile it, run one kernel on random inputs\n"
	      "and check every output against the reference interpreter.\n"
	      "\n"
	      "options:\n"
	      "  -t, --target T      openmp (default), cuda or hip\n"
	      "  --device N          the GPU to run on (default 0)\n"
	      "  --arch A            the translator's target architecture\n"
	      "                      (default: the GPU's, or the host's ISA)\n"
	      "  --march M           the JIT compiler's architecture: -march\n"
	      "                      for cc (default native), the cubin's for\n"
	      "                      NVRTC (default the GPU's, e.g. sm_90a)\n"
	      "  --cpu-strip=N       on the CPU, one thread runs N blocks of a\n"
	      "                      grid row together (0: one block a call;\n"
	      "                      default: 4 for gemm loops)\n"
	      "  --kernel NAME       the kernel to run (needed if FILE has more)\n"
	      "  -D NAME=VALUE       bind a tunable\n"
	      "  --config RECORD     bind the tunables of a tuning record\n"
	      "                      (tilec tune; -D wins over it); given\n"
	      "                      again, the record whose shape bucket\n"
	      "                      holds --shape (as tilec export picks)\n"
	      "  --shape N=V,...     values of the scalar parameters\n"
	      "  --range T=LO:HI,... values of input tensor T in LO .. HI\n"
	      "                      (both included; LO and HI may use the\n"
	      "                      scalar parameters, e.g. ids=0:V-1)\n"
	      "  --seed S            random inputs from seed S (default 1)\n"
	      "  --tol T             relative tolerance (default by dtype)\n"
	      "  --bench             time the kernel (median of --repeat runs)\n"
	      "  --repeat N          timed runs (default 20)\n"
	      "  --warmup N          untimed runs first (default 3)\n"
	      "  --flops F           FLOPs per run, for GFLOP/s (default:\n"
	      "                      counted from the tile_gemm statements)\n"
	      "  --no-check          with --bench: skip the reference\n"
	      "  --no-cache          bypass the JIT disk cache\n"
	      "  --cc CMD            the C compiler (default $TILEC_CC or cc)\n"
	      "  --source GEN        compile GEN (generated code, perhaps edited)\n"
	      "                      instead of translating FILE\n"
	      "  --json              print the report as one JSON object\n"
	      "  -h, --help\n"
	      "\n"
	      "Integer scalar parameters must be given with --shape; float ones\n"
	      "default to 1e-5 if their name starts with \"eps\", else 1.0.\n"
	      "Exit status: 0 pass, 1 check failed, 2 stopped before the check.\n",
	      f);
}

/* --- Messages ------------------------------------------------------------- */

static void
errorf(Run *r, const char *fmt, ...) TC_PRINTF(2, 3);

/* Report a problem that stops the run: stderr, and the JSON report. */
static void
errorf(Run *r, const char *fmt, ...)
{
	TcBuf msg;
	va_list ap;
	tc_buf_init(&msg);
	va_start(ap, fmt);
	tc_buf_vprintf(&msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "tilec run: %s\n", msg.data);
	if (r->json && !json_object_get(r->json, "error"))
		json_object_set_new(r->json, "error", json_string(msg.data));
	tc_buf_free(&msg);
}

/* --- Arguments -------------------------------------------------------------- */

/* Whether `name` (n bytes) is among the first `count` of `names`. */
static bool
named_before(char *const *names, int count, const char *name, size_t n)
{
	for (int i = 0; i < count; i++)
		if (strlen(names[i]) == n && memcmp(names[i], name, n) == 0)
			return true;
	return false;
}

/* --shape M=1000,N=3000 */
static bool
add_shapes(Run *r, const char *list)
{
	RunArgs *a = &r->args;
	const char *p = list;
	while (*p) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		const char *eq = memchr(p, '=', n);
		if (!eq || eq == p || eq + 1 == p + n) {
			errorf(r, "--shape: expected NAME=VALUE, got '%.*s'",
			       (int)n, p);
			return false;
		}
		if (a->nshapes == MAX_SHAPES) {
			errorf(r, "--shape: more than %d values", MAX_SHAPES);
			return false;
		}
		if (named_before(a->shape_name, a->nshapes, p,
				 (size_t)(eq - p))) {
			errorf(r, "--shape %.*s: given twice", (int)(eq - p), p);
			return false;
		}
		a->shape_name[a->nshapes] = strndup(p, (size_t)(eq - p));
		a->shape_value[a->nshapes] =
			strndup(eq + 1, (size_t)(p + n - eq - 1));
		a->nshapes++;
		p += n + (comma ? 1 : 0);
	}
	return true;
}

/* --range ids=0:V-1,pos=0:S-1: kept as written, evaluated once the
 * scalar values are known (resolve_ranges). */
static bool
add_ranges(Run *r, const char *list)
{
	RunArgs *a = &r->args;
	const char *p = list;
	while (*p) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		if (a->nranges == MAX_SHAPES) {
			errorf(r, "--range: more than %d tensors", MAX_SHAPES);
			return false;
		}
		int i = a->nranges;
		if (!tc_opt_range(p, n, &a->range_name[i], &a->range_lo[i],
				  &a->range_hi[i])) {
			errorf(r, "--range: expected TENSOR=LO:HI, got '%.*s'",
			       (int)n, p);
			return false;
		}
		a->nranges++;
		if (named_before(a->range_name, i, a->range_name[i],
				 strlen(a->range_name[i]))) {
			errorf(r, "--range %s: given twice", a->range_name[i]);
			return false;
		}
		p += n + (comma ? 1 : 0);
	}
	return true;
}

/* The options, as ids for parse_args's switch. */
enum {
	OPT_HELP = 1, OPT_BENCH, OPT_JSON, OPT_NO_CHECK, OPT_NO_CACHE,
	OPT_TARGET, OPT_DEFINE, OPT_DEVICE, OPT_ARCH, OPT_MARCH, OPT_KERNEL,
	OPT_CC, OPT_CONFIG, OPT_SOURCE, OPT_SHAPE, OPT_RANGE, OPT_SEED,
	OPT_TOL, OPT_FLOPS, OPT_REPEAT, OPT_WARMUP, OPT_CPU_STRIP,
};

static const TcOptSpec options[] = {
	{ "help", 'h', false, OPT_HELP },
	{ "bench", 0, false, OPT_BENCH },
	{ "json", 0, false, OPT_JSON },
	{ "no-check", 0, false, OPT_NO_CHECK },
	{ "no-cache", 0, false, OPT_NO_CACHE },
	{ "target", 't', true, OPT_TARGET },
	{ NULL, 'D', true, OPT_DEFINE },
	{ "device", 0, true, OPT_DEVICE },
	{ "arch", 0, true, OPT_ARCH },
	{ "march", 0, true, OPT_MARCH },
	{ "kernel", 0, true, OPT_KERNEL },
	{ "cc", 0, true, OPT_CC },
	{ "config", 0, true, OPT_CONFIG },
	{ "source", 0, true, OPT_SOURCE },
	{ "shape", 0, true, OPT_SHAPE },
	{ "range", 0, true, OPT_RANGE },
	{ "seed", 0, true, OPT_SEED },
	{ "tol", 0, true, OPT_TOL },
	{ "flops", 0, true, OPT_FLOPS },
	{ "repeat", 0, true, OPT_REPEAT },
	{ "warmup", 0, true, OPT_WARMUP },
	{ "cpu-strip", 0, true, OPT_CPU_STRIP },
	{ 0 },
};

/* Returns -1 to go on, else an exit status. */
static int
parse_args(Run *r, int argc, char **argv)
{
	RunArgs *a = &r->args;
	a->target = "openmp";
	a->seed = 1;
	a->tol = -1;
	a->flops = -1;
	a->repeat = 20;
	a->warmup = 3;
	a->check = true;
	TcOptParser p;
	tc_opt_init(&p, argc, argv);
	int id;
	while ((id = tc_opt_next(&p, options)) != TC_OPT_END) {
		const char *v = p.value;
		long long n;
		switch (id) {
		case TC_OPT_OPERAND:
			if (a->file) {
				errorf(r, "more than one file: '%s' and '%s'",
				       a->file, v);
				return EXIT_STOPPED;
			}
			a->file = v;
			break;
		case TC_OPT_UNKNOWN: {
			char hint[96];
			errorf(r, "unknown option '%s'%s (tilec run --help)",
			       p.arg,
			       tc_opt_suggest(p.arg, options, hint, sizeof hint));
			return EXIT_STOPPED;
		}
		case TC_OPT_MISSING:
			errorf(r, "option '%s' needs a value", p.arg);
			return EXIT_STOPPED;
		case OPT_HELP:
			usage(stdout);
			return EXIT_PASS;
		case OPT_BENCH: a->bench = true; break;
		case OPT_JSON: a->json = true; break;
		case OPT_NO_CHECK: a->check = false; break;
		case OPT_NO_CACHE: a->no_cache = true; break;
		case OPT_TARGET: a->target = v; break;
		case OPT_ARCH: a->arch = v; break;
		case OPT_MARCH: a->march = v; break;
		case OPT_CPU_STRIP:
			if (!tc_opt_cpu_strip(v, &a->cpu_strip)) {
				errorf(r, TC_OPT_CPU_STRIP_WANTS ", not '%s'", v);
				return EXIT_STOPPED;
			}
			break;
		case OPT_KERNEL: a->kernel = v; break;
		case OPT_CC: a->cc = v; break;
		case OPT_CONFIG:
			if (a->nconfigs == TC_BUCKET_MAX) {
				errorf(r, "--config: more than %d records",
				       TC_BUCKET_MAX);
				return EXIT_STOPPED;
			}
			a->config[a->nconfigs++] = v;
			break;
		case OPT_SOURCE: a->source = v; break;
		case OPT_DEFINE: {
			char *name;
			if (!tc_opt_define(v, &name, &n)) {
				errorf(r, "-D %s: expected NAME=INTEGER", v);
				return EXIT_STOPPED;
			}
			if (a->ndefines == TC_MAX_DEFINES) {
				free(name);
				errorf(r, "-D: more than %d bindings",
				       TC_MAX_DEFINES);
				return EXIT_STOPPED;
			}
			a->define_name[a->ndefines] = name;
			a->define_value[a->ndefines++] = n;
			break;
		}
		case OPT_DEVICE:
			if (!tc_opt_integer(v, &n) || n < 0 || n > 1024) {
				errorf(r, "--device %s: expected a device number "
				       ">= 0", v);
				return EXIT_STOPPED;
			}
			a->device = (int)n;
			break;
		case OPT_SHAPE:
			if (!add_shapes(r, v))
				return EXIT_STOPPED;
			break;
		case OPT_RANGE:
			if (!add_ranges(r, v))
				return EXIT_STOPPED;
			break;
		case OPT_SEED:
			if (!tc_opt_integer(v, &n) || n < 0) {
				errorf(r, "--seed %s: expected an integer >= 0", v);
				return EXIT_STOPPED;
			}
			a->seed = (unsigned long long)n;
			break;
		case OPT_TOL:
			if (!tc_opt_number(v, &a->tol) || !(a->tol >= 0)) {
				errorf(r, "--tol %s: expected a number >= 0", v);
				return EXIT_STOPPED;
			}
			break;
		case OPT_FLOPS:
			if (!tc_opt_number(v, &a->flops) || !(a->flops > 0)) {
				errorf(r, "--flops %s: expected a number > 0", v);
				return EXIT_STOPPED;
			}
			break;
		case OPT_REPEAT:
			if (!tc_opt_integer(v, &n) || n < 1 || n > 1000000) {
				errorf(r, "--repeat %s: expected 1 .. 1000000", v);
				return EXIT_STOPPED;
			}
			a->repeat = (int)n;
			break;
		case OPT_WARMUP:
			if (!tc_opt_integer(v, &n) || n < 0 || n > 1000000) {
				errorf(r, "--warmup %s: expected 0 .. 1000000", v);
				return EXIT_STOPPED;
			}
			a->warmup = (int)n;
			break;
		}
	}
	if (!a->file) {
		usage(stderr);
		return EXIT_STOPPED;
	}
	if (!a->check && !a->bench) {
		errorf(r, "--no-check only makes sense with --bench");
		return EXIT_STOPPED;
	}
	return -1;
}

/* --- The report ---------------------------------------------------------------- */

/* A step of the harness stopped: its sentence, if it has one (the
 * diagnostics of the translator or the interpreter, printed already,
 * may be all there is). */
static void
harness_error(Run *r)
{
	if (r->h.message)
		errorf(r, "%s", r->h.message);
}

/* "[12][7]" for element i of p. */
static void
index_text(const TcHarnessParam *p, size_t i, char *out, size_t n)
{
	long long idx[TC_MAX_RANK];
	for (int j = p->var->rank - 1; j >= 0; j--) {
		idx[j] = p->ext[j] ? (long long)(i % (size_t)p->ext[j]) : 0;
		i = p->ext[j] ? i / (size_t)p->ext[j] : 0;
	}
	size_t used = 0;
	out[0] = '\0';
	for (int j = 0; j < p->var->rank && used < n; j++)
		used += (size_t)snprintf(out + used, n - used, "[%lld]", idx[j]);
}

static void
type_text(const TcHarnessParam *p, char *out, size_t n)
{
	size_t used = (size_t)snprintf(out, n, "%s", tc_dtype_name(p->var->dtype));
	for (int j = 0; j < p->var->rank && used < n; j++)
		used += (size_t)snprintf(out + used, n - used, "[%lld]",
					 p->ext[j]);
}

/* A double as JSON: a number, or where JSON has none (jansson makes
 * nothing of them) the string "inf", "-inf" or "nan". */
static json_t *
json_float(double x)
{
	if (isnan(x))
		return json_string("nan");
	if (isinf(x))
		return json_string(x < 0 ? "-inf" : "inf");
	return json_real(x);
}

/* "[12][7]" as a JSON array. */
static json_t *
index_json(const TcHarnessParam *p, size_t i)
{
	long long idx[TC_MAX_RANK];
	for (int j = p->var->rank - 1; j >= 0; j--) {
		idx[j] = p->ext[j] ? (long long)(i % (size_t)p->ext[j]) : 0;
		i = p->ext[j] ? i / (size_t)p->ext[j] : 0;
	}
	json_t *a = json_array();
	for (int j = 0; j < p->var->rank; j++)
		json_array_append_new(a, json_integer(idx[j]));
	return a;
}

/* The header line: kernel, target, scalars, tunables. */
static void
report_header(Run *r)
{
	const TcHarness *h = &r->h;
	json_t *shape = json_object(), *tun = json_object();
	TcBuf line;
	tc_buf_init(&line);
	if (h->gpu)
		tc_buf_printf(&line, "%s on %s %s (%s):", h->kernel->name,
			      h->opt.target.name, h->opt.target.arch,
			      h->device.name);
	else
		tc_buf_printf(&line, "%s on %s:", h->kernel->name,
			      h->opt.target.name);
	for (int i = 0; i < h->nparams; i++) {
		const TcHarnessParam *p = &h->params[i];
		if (p->var->kind != TC_VAR_SCALAR)
			continue;
		if (tc_dtype_is_float(p->var->dtype))
			tc_buf_printf(&line, " %s=%g", p->var->name, p->value);
		else
			tc_buf_printf(&line, " %s=%lld", p->var->name,
				      p->ivalue);
		json_object_set_new(shape, p->var->name,
				    tc_dtype_is_float(p->var->dtype)
					    ? json_float(p->value)
					    : json_integer((json_int_t)p->ivalue));
	}
	const TcProgram *prog = h->ref_prog;
	for (int i = 0; i < prog->tunables.len; i++) {
		const TcVar *v = prog->tunables.items[i];
		tc_buf_printf(&line, "%s%s=%lld", i ? " " : " (", v->name,
			      v->value);
		if (i + 1 == prog->tunables.len)
			tc_buf_puts(&line, ")");
		json_object_set_new(tun, v->name, json_integer(v->value));
	}
	if (!r->args.json)
		printf("%s\n", line.data);
	tc_buf_free(&line);
	json_object_set_new(r->json, "kernel", json_string(h->kernel->name));
	json_object_set_new(r->json, "target", json_string(h->opt.target.name));
	json_object_set_new(r->json, "arch",
			    json_string(h->opt.target.arch ? h->opt.target.arch
							   : ""));
	if (h->gpu)
		json_object_set_new(r->json, "device",
				    json_string(h->device.name));
	json_object_set_new(r->json, "file", tc_json_text(r->args.file));
	json_object_set_new(r->json, "shape", shape);
	json_object_set_new(r->json, "tunables", tun);
}

static void
report_compile(Run *r)
{
	const TcHarness *h = &r->h;
	const tilec_module_info *info = &h->info;
	if (!r->args.json && r->args.source)
		printf("  source %s, %s %.1f ms%s\n", r->args.source,
		       info->from_cache ? "load from cache" : "compile",
		       info->total_seconds * 1e3,
		       info->rebuilt_corrupt ? " (corrupt cache entry rebuilt)"
					     : "");
	else if (!r->args.json)
		printf("  translate %.1f ms, %s %.1f ms%s\n",
		       h->translate_s * 1e3,
		       info->from_cache ? "load from cache" : "compile",
		       info->total_seconds * 1e3,
		       info->rebuilt_corrupt ? " (corrupt cache entry rebuilt)"
					     : "");
	json_object_set_new(r->json, "translate_ms",
			    json_real(h->translate_s * 1e3));
	json_object_set_new(r->json, "jit_ms",
			    json_real(info->total_seconds * 1e3));
	json_object_set_new(r->json, "compiler_ms",
			    json_real(info->compile_seconds * 1e3));
	json_object_set_new(r->json, "cache_hit",
			    json_boolean(info->from_cache));
	if (!h->gpu && !r->args.source) {
		/* The strip pass's choice (--cpu-strip): blocks of a grid
		 * row one call runs, at most; 1 for none. */
		int strip = h->gen_kernel && h->gen_kernel->strip > 1
				    ? h->gen_kernel->strip
				    : 1;
		if (!r->args.json && strip > 1)
			printf("  strips of up to %d blocks of a grid row\n",
			       strip);
		json_object_set_new(r->json, "cpu_strip", json_integer(strip));
	}
	if (!h->gpu)
		return;
	const tilec_launch_config *c = &h->cfg;
	if (!r->args.json)
		printf("  launch grid %ux%ux%u, %u threads, %zu bytes of shared "
		       "memory\n",
		       c->grid[0], c->grid[1], c->grid[2], c->block[0],
		       c->shared_bytes);
	json_t *l = json_object();
	json_t *grid = json_array();
	for (int d = 0; d < 3; d++)
		json_array_append_new(grid, json_integer(c->grid[d]));
	json_object_set_new(l, "grid", grid);
	json_object_set_new(l, "threads", json_integer(c->block[0]));
	json_object_set_new(l, "smem_bytes",
			    json_integer((json_int_t)c->shared_bytes));
	json_object_set_new(r->json, "launch", l);
}

/* One output's line of the report and its JSON object (appended to
 * outs).  Integer outputs show integers. */
static void
report_output(Run *r, const TcCompare *c, json_t *outs)
{
	const TcHarnessParam *p = c->param;
	double tol = r->h.tol;
	char type[128], where[128];
	type_text(p, type, sizeof type);
	index_text(p, c->worst, where, sizeof where);
	const char *name = p->var->name;
	bool show_worst = c->exact ? c->mismatches > 0 : c->rel_err > tol;
	if (!r->args.json) {
		printf("  %-8s %-20s ", name, type);
		if (c->exact && c->mismatches)
			printf("exact: %zu of %zu differ, first %s%s: got %" PRId64
			       ", want %" PRId64,
			       c->mismatches, p->count, name, where,
			       c->worst_got_int, c->worst_want_int);
		else if (c->exact)
			printf("exact");
		else
			printf("max rel err %.2e (tol %.3g)", c->rel_err, tol);
		if (!c->exact && show_worst)
			printf(", worst %s%s: got %.6g, want %.6g", name, where,
			       c->worst_got, c->worst_want);
		if (c->unwritten) {
			index_text(p, c->first_unwritten, where, sizeof where);
			printf(", %zu unwritten (first %s%s)", c->unwritten, name,
			       where);
		}
		if (c->stray) {
			index_text(p, c->first_stray, where, sizeof where);
			printf(", %zu written that the reference leaves untouched "
			       "(first %s%s)",
			       c->stray, name, where);
		}
		/* An integer's poison is also a value: such an element may
		 * have been written with it. */
		if (c->untouched)
			printf(c->exact ? ", %zu hold the poison value as in the "
					  "reference (untouched, or written "
					  "with it)"
					: ", %zu untouched as in the reference",
			       c->untouched);
		if (c->nan_mismatch)
			printf(", %zu NaN/inf mismatches", c->nan_mismatch);
		printf("  %s\n", c->ok ? "ok" : "FAIL");
	}
	json_t *o = json_object();
	json_object_set_new(o, "name", json_string(name));
	json_object_set_new(o, "type", json_string(type));
	json_object_set_new(o, "exact", json_boolean(c->exact));
	json_object_set_new(o, "max_rel_err", json_float(c->rel_err));
	if (c->exact) {
		json_object_set_new(o, "max_abs_err",
				    json_integer((json_int_t)c->max_abs_err));
		json_object_set_new(o, "max_abs_ref",
				    json_integer((json_int_t)c->max_abs_ref));
		json_object_set_new(o, "tol", json_integer(0));
		json_object_set_new(o, "mismatches",
				    json_integer((json_int_t)c->mismatches));
	} else {
		json_object_set_new(o, "max_abs_err", json_float(c->max_abs_err));
		json_object_set_new(o, "max_abs_ref", json_float(c->max_abs_ref));
		json_object_set_new(o, "tol", json_real(tol));
	}
	if (show_worst) {
		json_t *w = json_object();
		json_object_set_new(w, "index", index_json(p, c->worst));
		json_object_set_new(w, "got",
				    c->exact ? json_integer(c->worst_got_int)
					     : json_float(c->worst_got));
		json_object_set_new(w, "want",
				    c->exact ? json_integer(c->worst_want_int)
					     : json_float(c->worst_want));
		json_object_set_new(o, "worst", w);
	}
	json_object_set_new(o, "unwritten",
			    json_integer((json_int_t)c->unwritten));
	json_object_set_new(o, "stray", json_integer((json_int_t)c->stray));
	json_object_set_new(o, "untouched",
			    json_integer((json_int_t)c->untouched));
	json_object_set_new(o, "nan_mismatch",
			    json_integer((json_int_t)c->nan_mismatch));
	json_object_set_new(o, "ok", json_boolean(c->ok));
	json_array_append_new(outs, o);
}

/* Run the kernel and the reference once and compare; returns the exit
 * status. */
static int
check(Run *r)
{
	TcHarness *h = &r->h;
	bool ok = tc_harness_check(h, r->args.seed, r->args.check);
	if (r->args.check)
		json_object_set_new(r->json, "reference_ms",
				    json_real(h->reference_s * 1e3));
	if (!ok && h->fail == TC_HARNESS_REFERENCE) {
		harness_error(r);
		return EXIT_MISMATCH;
	}
	if (!ok && h->fail != TC_HARNESS_MISMATCH) {
		harness_error(r);
		return EXIT_STOPPED;
	}
	if (!r->args.check)
		return EXIT_PASS;
	if (!r->args.json)
		printf("  first run %.3f ms, reference %.1f ms\n",
		       h->first_run_s * 1e3, h->reference_s * 1e3);
	json_t *outs = json_array();
	for (int i = 0; i < h->nout; i++)
		report_output(r, &h->out[i], outs);
	json_object_set_new(r->json, "outputs", outs);
	return ok ? EXIT_PASS : EXIT_MISMATCH;
}

/* Time the kernel over rotating copies of its tensors. */
static int
bench(Run *r)
{
	TcHarnessTiming t;
	if (!tc_harness_bench(&r->h, r->args.warmup, r->args.repeat,
			      r->args.flops, &t)) {
		harness_error(r);
		return EXIT_STOPPED;
	}
	if (!r->args.json) {
		printf("  time %.3f ms median of %d (min %.3f, %d input sets), "
		       "%.1f GB/s", t.median_ms, t.runs, t.min_ms, t.input_sets,
		       t.gbps);
		if (t.flops > 0)
			printf(", %.1f GFLOP/s", t.gflops);
		printf("\n");
	}
	json_t *b = json_object();
	json_object_set_new(b, "median_ms", json_real(t.median_ms));
	json_object_set_new(b, "min_ms", json_real(t.min_ms));
	json_object_set_new(b, "mean_ms", json_real(t.mean_ms));
	json_object_set_new(b, "runs", json_integer(t.runs));
	json_object_set_new(b, "input_sets", json_integer(t.input_sets));
	json_object_set_new(b, "bytes", json_real(t.bytes));
	json_object_set_new(b, "gbps", json_real(t.gbps));
	json_object_set_new(b, "flops", json_real(t.flops));
	json_object_set_new(b, "flops_from",
			    json_string(r->args.flops > 0 ? "--flops"
							  : "tile_gemm"));
	if (t.flops > 0)
		json_object_set_new(b, "gflops", json_real(t.gflops));
	json_object_set_new(r->json, "bench", b);
	return EXIT_PASS;
}

/* --- The run -------------------------------------------------------------------- */

static void
run_free(Run *r)
{
	tc_harness_free(&r->h);
	for (int i = 0; i < r->args.nshapes; i++) {
		free(r->args.shape_name[i]);
		free(r->args.shape_value[i]);
	}
	for (int i = 0; i < r->args.nranges; i++) {
		free(r->args.range_name[i]);
		free(r->args.range_lo[i]);
		free(r->args.range_hi[i]);
	}
	for (int i = 0; i < r->args.ndefines; i++)
		free((char *)r->args.define_name[i]);
	json_decref(r->json);
}

/* Of several --config records, the one whose shape bucket holds the
 * --shape values: record.c's rule, the one `tilec export`'s entry point
 * follows. */
static bool
pick_config(Run *r)
{
	RunArgs *a = &r->args;
	if (a->nconfigs == 1) {
		a->chosen = a->config[0];
		return true;
	}
	const char *names[MAX_SHAPES];
	long long values[MAX_SHAPES];
	int n = 0;
	for (int i = 0; i < a->nshapes; i++)
		if (tc_opt_integer(a->shape_value[i], &values[n]))
			names[n++] = a->shape_name[i];
	TcDiags d;
	tc_diags_init(&d, a->config[0], NULL, 0);
	d.to_stderr = !a->json;
	TcBuf why;
	tc_buf_init(&why);
	int at = tc_records_select(a->config, a->nconfigs, names, values, n,
				   &d, &why);
	if (at < 0) {
		errorf(r, "cannot pick one of the %d tuning records by the "
		       "shape", a->nconfigs);
	} else {
		a->chosen = a->config[at];
		if (!a->json)
			printf("tuning record for this shape: %s\n", why.data);
		json_object_set_new(r->json, "config", json_string(a->chosen));
	}
	tc_buf_free(&why);
	tc_diags_free(&d);
	return at >= 0;
}

static int
run(Run *r, int argc, char **argv)
{
	int status = parse_args(r, argc, argv);
	if (status >= 0)
		return status;
	RunArgs *a = &r->args;
	if (a->nconfigs > 0 && !pick_config(r))
		return EXIT_STOPPED;
	TcHarnessSpec spec = {
		.file = a->file,
		.target = a->target,
		.arch = a->arch,
		.march = a->march,
		.cpu_strip = a->cpu_strip,
		.kernel = a->kernel,
		.cc = a->cc,
		.source = a->source,
		.config = a->chosen,
		.device = a->device,
		.ndefines = a->ndefines,
		.no_cache = a->no_cache,
	};
	for (int i = 0; i < a->ndefines; i++) {
		spec.define_name[i] = a->define_name[i];
		spec.define_value[i] = a->define_value[i];
	}
	TcHarnessShape shape = { .nshapes = a->nshapes, .nranges = a->nranges,
				 .tol = a->tol };
	for (int i = 0; i < a->nshapes; i++) {
		shape.shape_name[i] = a->shape_name[i];
		shape.shape_value[i] = a->shape_value[i];
	}
	for (int i = 0; i < a->nranges; i++) {
		shape.range_name[i] = a->range_name[i];
		shape.range_lo[i] = a->range_lo[i];
		shape.range_hi[i] = a->range_hi[i];
	}
	TcHarness *h = &r->h;
	if (!tc_harness_load(h, &spec) || !tc_harness_bind(h, &shape)) {
		harness_error(r);
		return EXIT_STOPPED;
	}
	report_header(r);
	bool compiled = tc_harness_compile(h);
	if (h->info.note[0])
		fprintf(stderr, "tilec run: %s\n", h->info.note);
	if (!compiled || !tc_harness_place(h)) {
		harness_error(r);
		return EXIT_STOPPED;
	}
	report_compile(r);
	status = check(r);
	if (status == EXIT_PASS && a->bench)
		status = bench(r);
	json_object_set_new(r->json, "ok", json_boolean(status == EXIT_PASS));
	if (!a->json)
		printf("%s\n", status == EXIT_PASS ? (a->check ? "PASS" : "DONE")
						   : "FAIL");
	return status;
}

int
tc_run_main(int argc, char **argv)
{
	Run r;
	memset(&r, 0, sizeof r);
	r.json = json_object();
	int status = run(&r, argc, argv);
	if (r.args.json && r.json) {
		if (!json_object_get(r.json, "ok"))
			json_object_set_new(r.json, "ok", json_false());
		char *s = json_dumps(r.json, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		if (s)
			printf("%s\n", s);
		free(s);
	}
	run_free(&r);
	return status;
}
