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
 * Steps: the reference program is parse -> specialize -> check (the IR
 * before any target pass); the kernel's signature gives the tensors and
 * their extents (evaluated from --shape values).  The program is translated
 * again for the target (tc_translate) and compiled through the runtime,
 * with the embedded helper headers made visible as "tilec/...".  Inputs
 * (const tensors and tensors the kernel reads) are filled with seeded
 * random values away from zero; outputs are poisoned (a NaN with a
 * recognizable payload, 0xAB bytes for integers).  The kernel and the
 * interpreter run on identical inputs, each with its own copy of every
 * tensor it writes.
 *
 * On a GPU target the runtime context is opened on a device first (its
 * absence stops the run before any work, with the runtime's sentence), the
 * translator's arch defaults to the device's, every tensor gets a device
 * copy (tilec_alloc), and the launch configuration comes from the
 * translated kernel: the grid extents evaluated on the scalar values, the
 * threads per block, the shared memory the smem pass planned -- the same
 * numbers `tilec FILE -t cuda --emit=launch` prints.  Host buffers are
 * copied in before the launch and outputs copied back after it.
 */
#include "tilec_int.h"
#include "tilec_runtime.h"

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

#define MAX_SHAPES 64
/* Input buffers rotated through while timing: enough to exceed the last
 * level cache, within a memory budget. */
#define BENCH_ROTATE_BYTES (256ll << 20)
#define BENCH_MAX_SETS 16
#define BENCH_MEMORY_BUDGET (4ll << 30)

/* The command line. */
typedef struct RunArgs {
	const char *file;                    /* the tile program */
	const char *target;                  /* -t: "openmp", "cuda" */
	int device;                          /* --device: GPU ordinal */
	const char *arch;                    /* --arch for the translator */
	const char *march;                   /* --march for the C compiler */
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
	const char *config;                  /* --config: a tuning record */
} RunArgs;

/* Whether a tensor is read, written or both by the kernel. */
typedef enum Role { ROLE_IN = 1, ROLE_OUT = 2, ROLE_INOUT = 3 } Role;

/* One kernel parameter and its storage. */
typedef struct Param {
	const TcVar *var;        /* the parameter */
	Role role;               /* TENSOR: how the kernel uses it */
	long long ext[TC_MAX_RANK]; /* TENSOR: extents */
	size_t count;            /* TENSOR: elements */
	size_t bytes;            /* TENSOR: bytes of storage */
	void *data;              /* TENSOR: the kernel's copy */
	void *ref;               /* TENSOR: the reference's copy (== data
				    for tensors only read) */
	union {
		int32_t i32;
		int64_t i64;
		int8_t i8;
		uint8_t u8;
		float f32;
		double f64;
	} scalar;                /* SCALAR: the value passed */
	double value;            /* SCALAR: the value, for reports */
	long long ivalue;        /* SCALAR of an integer type: the value */
	bool ranged;             /* TENSOR input: --range gave its values */
	double lo, hi;           /* ranged: the values, both included */
	int32_t wide;            /* SCALAR i8/u8 on a GPU: the value as the
				    kernel's int parameter */
	void *dev;               /* TENSOR on a GPU: the device copy of
				    data, else NULL */
	void *slot;              /* TENSOR: kernel data pointer (dev or
				    data), args target */
	void *ref_slot;          /* TENSOR: reference data pointer */
} Param;

/* How one output compared with the reference.  Integer and bool outputs
 * compare exactly (exact, mismatches, worst_got_int/worst_want_int);
 * float ones within a relative tolerance. */
typedef struct Compare {
	bool exact;           /* an integer or bool output */
	double max_abs_err;   /* largest |got - want| over finite pairs */
	double max_abs_ref;   /* largest finite |want| */
	double rel_err;       /* max_abs_err / max_abs_ref */
	size_t worst;         /* floats: element of max_abs_err; exact:
				 the first mismatch */
	double worst_got, worst_want; /* floats: the values there */
	int64_t worst_got_int, worst_want_int; /* exact: the values there */
	size_t mismatches;    /* exact: elements that differ */
	size_t nan_mismatch;  /* NaN or infinity on one side only */
	size_t unwritten;     /* holding the poison where the reference
				 wrote */
	size_t first_unwritten; /* the first of them */
	size_t stray;         /* written where the reference left the
				 poison */
	size_t first_stray;   /* the first of them */
	size_t untouched;     /* holding the poison, as in the reference */
	bool ok;              /* within tolerance, nothing unwritten */
} Compare;

/* Everything one run holds, freed by run_free. */
typedef struct Run {
	RunArgs args;
	char *text;                 /* the program's source */
	size_t len;
	TcArena *ref_arena;         /* the reference program */
	TcArena *gen_arena;         /* the translated program */
	TcDiags ref_diags;          /* reference pipeline (to stderr) */
	TcDiags gen_diags;          /* translation (printed on failure) */
	TcOptions opt;
	const TcProgram *ref_prog;
	const TcKernel *kernel;     /* in the reference program */
	Param *params;
	int nparams;
	void **kargs;               /* the kernel's args */
	void **rargs;               /* the reference's args */
	tilec_context *ctx;
	tilec_device_info device;   /* what ctx runs on */
	bool gpu;                   /* a GPU target: device buffers, cfg */
	const TcKernel *gen_kernel; /* the translated kernel (launch numbers) */
	tilec_launch_config cfg;    /* GPU launch configuration */
	bool empty_grid;            /* a grid extent is 0: nothing to launch */
	tilec_module *mod;
	tilec_kernel *entry;
	TcBuf src;                  /* generated source */
	double translate_s;
	tilec_module_info info;
	double reference_s;
	double first_run_s;
	TcInterpStats stats;
	double tol;
	json_t *json;               /* the --json report */
	bool quiet;                 /* tc_run_report: print nothing */
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
	      "  --kernel NAME       the kernel to run (needed if FILE has more)\n"
	      "  -D NAME=VALUE       bind a tunable\n"
	      "  --config RECORD     bind the tunables of a tuning record\n"
	      "                      (tilec tune; -D wins over it)\n"
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
	if (!r->quiet)
		fprintf(stderr, "tilec run: %s\n", msg.data);
	if (r->json && !json_object_get(r->json, "error"))
		json_object_set_new(r->json, "error", json_string(msg.data));
	tc_buf_free(&msg);
}

/* --- Arguments -------------------------------------------------------------- */

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
		p += n + (comma ? 1 : 0);
	}
	return true;
}

/* The options, as ids for parse_args's switch. */
enum {
	OPT_HELP = 1, OPT_BENCH, OPT_JSON, OPT_NO_CHECK, OPT_NO_CACHE,
	OPT_TARGET, OPT_DEFINE, OPT_DEVICE, OPT_ARCH, OPT_MARCH, OPT_KERNEL,
	OPT_CC, OPT_CONFIG, OPT_SOURCE, OPT_SHAPE, OPT_RANGE, OPT_SEED,
	OPT_TOL, OPT_FLOPS, OPT_REPEAT, OPT_WARMUP,
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
		case OPT_KERNEL: a->kernel = v; break;
		case OPT_CC: a->cc = v; break;
		case OPT_CONFIG: a->config = v; break;
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

/* --- The kernel and its parameters ---------------------------------------------- */

/* The reference program: parse, specialize, check; pick the kernel. */
static bool
load_reference(Run *r)
{
	RunArgs *a = &r->args;
	TcProgram *p = tc_parse(r->ref_arena, a->file, r->text, &r->opt,
				&r->ref_diags);
	if (!p || !tc_specialize(r->ref_arena, p, &r->opt, &r->ref_diags) ||
	    !tc_check(r->ref_arena, p, &r->opt, &r->ref_diags) ||
	    r->ref_diags.errors > 0)
		return false;
	r->ref_prog = p;
	TcBuf names;
	tc_buf_init(&names);
	for (int i = 0; i < p->kernels.len; i++) {
		const TcKernel *k = p->kernels.items[i];
		tc_buf_printf(&names, "%s%s", i ? ", " : "", k->name);
		if (a->kernel ? strcmp(k->name, a->kernel) == 0
			      : p->kernels.len == 1)
			r->kernel = k;
	}
	if (!r->kernel) {
		if (p->kernels.len == 0)
			errorf(r, "%s defines no TILE_KERNEL", a->file);
		else if (a->kernel)
			errorf(r, "%s has no kernel named '%s' (kernels: %s)",
			       a->file, a->kernel, names.data);
		else
			errorf(r, "%s has %d kernels (%s); pick one with "
			       "--kernel NAME",
			       a->file, p->kernels.len, names.data);
	}
	tc_buf_free(&names);
	return r->kernel != NULL;
}

static const char *
find_shape(const RunArgs *a, const char *name)
{
	const char *v = NULL;
	for (int i = 0; i < a->nshapes; i++)
		if (strcmp(a->shape_name[i], name) == 0)
			v = a->shape_value[i];
	return v;
}

/* Scalar values from --shape (or the float defaults). */
static bool
bind_scalars(Run *r)
{
	const TcKernel *k = r->kernel;
	RunArgs *a = &r->args;
	TcBuf names;
	tc_buf_init(&names);
	for (int i = 0; i < r->nparams; i++) {
		const TcVar *v = r->params[i].var;
		if (v->kind == TC_VAR_SCALAR)
			tc_buf_printf(&names, "%s%s", names.len ? ", " : "",
				      v->name);
	}
	bool ok = true;
	for (int i = 0; i < a->nshapes; i++) {
		bool known = false;
		for (int j = 0; j < r->nparams; j++)
			known |= r->params[j].var->kind == TC_VAR_SCALAR &&
				 strcmp(r->params[j].var->name,
					a->shape_name[i]) == 0;
		if (!known) {
			errorf(r, "--shape %s: kernel %s has no scalar parameter "
			       "of that name (it has: %s)",
			       a->shape_name[i], k->name,
			       names.len ? names.data : "none");
			ok = false;
		}
	}
	for (int i = 0; ok && i < r->nparams; i++) {
		Param *p = &r->params[i];
		const TcVar *v = p->var;
		if (v->kind != TC_VAR_SCALAR)
			continue;
		const char *s = find_shape(a, v->name);
		if (tc_dtype_is_float(v->dtype)) {
			double x = strncmp(v->name, "eps", 3) == 0 ? 1e-5 : 1.0;
			if (s && !tc_opt_number(s, &x)) {
				errorf(r, "--shape %s=%s: not a number", v->name, s);
				ok = false;
				continue;
			}
			p->value = x;
			if (v->dtype == TC_DT_F64)
				p->scalar.f64 = x;
			else
				p->scalar.f32 = (float)x;
			continue;
		}
		long long x;
		if (!s) {
			errorf(r, "no value for %s: give every integer parameter "
			       "of %s with --shape (%s)",
			       v->name, k->name, names.data);
			ok = false;
			continue;
		}
		if (!tc_opt_integer(s, &x)) {
			errorf(r, "--shape %s=%s: not an integer", v->name, s);
			ok = false;
			continue;
		}
		p->value = (double)x;
		p->ivalue = x;
		bool fits = true;
		switch (v->dtype) {
		case TC_DT_I64: p->scalar.i64 = x; break;
		case TC_DT_I32:
			fits = x >= INT32_MIN && x <= INT32_MAX;
			p->scalar.i32 = (int32_t)x;
			break;
		case TC_DT_I8:
			fits = x >= INT8_MIN && x <= INT8_MAX;
			p->scalar.i8 = (int8_t)x;
			break;
		case TC_DT_U8:
		case TC_DT_BOOL:
			fits = x >= 0 && x <= (v->dtype == TC_DT_BOOL ? 1 : 255);
			p->scalar.u8 = (uint8_t)x;
			break;
		default:
			errorf(r, "parameter %s has type %s, which `tilec run` "
			       "cannot pass",
			       v->name, tc_dtype_name(v->dtype));
			ok = false;
			continue;
		}
		if (!fits) {
			errorf(r, "--shape %s=%lld does not fit in %s", v->name, x,
			       tc_dtype_name(v->dtype));
			ok = false;
		}
	}
	tc_buf_free(&names);
	return ok;
}

/* Which scalar parameters an extent mentions, for error messages. */
static void
extent_sources(const Run *r, const TcExpr *e, TcBuf *out)
{
	switch (e->kind) {
	case TC_EX_VAR:
		if (e->u.var->kind == TC_VAR_SCALAR) {
			const Param *p = &r->params[e->u.var->param];
			if (tc_dtype_is_float(e->u.var->dtype))
				tc_buf_printf(out, "%s%s=%g", out->len ? ", " : "",
					      e->u.var->name, p->value);
			else
				tc_buf_printf(out, "%s%s=%lld",
					      out->len ? ", " : "",
					      e->u.var->name, p->ivalue);
		}
		break;
	case TC_EX_BINARY:
		extent_sources(r, e->u.bin.lhs, out);
		extent_sources(r, e->u.bin.rhs, out);
		break;
	case TC_EX_UNARY: extent_sources(r, e->u.un.arg, out); break;
	case TC_EX_CALL:
		for (int i = 0; i < e->u.call.nargs; i++)
			extent_sources(r, e->u.call.args[i], out);
		break;
	case TC_EX_CAST: extent_sources(r, e->u.cast.arg, out); break;
	default:
		break;
	}
}

static void *
alloc_tensor(size_t bytes)
{
	size_t n = (bytes + 63) / 64 * 64;
	return aligned_alloc(64, n ? n : 64);
}

/* Tensor extents and storage; the argument vectors. */
static bool
setup_params(Run *r)
{
	const TcKernel *k = r->kernel;
	r->kargs = calloc((size_t)r->nparams + 1, sizeof *r->kargs);
	r->rargs = calloc((size_t)r->nparams + 1, sizeof *r->rargs);
	if (!r->kargs || !r->rargs) {
		errorf(r, "out of memory");
		return false;
	}
	for (int i = 0; i < r->nparams; i++)
		if (r->params[i].var->kind == TC_VAR_SCALAR)
			r->kargs[i] = r->rargs[i] = &r->params[i].scalar;
	double total = 0;
	for (int i = 0; i < r->nparams; i++) {
		Param *p = &r->params[i];
		const TcVar *v = p->var;
		if (v->kind != TC_VAR_TENSOR)
			continue;
		double count = 1;
		for (int j = 0; j < v->rank; j++) {
			double e;
			if (!tc_interp_eval(k, v->shape[j], r->kargs, &e,
					    &r->ref_diags))
				return false;
			if (e < 0) {
				TcBuf why;
				tc_buf_init(&why);
				extent_sources(r, v->shape[j], &why);
				errorf(r, "tensor %s would have extent %.0f along "
				       "dim %d (from %s); extents must be >= 0",
				       v->name, e, j,
				       why.len ? why.data : "its declaration");
				tc_buf_free(&why);
				return false;
			}
			p->ext[j] = (long long)e;
			count *= e;
		}
		double bytes = count * tc_dtype_storage_bits(v->dtype) / 8.0;
		total += bytes;
		if (total > 16e9) {
			errorf(r, "the tensors would take %.1f GB; that is more "
			       "than `tilec run` allocates",
			       total / 1e9);
			return false;
		}
		p->count = (size_t)count;
		p->bytes = tc_elem_bytes(v->dtype, p->count);
		p->data = alloc_tensor(p->bytes);
		p->ref = (p->role & ROLE_OUT) ? alloc_tensor(p->bytes) : p->data;
		if (!p->data || !p->ref) {
			errorf(r, "out of memory for tensor %s (%zu bytes)",
			       v->name, p->bytes);
			return false;
		}
		p->slot = p->data;
		p->ref_slot = p->ref;
		r->kargs[i] = &p->slot;
		r->rargs[i] = &p->ref_slot;
	}
	return true;
}

/* --- Value ranges: --range T=LO:HI ------------------------------------------------ */

/* Give the tensors named by --range their value ranges. */
static bool
resolve_ranges(Run *r)
{
	const RunArgs *a = &r->args;
	const char **names = calloc((size_t)r->nparams + 1, sizeof *names);
	double *values = calloc((size_t)r->nparams + 1, sizeof *values);
	int nscalars = 0;
	for (int j = 0; names && values && j < r->nparams; j++)
		if (r->params[j].var->kind == TC_VAR_SCALAR) {
			names[nscalars] = r->params[j].var->name;
			values[nscalars++] = r->params[j].value;
		}
	bool ok = names && values;
	if (!ok)
		errorf(r, "out of memory");
	for (int i = 0; ok && i < a->nranges; i++) {
		const char *name = a->range_name[i];
		Param *p = NULL;
		TcBuf msg;
		tc_buf_init(&msg);
		for (int j = 0; j < r->nparams; j++) {
			const TcVar *v = r->params[j].var;
			if (v->kind != TC_VAR_TENSOR)
				continue;
			if (r->params[j].role & ROLE_IN)
				tc_buf_printf(&msg, "%s%s", msg.len ? ", " : "",
					      v->name);
			if (strcmp(v->name, name) == 0)
				p = &r->params[j];
		}
		if (!p) {
			errorf(r, "--range %s: kernel %s has no tensor parameter "
			       "of that name (its inputs: %s)",
			       name, r->kernel->name, msg.len ? msg.data : "none");
			ok = false;
		} else if (!(p->role & ROLE_IN)) {
			errorf(r, "--range %s: the kernel only writes %s, so it "
			       "has no input values to choose",
			       name, name);
			ok = false;
		}
		tc_buf_free(&msg);
		if (ok && !tc_opt_range_values(name, a->range_lo[i],
					       a->range_hi[i], p->var->dtype,
					       nscalars, names, values, &p->lo,
					       &p->hi, &msg)) {
			errorf(r, "%s", msg.data);
			ok = false;
		}
		tc_buf_free(&msg);
		if (ok)
			p->ranged = true;
	}
	free(names);
	free(values);
	return ok;
}

/* --- Inputs, poison, comparison ------------------------------------------------------ */

/* The poison pattern of one element, and its width in bytes (0 for i4,
 * which is poisoned with 0xAB bytes). */
static int
poison_bits(TcDtype t, uint64_t *bits)
{
	switch (t) {
	case TC_DT_F64: *bits = 0x7ff8abababababab; return 8;
	case TC_DT_F32: *bits = 0x7fc0abab; return 4;
	case TC_DT_F16: *bits = 0x7eab; return 2;
	case TC_DT_BF16: *bits = 0x7feb; return 2;
	case TC_DT_FP8E4M3: *bits = 0x7f; return 1;
	case TC_DT_FP8E5M2: *bits = 0x7e; return 1;
	case TC_DT_I64: *bits = 0xabababababababab; return 8;
	case TC_DT_I32: *bits = 0xabababab; return 4;
	default: *bits = 0xab; return t == TC_DT_I4 ? 0 : 1;
	}
}

static void
poison(void *data, TcDtype t, size_t count, size_t bytes)
{
	uint64_t bits;
	int w = poison_bits(t, &bits);
	if (w <= 1) {
		memset(data, (int)(bits & 0xff), bytes);
		return;
	}
	for (size_t i = 0; i < count; i++)
		memcpy((char *)data + i * (size_t)w, &bits, (size_t)w);
}

/* Element i still holds the poison. */
static bool
is_poison(const void *data, TcDtype t, size_t i)
{
	uint64_t bits, got = 0;
	int w = poison_bits(t, &bits);
	if (w == 0)
		return (((const uint8_t *)data)[i / 2] >> ((i & 1) * 4) & 15) ==
		       ((i & 1) ? 0xa : 0xb);
	memcpy(&got, (const char *)data + i * (size_t)w, (size_t)w);
	return got == bits;
}

/* Element i of an integer or bool tensor, exactly (i64 too). */
static int64_t
load_int(TcDtype t, const void *data, size_t i)
{
	if (t == TC_DT_I64)
		return ((const int64_t *)data)[i];
	return (int64_t)tc_elem_load(t, data, i);
}

/* Compare output p with the reference's copy.  Outputs only written
 * (ROLE_OUT) were poisoned on both sides: an element the reference left
 * holding the poison must hold it in the kernel's output too (untouched),
 * and one the reference wrote must not (unwritten).  Integers and bools
 * compare exactly; floats within the relative tolerance tol. */
static void
compare(const Param *p, double tol, Compare *c)
{
	memset(c, 0, sizeof *c);
	TcDtype t = p->var->dtype;
	c->exact = !tc_dtype_is_float(t);
	for (size_t i = 0; i < p->count; i++) {
		if (p->role == ROLE_OUT) {
			bool got_poison = is_poison(p->data, t, i);
			bool want_poison = is_poison(p->ref, t, i);
			if (got_poison && want_poison) {
				c->untouched++;
				continue;
			}
			if (got_poison || want_poison) {
				/* For integers the poison is a legitimate value
				 * too; the bits differ, so this is a mismatch
				 * either way, named by what it likely is. */
				size_t *n = got_poison ? &c->unwritten : &c->stray;
				size_t *first = got_poison ? &c->first_unwritten
							   : &c->first_stray;
				if ((*n)++ == 0)
					*first = i;
				continue;
			}
		}
		if (c->exact) {
			int64_t want = load_int(t, p->ref, i);
			int64_t got = load_int(t, p->data, i);
			double aw = fabs((double)want);
			if (aw > c->max_abs_ref)
				c->max_abs_ref = aw;
			if (got == want)
				continue;
			double err = fabs((double)got - (double)want);
			if (err > c->max_abs_err)
				c->max_abs_err = err;
			if (c->mismatches++ == 0) {
				c->worst = i;
				c->worst_got_int = got;
				c->worst_want_int = want;
			}
			continue;
		}
		double want = tc_elem_load(t, p->ref, i);
		double got = tc_elem_load(t, p->data, i);
		if (!isfinite(want) || !isfinite(got)) {
			if (!(isnan(want) && isnan(got)) && want != got)
				c->nan_mismatch++;
			continue;
		}
		double err = fabs(got - want);
		if (fabs(want) > c->max_abs_ref)
			c->max_abs_ref = fabs(want);
		if (err > c->max_abs_err || (c->max_abs_err == 0 && i == 0)) {
			c->max_abs_err = err;
			c->worst = i;
			c->worst_got = got;
			c->worst_want = want;
		}
	}
	c->rel_err = c->max_abs_ref > 0 ? c->max_abs_err / c->max_abs_ref
					 : c->max_abs_err;
	c->ok = (c->exact ? c->mismatches == 0 : c->rel_err <= tol) &&
		c->unwritten == 0 && c->stray == 0 && c->nan_mismatch == 0;
}

/* Relative tolerance from the narrowest float type among the kernel's
 * tensors and buffers; exact when it only uses integers. */
static double
default_tolerance(const TcKernel *k)
{
	double tol = 0;
	for (int i = 0; i < k->vars.len; i++) {
		const TcVar *v = k->vars.items[i];
		if (v->kind != TC_VAR_TENSOR && v->kind != TC_VAR_BUFFER)
			continue;
		double t = 0;
		switch (v->dtype) {
		case TC_DT_F64: t = 1e-10; break;
		case TC_DT_F32: t = 1e-5; break;
		case TC_DT_F16:
		case TC_DT_BF16: t = 1e-2; break;
		case TC_DT_FP8E4M3: t = 0.125; break;
		case TC_DT_FP8E5M2: t = 0.25; break;
		default: break;
		}
		if (t > tol)
			tol = t;
	}
	return tol;
}

/* "[12][7]" for element i of p. */
static void
index_text(const Param *p, size_t i, char *out, size_t n)
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
type_text(const Param *p, char *out, size_t n)
{
	size_t used = (size_t)snprintf(out, n, "%s", tc_dtype_name(p->var->dtype));
	for (int j = 0; j < p->var->rank && used < n; j++)
		used += (size_t)snprintf(out + used, n - used, "[%lld]",
					 p->ext[j]);
}

/* --- Compiling ---------------------------------------------------------------------- */

/* The program scheduled for the target: with --source on a GPU, only
 * for the launch numbers (the passes, no emitter). */
static bool
translate(Run *r)
{
	if (r->args.source) {
		size_t len;
		char *text = tc_read_file(r->args.source, &len);
		if (!text) {
			errorf(r, "cannot read %s: %s", r->args.source,
			       strerror(errno));
			return false;
		}
		tc_buf_printf(&r->src, "%.*s", (int)len, text);
		free(text);
		if (!r->gpu)
			return true;
	}
	double t0 = tilec_now();
	TcProgram *prog = NULL;
	r->opt.kernel = r->kernel->name;
	bool ok = r->args.source
			  ? tc_compile(r->gen_arena, r->args.file, r->text,
				       &r->opt, &r->gen_diags, &prog)
			  : tc_translate(r->gen_arena, r->args.file, r->text,
					 &r->opt, &r->gen_diags, &prog, &r->src);
	if (!r->args.source)
		r->translate_s = tilec_now() - t0;
	if (!ok || r->gen_diags.errors > 0) {
		if (!r->quiet)
			fputs(r->gen_diags.text.data ? r->gen_diags.text.data
						     : "",
			      stderr);
		errorf(r, "translating %s for %s failed", r->args.file,
		       r->opt.target.name);
		return false;
	}
	for (int i = 0; prog && i < prog->kernels.len; i++) {
		const TcKernel *k = prog->kernels.items[i];
		if (strcmp(k->name, r->kernel->name) == 0)
			r->gen_kernel = k;
	}
	if (!r->gen_kernel) {
		errorf(r, "translating %s for %s produced no kernel %s",
		       r->args.file, r->opt.target.name, r->kernel->name);
		return false;
	}
	return true;
}

/* The GPU launch: grid extents evaluated on the scalar arguments, threads
 * per block and planned shared memory of the translated kernel (what
 * --emit=launch prints). */
static bool
launch_config(Run *r)
{
	const TcKernel *k = r->gen_kernel;
	tilec_launch_config *cfg = &r->cfg;
	memset(cfg, 0, sizeof *cfg);
	for (int d = 0; d < 3; d++) {
		double e = 1;
		if (k->grid[d] && !tc_interp_eval(k, k->grid[d], r->rargs, &e,
						  &r->ref_diags))
			return false;
		if (!(e >= 0 && e <= 2147483647.0)) {
			errorf(r, "the grid would have extent %.0f along %c",
			       e, "xyz"[d]);
			return false;
		}
		cfg->grid[d] = (unsigned)e;
		r->empty_grid |= cfg->grid[d] == 0;
	}
	cfg->block[0] = (unsigned)tc_abi_threads(k, &r->opt.target);
	cfg->block[1] = cfg->block[2] = 1;
	cfg->shared_bytes = (size_t)k->smem_bytes;
	return true;
}

/* Device copies of every tensor; GPU-width scalars. */
static bool
setup_device(Run *r)
{
	for (int i = 0; i < r->nparams; i++) {
		Param *p = &r->params[i];
		const TcVar *v = p->var;
		if (v->kind == TC_VAR_SCALAR) {
			/* Where the GPU's ABI widens a scalar to int (i8,
			 * u8), it gets a slot of its own. */
			if (tc_abi_pass_dtype(v->dtype, r->opt.target.kind) ==
				    TC_DT_I32 && v->dtype != TC_DT_I32) {
				p->wide = (int32_t)p->ivalue;
				r->kargs[i] = &p->wide;
			}
			continue;
		}
		if (tilec_alloc(r->ctx, p->bytes, &p->dev) != TILEC_OK) {
			errorf(r, "tensor %s: %s", v->name, tilec_error(r->ctx));
			return false;
		}
		p->slot = p->dev;
	}
	return true;
}

/* The runtime context for the target (its absence stops the run before
 * any translation work). */
static bool
open_context(Run *r)
{
	RunArgs *a = &r->args;
	int backend = tilec_backend_from_name(a->target);
	r->gpu = backend != TILEC_BACKEND_OPENMP;
	tilec_init_error ierr;
	r->ctx = tilec_context_new((tilec_backend)backend,
				   r->gpu ? a->device : 0, &ierr);
	if (!r->ctx) {
		errorf(r, "%s", ierr.message);
		return false;
	}
	if (a->cc && tilec_set_compiler(r->ctx, a->cc) != TILEC_OK) {
		errorf(r, "%s", tilec_error(r->ctx));
		return false;
	}
	tilec_device_get_info(r->ctx, &r->device);
	return true;
}

/* The translator's arch for a GPU without --arch: the device's own if the
 * translator knows it, else the newest it knows that the device runs
 * (sm_80 code runs on every later NVIDIA GPU). */
static const char *
gpu_translator_arch(Run *r)
{
	TcTarget t;
	if (tc_target_init(&t, r->args.target, r->device.arch))
		return r->device.arch;
	if (strcmp(r->args.target, "hip") == 0) {
		errorf(r, "%s (%s) is not an architecture tilec generates HIP "
		       "for (gfx90a, gfx942); name one with --arch",
		       r->device.name, r->device.arch);
		return NULL;
	}
	if (r->device.cc_major >= 8 && tc_target_init(&t, "cuda", "sm_80"))
		return "sm_80";
	errorf(r, "%s (%s) is older than every architecture tilec generates "
	       "CUDA for (sm_80 and later)",
	       r->device.name, r->device.arch);
	return NULL;
}

static bool
jit(Run *r)
{
	RunArgs *a = &r->args;
	/* The helper headers, as generated code includes them. */
	int n = 0;
	while (tc_embedded[n].path)
		n++;
	tilec_header *headers = calloc((size_t)n + 1, sizeof *headers);
	char **names = calloc((size_t)n + 1, sizeof *names);
	if (!headers || !names) {
		free(headers);
		free(names);
		errorf(r, "out of memory");
		return false;
	}
	for (int i = 0; i < n; i++) {
		size_t len = strlen(tc_embedded[i].path) + 7;
		names[i] = malloc(len);
		if (names[i])
			snprintf(names[i], len, "tilec/%s", tc_embedded[i].path);
		headers[i].name = names[i];
		headers[i].text = tc_embedded[i].text;
		headers[i].len = tc_embedded[i].len;
	}
	const char *file = a->source ? a->source : a->file;
	const char *base = strrchr(file, '/');
	base = base ? base + 1 : file;
	char srcname[256];
	if (a->source)
		snprintf(srcname, sizeof srcname, "%s", base);
	else
		snprintf(srcname, sizeof srcname, "%.*s.%s%s",
			 (int)(strrchr(base, '.') ? strrchr(base, '.') - base
						  : (long)strlen(base)),
			 base, r->opt.target.name,
			 r->opt.target.kind == TC_TARGET_CUDA  ? ".cu"
			 : r->opt.target.kind == TC_TARGET_HIP ? ".hip"
							       : ".c");
	tilec_compile_options o;
	tilec_compile_options_init(&o);
	o.name = srcname;
	o.arch = a->march;
	o.headers = headers;
	o.nheaders = n;
	o.no_cache = a->no_cache;
	/* An object without the kernel is neither cached nor taken from
	 * the cache. */
	const char *kernels[] = { r->kernel->name };
	o.kernels = kernels;
	o.nkernels = 1;
	r->mod = tilec_compile(r->ctx, r->src.data ? r->src.data : "",
			       r->src.len, &o);
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(headers);
	if (!r->mod) {
		errorf(r, "cannot compile the generated code: %s",
		       tilec_error(r->ctx));
		return false;
	}
	tilec_module_get_info(r->mod, &r->info);
	if (r->info.note[0])
		fprintf(stderr, "tilec run: %s\n", r->info.note);
	r->entry = tilec_module_kernel(r->mod, r->kernel->name);
	if (!r->entry) {
		errorf(r, "%s", tilec_error(r->ctx));
		return false;
	}
	return true;
}

/* --- The run --------------------------------------------------------------------- */

static void
run_free(Run *r)
{
	for (int i = 0; r->params && i < r->nparams; i++) {
		if (r->params[i].ref != r->params[i].data)
			free(r->params[i].ref);
		free(r->params[i].data);
		if (r->params[i].dev)
			tilec_free(r->ctx, r->params[i].dev);
	}
	free(r->params);
	free(r->kargs);
	free(r->rargs);
	tilec_module_free(r->mod);
	tilec_context_free(r->ctx);
	tc_buf_free(&r->src);
	tc_diags_free(&r->ref_diags);
	tc_diags_free(&r->gen_diags);
	if (r->ref_arena)
		tc_arena_free(r->ref_arena);
	if (r->gen_arena)
		tc_arena_free(r->gen_arena);
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
	free(r->text);
	json_decref(r->json);
}

/* The header line: kernel, target, scalars, tunables. */
static void
report_header(Run *r)
{
	json_t *shape = json_object(), *tun = json_object();
	TcBuf line;
	tc_buf_init(&line);
	if (r->gpu)
		tc_buf_printf(&line, "%s on %s %s (%s):", r->kernel->name,
			      r->opt.target.name, r->opt.target.arch,
			      r->device.name);
	else
		tc_buf_printf(&line, "%s on %s:", r->kernel->name,
			      r->opt.target.name);
	for (int i = 0; i < r->nparams; i++) {
		const Param *p = &r->params[i];
		if (p->var->kind != TC_VAR_SCALAR)
			continue;
		if (tc_dtype_is_float(p->var->dtype))
			tc_buf_printf(&line, " %s=%g", p->var->name, p->value);
		else
			tc_buf_printf(&line, " %s=%lld", p->var->name,
				      p->ivalue);
		json_object_set_new(shape, p->var->name,
				    tc_dtype_is_float(p->var->dtype)
					    ? json_real(p->value)
					    : json_integer((json_int_t)p->ivalue));
	}
	const TcProgram *prog = r->ref_prog;
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
	json_object_set_new(r->json, "kernel", json_string(r->kernel->name));
	json_object_set_new(r->json, "target", json_string(r->opt.target.name));
	json_object_set_new(r->json, "arch",
			    json_string(r->opt.target.arch ? r->opt.target.arch
							   : ""));
	if (r->gpu)
		json_object_set_new(r->json, "device",
				    json_string(r->device.name));
	json_object_set_new(r->json, "file", tc_json_text(r->args.file));
	json_object_set_new(r->json, "shape", shape);
	json_object_set_new(r->json, "tunables", tun);
}

static void
report_compile(Run *r)
{
	if (!r->args.json && r->args.source)
		printf("  source %s, %s %.1f ms%s\n", r->args.source,
		       r->info.from_cache ? "load from cache" : "compile",
		       r->info.total_seconds * 1e3,
		       r->info.rebuilt_corrupt ? " (corrupt cache entry rebuilt)"
						: "");
	else if (!r->args.json)
		printf("  translate %.1f ms, %s %.1f ms%s\n",
		       r->translate_s * 1e3,
		       r->info.from_cache ? "load from cache" : "compile",
		       r->info.total_seconds * 1e3,
		       r->info.rebuilt_corrupt ? " (corrupt cache entry rebuilt)"
						: "");
	json_object_set_new(r->json, "translate_ms",
			    json_real(r->translate_s * 1e3));
	json_object_set_new(r->json, "jit_ms",
			    json_real(r->info.total_seconds * 1e3));
	json_object_set_new(r->json, "compiler_ms",
			    json_real(r->info.compile_seconds * 1e3));
	json_object_set_new(r->json, "cache_hit",
			    json_boolean(r->info.from_cache));
	if (!r->gpu)
		return;
	const tilec_launch_config *c = &r->cfg;
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

/* Run the kernel once on the tensors' host contents.  On a GPU: copy
 * every tensor to the device, launch, wait, copy the outputs back; the
 * first-run time is the launch and the wait. */
static bool
run_kernel(Run *r)
{
	tilec_context *ctx = r->ctx;
	for (int i = 0; r->gpu && i < r->nparams; i++) {
		Param *p = &r->params[i];
		if (p->dev && tilec_memcpy_h2d(ctx, p->dev, p->data, p->bytes) !=
				      TILEC_OK) {
			errorf(r, "copying %s to the device failed: %s",
			       p->var->name, tilec_error(ctx));
			return false;
		}
	}
	double t0 = tilec_now();
	tilec_status st = TILEC_OK;
	if (!r->empty_grid)
		st = tilec_launch(r->entry, r->kargs, r->gpu ? &r->cfg : NULL);
	if (st == TILEC_OK && r->gpu)
		st = tilec_synchronize(ctx);
	r->first_run_s = tilec_now() - t0;
	if (st != TILEC_OK) {
		errorf(r, "launch failed: %s", tilec_error(ctx));
		return false;
	}
	for (int i = 0; r->gpu && i < r->nparams; i++) {
		Param *p = &r->params[i];
		if (p->dev && (p->role & ROLE_OUT) &&
		    tilec_memcpy_d2h(ctx, p->data, p->dev, p->bytes) !=
			    TILEC_OK) {
			errorf(r, "copying %s from the device failed: %s",
			       p->var->name, tilec_error(ctx));
			return false;
		}
	}
	return true;
}

/* "[12][7]" as a JSON array. */
static json_t *
index_json(const Param *p, size_t i)
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

/* One output's line of the report and its JSON object (appended to
 * outs).  Integer outputs show integers. */
static void
report_output(Run *r, const Param *p, const Compare *c, json_t *outs)
{
	char type[128], where[128];
	type_text(p, type, sizeof type);
	index_text(p, c->worst, where, sizeof where);
	const char *name = p->var->name;
	bool show_worst = c->exact ? c->mismatches > 0 : c->rel_err > r->tol;
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
			printf("max rel err %.2e (tol %.3g)", c->rel_err, r->tol);
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
		if (c->untouched)
			printf(", %zu untouched as in the reference", c->untouched);
		if (c->nan_mismatch)
			printf(", %zu NaN/inf mismatches", c->nan_mismatch);
		printf("  %s\n", c->ok ? "ok" : "FAIL");
	}
	json_t *o = json_object();
	json_object_set_new(o, "name", json_string(name));
	json_object_set_new(o, "type", json_string(type));
	json_object_set_new(o, "exact", json_boolean(c->exact));
	json_object_set_new(o, "max_rel_err", json_real(c->rel_err));
	if (c->exact) {
		json_object_set_new(o, "max_abs_err",
				    json_integer((json_int_t)c->max_abs_err));
		json_object_set_new(o, "max_abs_ref",
				    json_integer((json_int_t)c->max_abs_ref));
		json_object_set_new(o, "tol", json_integer(0));
		json_object_set_new(o, "mismatches",
				    json_integer((json_int_t)c->mismatches));
	} else {
		json_object_set_new(o, "max_abs_err", json_real(c->max_abs_err));
		json_object_set_new(o, "max_abs_ref", json_real(c->max_abs_ref));
		json_object_set_new(o, "tol", json_real(r->tol));
	}
	if (show_worst) {
		json_t *w = json_object();
		json_object_set_new(w, "index", index_json(p, c->worst));
		json_object_set_new(w, "got",
				    c->exact ? json_integer(c->worst_got_int)
					     : json_real(c->worst_got));
		json_object_set_new(w, "want",
				    c->exact ? json_integer(c->worst_want_int)
					     : json_real(c->worst_want));
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
	for (int i = 0; i < r->nparams; i++) {
		Param *p = &r->params[i];
		if (p->var->kind != TC_VAR_TENSOR)
			continue;
		if (p->role == ROLE_OUT) {
			poison(p->data, p->var->dtype, p->count, p->bytes);
			poison(p->ref, p->var->dtype, p->count, p->bytes);
		} else if (p->ref != p->data) {
			memcpy(p->ref, p->data, p->bytes);
		}
	}
	/* The reference first: an out-of-bounds access it reports would
	 * likely crash the compiled kernel. */
	double t0 = tilec_now();
	TcDiags quiet;
	tc_diags_init(&quiet, r->args.file, r->text, r->len);
	bool ok = tc_interp_run(r->kernel, r->rargs, !r->args.check, &r->stats,
				r->args.check ? &r->ref_diags : &quiet);
	tc_diags_free(&quiet);
	r->reference_s = tilec_now() - t0;
	if (r->args.check) {
		json_object_set_new(r->json, "reference_ms",
				    json_real(r->reference_s * 1e3));
		if (!ok) {
			/* Integer inputs at their default values (+-1 .. 7) are
			 * the likely cause of an access out of bounds. */
			TcBuf ints;
			tc_buf_init(&ints);
			for (int i = 0; i < r->nparams; i++) {
				const Param *p = &r->params[i];
				if (p->var->kind == TC_VAR_TENSOR &&
				    (p->role & ROLE_IN) && !p->ranged &&
				    tc_dtype_is_int(p->var->dtype) &&
				    p->var->dtype != TC_DT_BOOL)
					tc_buf_printf(&ints, "%s%s",
						      ints.len ? ", " : "",
						      p->var->name);
			}
			if (ints.len)
				errorf(r, "the reference interpreter stopped on an "
				       "error in the tile program (above); the "
				       "integer inputs %s hold random values in "
				       "+-1 .. 7: if they are indices, give their "
				       "values with --range NAME=LO:HI",
				       ints.data);
			else
				errorf(r, "the reference interpreter stopped on an "
				       "error in the tile program (above)");
			tc_buf_free(&ints);
			return EXIT_MISMATCH;
		}
	}
	if (!run_kernel(r))
		return EXIT_STOPPED;
	if (!r->args.check)
		return EXIT_PASS;
	if (!r->args.json)
		printf("  first run %.3f ms, reference %.1f ms\n",
		       r->first_run_s * 1e3, r->reference_s * 1e3);

	int status = EXIT_PASS;
	json_t *outs = json_array();
	for (int i = 0; i < r->nparams; i++) {
		Param *p = &r->params[i];
		if (p->var->kind != TC_VAR_TENSOR || !(p->role & ROLE_OUT))
			continue;
		Compare c;
		compare(p, r->tol, &c);
		report_output(r, p, &c, outs);
		if (!c.ok)
			status = EXIT_MISMATCH;
	}
	json_object_set_new(r->json, "outputs", outs);
	return status;
}

/* Time the kernel over rotating copies of its tensors. */
static int
bench(Run *r)
{
	size_t set_bytes = 0;
	for (int i = 0; i < r->nparams; i++)
		set_bytes += r->params[i].bytes;
	int nsets = 1;
	if (set_bytes > 0) {
		long long want = BENCH_ROTATE_BYTES / (long long)set_bytes + 1;
		long long cap = BENCH_MEMORY_BUDGET / (long long)set_bytes;
		nsets = (int)(want < cap ? want : cap);
		if (nsets > BENCH_MAX_SETS)
			nsets = BENCH_MAX_SETS;
		if (nsets < 1)
			nsets = 1;
	}
	void ***sets = calloc((size_t)nsets, sizeof *sets);
	void **slots = calloc((size_t)nsets * (size_t)r->nparams + 1,
			      sizeof *slots);
	bool ok = sets && slots;
	if (ok)
		sets[0] = r->kargs;
	for (int s = 1; ok && s < nsets; s++) {
		sets[s] = calloc((size_t)r->nparams + 1, sizeof **sets);
		if (!sets[s]) {
			ok = false;
			break;
		}
		for (int i = 0; i < r->nparams; i++) {
			Param *p = &r->params[i];
			if (p->var->kind != TC_VAR_TENSOR) {
				sets[s][i] = r->kargs[i];
				continue;
			}
			void *copy = NULL;
			if (r->gpu) {
				ok = tilec_alloc(r->ctx, p->bytes, &copy) ==
					     TILEC_OK &&
				     tilec_memcpy_h2d(r->ctx, copy, p->data,
						      p->bytes) == TILEC_OK;
			} else if ((copy = alloc_tensor(p->bytes))) {
				memcpy(copy, p->data, p->bytes);
			}
			slots[s * r->nparams + i] = copy;
			if (!copy || !ok) {
				ok = false;
				break;
			}
			sets[s][i] = &slots[s * r->nparams + i];
		}
	}
	int status = EXIT_PASS;
	tilec_bench_result res;
	if (!ok) {
		if (r->gpu)
			errorf(r, "cannot make %d input sets on the device: %s",
			       nsets, tilec_error(r->ctx));
		else
			errorf(r, "out of memory for %d input sets", nsets);
		status = EXIT_STOPPED;
	} else if (r->empty_grid) {
		errorf(r, "nothing to time: the grid is empty");
		status = EXIT_STOPPED;
	} else if (tilec_bench(r->entry, (void **const *)sets, nsets,
			       r->gpu ? &r->cfg : NULL,
			       r->args.warmup, r->args.repeat,
			       &res) != TILEC_OK) {
		errorf(r, "timing failed: %s", tilec_error(r->ctx));
		status = EXIT_STOPPED;
	} else {
		double flops = r->args.flops > 0 ? r->args.flops
						 : r->stats.gemm_flops;
		double gbps = (double)set_bytes / res.median_s / 1e9;
		if (!r->args.json) {
			printf("  time %.3f ms median of %d (min %.3f, %d input "
			       "sets), %.1f GB/s",
			       res.median_s * 1e3, res.runs, res.min_s * 1e3,
			       nsets, gbps);
			if (flops > 0)
				printf(", %.1f GFLOP/s", flops / res.median_s / 1e9);
			printf("\n");
		}
		json_t *b = json_object();
		json_object_set_new(b, "median_ms", json_real(res.median_s * 1e3));
		json_object_set_new(b, "min_ms", json_real(res.min_s * 1e3));
		json_object_set_new(b, "mean_ms", json_real(res.mean_s * 1e3));
		json_object_set_new(b, "runs", json_integer(res.runs));
		json_object_set_new(b, "input_sets", json_integer(nsets));
		json_object_set_new(b, "bytes", json_real((double)set_bytes));
		json_object_set_new(b, "gbps", json_real(gbps));
		json_object_set_new(b, "flops", json_real(flops));
		json_object_set_new(b, "flops_from",
				    json_string(r->args.flops > 0 ? "--flops"
								  : "tile_gemm"));
		if (flops > 0)
			json_object_set_new(b, "gflops",
					    json_real(flops / res.median_s / 1e9));
		json_object_set_new(r->json, "bench", b);
	}
	for (int s = 1; sets && s < nsets; s++) {
		for (int i = 0; slots && i < r->nparams; i++) {
			if (r->gpu)
				tilec_free(r->ctx, slots[s * r->nparams + i]);
			else
				free(slots[s * r->nparams + i]);
		}
		free(sets[s]);
	}
	free(sets);
	free(slots);
	return status;
}

static int
run(Run *r, int argc, char **argv)
{
	int status = parse_args(r, argc, argv);
	if (status >= 0)
		return status;
	RunArgs *a = &r->args;
	if (tilec_backend_from_name(a->target) < 0 ||
	    (a->arch && !tc_options_init(&r->opt, a->target, a->arch))) {
		TcBuf why;
		tc_buf_init(&why);
		tc_target_explain(&why, a->target, a->arch);
		errorf(r, "%s", why.data);
		tc_buf_free(&why);
		return EXIT_STOPPED;
	}
	if (!open_context(r))
		return EXIT_STOPPED;
	if (!(r->text = tc_read_file(a->file, &r->len))) {
		errorf(r, "cannot read %s: %s", a->file, strerror(errno));
		return EXIT_STOPPED;
	}
	const char *arch = a->arch;
	if (r->gpu && !arch && !(arch = gpu_translator_arch(r)))
		return EXIT_STOPPED;
	if (!tc_options_init(&r->opt, a->target, arch)) {
		TcBuf why;
		tc_buf_init(&why);
		tc_target_explain(&why, a->target, arch);
		errorf(r, "%s", why.data);
		tc_buf_free(&why);
		return EXIT_STOPPED;
	}
	r->opt.ndefines = a->ndefines;
	for (int i = 0; i < a->ndefines; i++) {
		r->opt.define_name[i] = a->define_name[i];
		r->opt.define_value[i] = a->define_value[i];
		r->opt.define_loc[i] = (TcLoc){ "<command line>", 0, 0 };
	}
	tc_diags_init(&r->ref_diags, a->file, r->text, r->len);
	tc_diags_init(&r->gen_diags, a->file, r->text, r->len);
	r->ref_diags.to_stderr = !r->quiet;
	r->ref_arena = tc_arena_new();
	r->gen_arena = tc_arena_new();
	if (a->config) {
		/* The record's values after the -D bindings, which win. */
		char device[256];
		tc_tune_device_name(a->target, r->device.name, device,
				    sizeof device);
		if (!tc_config_apply(a->config, r->text, r->len, device,
				     r->ref_arena, &r->opt, &r->ref_diags)) {
			errorf(r, "cannot use the tuning record %s", a->config);
			return EXIT_STOPPED;
		}
	}
	if (!load_reference(r))
		return EXIT_STOPPED;

	const TcKernel *k = r->kernel;
	r->nparams = k->params.len;
	r->params = calloc((size_t)r->nparams + 1, sizeof *r->params);
	if (!r->params) {
		errorf(r, "out of memory");
		return EXIT_STOPPED;
	}
	int *role = calloc((size_t)r->nparams + 1, sizeof *role);
	if (!role) {
		errorf(r, "out of memory");
		return EXIT_STOPPED;
	}
	tc_tensor_roles(k, role);
	for (int i = 0; i < r->nparams; i++) {
		r->params[i].var = k->params.items[i];
		r->params[i].role = (Role)((role[i] & TC_ROLE_READ ? ROLE_IN : 0) |
					   (role[i] & TC_ROLE_WRITE ? ROLE_OUT : 0));
	}
	free(role);
	for (int i = 0; i < r->nparams; i++)
		if (r->params[i].var->kind == TC_VAR_TENSOR &&
		    (r->params[i].var->is_const || r->params[i].role == 0))
			r->params[i].role = ROLE_IN;
	if (!bind_scalars(r) || !setup_params(r) || !resolve_ranges(r))
		return EXIT_STOPPED;
	r->tol = a->tol >= 0 ? a->tol : default_tolerance(k);
	report_header(r);

	if (!translate(r) || !jit(r))
		return EXIT_STOPPED;
	if (r->gpu && (!launch_config(r) || !setup_device(r)))
		return EXIT_STOPPED;
	report_compile(r);
	for (int i = 0; i < r->nparams; i++) {
		Param *p = &r->params[i];
		if (p->var->kind != TC_VAR_TENSOR || !(p->role & ROLE_IN))
			continue;
		if (p->ranged)
			tc_elem_fill_range(p->var->dtype, p->data, p->count,
					   a->seed, p->var->param, p->lo, p->hi);
		else
			tc_elem_fill_random(p->var->dtype, p->data, p->count,
					    a->seed, p->var->param);
	}
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

int
tc_run_report(int argc, char **argv, char **report)
{
	Run r;
	memset(&r, 0, sizeof r);
	r.quiet = true;
	r.json = json_object();
	int status = run(&r, argc, argv);
	*report = NULL;
	if (r.json) {
		if (!json_object_get(r.json, "ok"))
			json_object_set_new(r.json, "ok", json_false());
		/* What the translator and the reference said, which a quiet
		 * run does not print. */
		TcBuf diags;
		tc_buf_init(&diags);
		tc_buf_puts(&diags, r.ref_diags.text.data ? r.ref_diags.text.data
							  : "");
		tc_buf_puts(&diags, r.gen_diags.text.data ? r.gen_diags.text.data
							  : "");
		if (diags.len)
			json_object_set_new(r.json, "diagnostics",
					    json_string(diags.data));
		tc_buf_free(&diags);
		*report = json_dumps(r.json, JSON_PRESERVE_ORDER);
	}
	run_free(&r);
	return status;
}
