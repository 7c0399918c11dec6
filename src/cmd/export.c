/*
 * export.c - `tilec export`: kernels to vendor into another project.
 *
 * Input: a tile program, a target, tunable bindings (-D, --config RECORD)
 * and an output directory (docs/export.md).  Output, per kernel K:
 *
 *   DIR/K.c (openmp), K.cu (cuda) or K.hip (hip): the translated kernel,
 *       standalone (the helper headers inlined, nothing of tilec
 *       included), then a launch function K_launch with the kernel's
 *       parameters as plain C types: on the CPU a call of the kernel,
 *       which runs the grid itself; on GPUs the grid and dynamic shared
 *       memory computed from the arguments as the launch manifest says,
 *       the shared-memory opt-in above 48 KiB, and cudaLaunchKernel /
 *       hipLaunchKernel on the caller's stream;
 *   DIR/K.h: a C header (usable from C++) declaring K_launch, with the
 *       tensors' shapes and element formats in its comment;
 *   DIR/K.launch.json: the launch manifest, for callers that load a
 *       fatbin or code object through the driver API instead.
 *
 * With --no-standalone the sources include their helpers, which are
 * written under DIR/tilec/ (for CUDA and HIP with gpu/tilec_gpu.h, which
 * both GPU helper headers include).  Every file is written whole or not
 * at all (temporary file, then rename); nothing is written unless every
 * kernel translated.
 *
 * Invariants relied on: tc_translate has bound every tunable, so grid
 * extents are expressions over scalar parameters and tunables only; the
 * emitters' parameter types are the ones in param_c_type below (CUDA and
 * HIP pass i8/u8 scalars as int and f16/bf16 scalars as float).
 */
#include "ir/tilec_int.h"
#include "tilec_runtime.h"
#include "tilec_version.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { EXIT_OK = 0, EXIT_ERROR = 1, EXIT_USAGE = 2 };

/* The license exported files carry: theirs is tilec's (meson.build,
 * LICENSE), since they hold its templates inlined. */
#define EXPORT_LICENSE "MIT"

/* Tuning records one entry point picks from. */
#define EXPORT_MAX_RECORDS 16

/* Parameters of a launch function: the kernel's (the translator takes at
 * most 64) and the stream. */
#define MAX_ITEMS 80

/* The command line. */
typedef struct ExportArgs {
	const char *file;       /* the tile program */
	const char *target;     /* -t */
	const char *arch;       /* --arch */
	const char *kernel;     /* --kernel, or NULL for every kernel */
	const char *dir;        /* -o DIR */
	const char *config;     /* --config RECORD (the first) */
	int nconfigs;           /* --config given this often: more than one
				   exports one entry point over them all
				   (export_dispatch) */
	const char *configs[EXPORT_MAX_RECORDS];
	const char *suffix;     /* after the kernel's name (a record's
				   variant in a dispatch), or NULL */
	char sha256[65];        /* the tile program's SHA-256, in hex */
	const char *prefix;     /* --prefix: put before every exported name */
	bool standalone;        /* helpers inlined (default) */
	bool json;              /* --json: report what was written as JSON */
	TcTma tma;              /* --tma, --no-tma (sm_90a) */
	bool no_tma_store;      /* --no-tma-store (sm_90a) */
	bool no_half_pairs;     /* --no-half-pairs (CUDA) */
	int copy_plans;         /* --copy-plans 1, --no-copy-plans -1 */
	TcWarpSpec ws;          /* --warp-specialize, --no-warp-specialize,
				   --persistent */
	int cpu_strip;          /* --cpu-strip (TcOptions.cpu_strip) */
	int ndefines;           /* -D bindings */
	char *define_name[TC_MAX_DEFINES];
	long long define_value[TC_MAX_DEFINES];
} ExportArgs;

/* What differs between the GPU runtimes in the launch function. */
typedef struct GpuApi {
	const char *include;    /* the runtime header */
	const char *error_t;    /* its error type */
	const char *success;    /* its success value */
	const char *bad_config; /* the error for a grid it cannot launch */
	const char *set_attr;   /* the function-attribute setter */
	const char *smem_attr;  /* the dynamic shared memory attribute */
	const char *launch;     /* the launch call */
	const char *stream_t;   /* its stream type */
	const char *compiler;   /* what builds the file */
	long long max_grid_yz;  /* grid y and z limit; 0 for none */
	/* The current device, its attribute query and SM count attribute,
	 * and the last error (a persistent kernel's grid, docs/launch.md). */
	const char *get_device, *get_attr, *sms_attr, *last_error;
} GpuApi;

static const GpuApi cuda_api = {
	"cuda_runtime.h", "cudaError_t", "cudaSuccess",
	"cudaErrorInvalidConfiguration", "cudaFuncSetAttribute",
	"cudaFuncAttributeMaxDynamicSharedMemorySize", "cudaLaunchKernel",
	"cudaStream_t", "nvcc", 65535,
	"cudaGetDevice", "cudaDeviceGetAttribute",
	"cudaDevAttrMultiProcessorCount", "cudaGetLastError",
};

static const GpuApi hip_api = {
	"hip/hip_runtime.h", "hipError_t", "hipSuccess",
	"hipErrorInvalidConfiguration", "hipFuncSetAttribute",
	"hipFuncAttributeMaxDynamicSharedMemorySize", "hipLaunchKernel",
	"hipStream_t", "hipcc", 0,
	"hipGetDevice", "hipDeviceGetAttribute",
	"hipDeviceAttributeMultiprocessorCount", "hipGetLastError",
};

static void
usage(FILE *f)
{
	fputs("usage: tilec export FILE -o DIR [options]\n"
	      "\n"
	      "Write each kernel of FILE as a self-contained source plus a C "
	      "header\ndeclaring a launch function, to build with cc, nvcc or "
	      "hipcc alone.\n"
	      "\n"
	      "options:\n"
	      "  -t, --target T     openmp (default), cuda or hip\n"
	      "  --arch A           the target's architecture, as for tilec\n"
	      "  -o DIR             the directory to write (created if need "
	      "be)\n"
	      "  --kernel NAME      only this kernel\n"
	      "  -D NAME=VALUE      bind a tunable\n"
	      "  --config RECORD    bind a tuning record's values (-D wins);\n"
	      "                     given more than once (records of one "
	      "kernel at\n"
	      "                     different shapes), one K_launch picks "
	      "a record\n"
	      "                     by the launch's shape\n"
	      "  --prefix P         put P before every name exported (files "
	      "and symbols:\n"
	      "                     PK.c, PK_launch, ...), so that several "
	      "tunings of\n"
	      "                     one kernel link into one program\n"
	      "  --tma, --no-tma    on sm_90a, every pipelined tile copy that "
	      "fits by TMA,\n"
	      "                     or none (default: as tilec; K_launch "
	      "builds the maps)\n"
	      "  --no-tma-store     on sm_90a, epilogue tiles stored from "
	      "registers, not by\n"
	      "                     TMA through shared memory\n"
	      "  --half-pairs, --no-half-pairs\n"
	      "                     on CUDA, 4- and 8-bit integers into f16 "
	      "or bf16 two at\n"
	      "                     a time where exact (default), or one at "
	      "a time in f32\n"
	      "  --copy-plans, --no-copy-plans\n"
	      "                     on CUDA, a pipelined loop's copies set up "
	      "once, or every\n"
	      "                     iteration (default: off)\n"
	      "  --warp-specialize, --no-warp-specialize\n"
	      "                     on sm_90a, a producer warpgroup issues "
	      "the TMA copies,\n"
	      "                     or the program's threads do (default: as "
	      "tilec)\n"
	      "  --persistent       --warp-specialize, and one wave of blocks "
	      "that walk the\n"
	      "                     output tiles (default: as tilec)\n"
	      "  --cpu-strip=N      on the CPU, one thread runs N blocks of a "
	      "grid row\n"
	      "                     together (0: one block a call; default: "
	      "as tilec)\n"
	      "  --standalone       inline the helper headers (the default)\n"
	      "  --json             report the files written as one JSON "
	      "object\n"
	      "  --no-standalone    include them, and write them under "
	      "DIR/tilec/\n"
	      "  -h, --help\n"
	      "\n"
	      "Exit status: 0 written, 1 an error in the program or a file, "
	      "2 bad usage.\n", f);
}

static int
usage_error(const char *fmt, const char *arg)
{
	fputs("tilec export: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nTry 'tilec export --help'.\n", stderr);
	return EXIT_USAGE;
}

/* The options, as ids for parse_args's switch. */
enum {
	OPT_HELP = 1, OPT_STANDALONE, OPT_NO_STANDALONE, OPT_TARGET, OPT_ARCH,
	OPT_KERNEL, OPT_CONFIG, OPT_OUT, OPT_DEFINE, OPT_PREFIX, OPT_JSON, OPT_TMA, OPT_NO_TMA,
	OPT_WS, OPT_NO_WS, OPT_PERSISTENT, OPT_CPU_STRIP, OPT_NO_TMA_STORE,
	OPT_HALF_PAIRS, OPT_NO_HALF_PAIRS, OPT_COPY_PLANS, OPT_NO_COPY_PLANS,
};

static const TcOptSpec options[] = {
	{ "help", 'h', false, OPT_HELP },
	{ "standalone", 0, false, OPT_STANDALONE },
	{ "no-standalone", 0, false, OPT_NO_STANDALONE },
	{ "target", 't', true, OPT_TARGET },
	{ "arch", 0, true, OPT_ARCH },
	{ "kernel", 0, true, OPT_KERNEL },
	{ "config", 0, true, OPT_CONFIG },
	{ "prefix", 0, true, OPT_PREFIX },
	{ "json", 0, false, OPT_JSON },
	{ "tma", 0, false, OPT_TMA },
	{ "no-tma", 0, false, OPT_NO_TMA },
	{ "no-tma-store", 0, false, OPT_NO_TMA_STORE },
	{ "half-pairs", 0, false, OPT_HALF_PAIRS },
	{ "no-half-pairs", 0, false, OPT_NO_HALF_PAIRS },
	{ "copy-plans", 0, false, OPT_COPY_PLANS },
	{ "no-copy-plans", 0, false, OPT_NO_COPY_PLANS },
	{ "warp-specialize", 0, false, OPT_WS },
	{ "no-warp-specialize", 0, false, OPT_NO_WS },
	{ "persistent", 0, false, OPT_PERSISTENT },
	{ "cpu-strip", 0, true, OPT_CPU_STRIP },
	{ NULL, 'o', true, OPT_OUT },
	{ NULL, 'D', true, OPT_DEFINE },
	{ 0 },
};

/* Whether s can start a C identifier: non-empty, [A-Za-z_][A-Za-z0-9_]*. */
static bool
identifier_part(const char *s)
{
	if (!*s || (*s >= '0' && *s <= '9'))
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

/* Returns -1 to go on, else an exit status. */
static int
parse_args(ExportArgs *x, int argc, char **argv)
{
	x->target = "openmp";
	x->standalone = true;
	TcOptParser p;
	tc_opt_init(&p, argc, argv);
	int id;
	while ((id = tc_opt_next(&p, options)) != TC_OPT_END) {
		const char *v = p.value;
		switch (id) {
		case TC_OPT_OPERAND:
			if (x->file)
				return usage_error("more than one input file: "
						   "'%s'", v);
			x->file = v;
			break;
		case TC_OPT_UNKNOWN: {
			char hint[96];
			fprintf(stderr, "tilec export: unknown option '%s'%s\n",
				p.arg,
				tc_opt_suggest(p.arg, options, hint, sizeof hint));
			fputs("Try 'tilec export --help'.\n", stderr);
			return EXIT_USAGE;
		}
		case TC_OPT_MISSING:
			return usage_error("option '%s' needs a value", p.arg);
		case OPT_HELP:
			usage(stdout);
			return EXIT_OK;
		case OPT_STANDALONE: x->standalone = true; break;
		case OPT_NO_STANDALONE: x->standalone = false; break;
		case OPT_TARGET: x->target = v; break;
		case OPT_ARCH: x->arch = v; break;
		case OPT_KERNEL: x->kernel = v; break;
		case OPT_CONFIG:
			if (x->nconfigs == EXPORT_MAX_RECORDS)
				return usage_error("more than 16 records (--config "
						   "'%s')", v);
			x->configs[x->nconfigs++] = v;
			x->config = x->configs[0];
			break;
		case OPT_OUT:
			if (!*v)
				return usage_error("%s", "-o wants a directory, "
						   "not an empty name");
			x->dir = v;
			break;
		case OPT_JSON: x->json = true; break;
		case OPT_TMA: x->tma = TC_TMA_ALL; break;
		case OPT_NO_TMA: x->tma = TC_TMA_OFF; break;
		case OPT_NO_TMA_STORE: x->no_tma_store = true; break;
		case OPT_HALF_PAIRS: x->no_half_pairs = false; break;
		case OPT_NO_HALF_PAIRS: x->no_half_pairs = true; break;
		case OPT_COPY_PLANS: x->copy_plans = 1; break;
		case OPT_NO_COPY_PLANS: x->copy_plans = -1; break;
		case OPT_WS: x->ws = TC_WS_ON; break;
		case OPT_NO_WS: x->ws = TC_WS_OFF; break;
		case OPT_PERSISTENT: x->ws = TC_WS_PERSISTENT; break;
		case OPT_CPU_STRIP:
			if (!tc_opt_cpu_strip(v, &x->cpu_strip))
				return usage_error(TC_OPT_CPU_STRIP_WANTS
						   ", not '%s'", v);
			break;
		case OPT_PREFIX:
			if (!identifier_part(v))
				return usage_error("--prefix wants the start of a "
						   "C identifier (letters, digits, "
						   "'_', not a digit first), not "
						   "'%s'", v);
			/* tilec_ names are the generated code's helpers
			 * (tilec_extent, tilec_ceildiv, ...), as the
			 * language reserves them for kernels. */
			if (strncmp(v, "tilec_", 6) == 0)
				return usage_error("--prefix '%s' begins with "
						   "'tilec_', which names the "
						   "generated code's own helpers; "
						   "choose another", v);
			x->prefix = v;
			break;
		case OPT_DEFINE:
			if (x->ndefines == TC_MAX_DEFINES ||
			    !tc_opt_define(v, &x->define_name[x->ndefines],
					   &x->define_value[x->ndefines]))
				return usage_error("-D wants NAME=INTEGER, not "
						   "'%s'", v);
			x->ndefines++;
			break;
		}
	}
	if (!x->file)
		return usage_error("%s", "no input file");
	if (!x->dir)
		return usage_error("%s", "no output directory (-o DIR)");
	return -1;
}

/* --- Types and expressions ------------------------------------------------ */

/* How the header describes an element format. */
static const char *
element_note(TcDtype t)
{
	switch (t) {
	case TC_DT_F16: return "IEEE half bit patterns";
	case TC_DT_BF16: return "bfloat16 bit patterns";
	case TC_DT_FP8E4M3: return "OCP fp8 E4M3 bytes";
	case TC_DT_FP8E5M2: return "OCP fp8 E5M2 bytes";
	case TC_DT_I4: return "signed 4-bit, two per byte, low nibble first";
	case TC_DT_BOOL: return "one byte each";
	default: return NULL;
	}
}

/* "const uint16_t *A" or "int M": the parameter as abi.c passes it. */
static char *
param_text(TcArena *a, const TcAbiParam *p)
{
	return tc_fmt(a, "%s%s%s", p->c_type, p->tensor ? "" : " ",
		      p->var->name);
}

/* Print `tabs` tabs, then `head items, ... tail`, items separated by ", "
 * and wrapped at 80 columns (tabs count 8), continuation lines aligned
 * after the head, as clang-format breaks them. */
static void
print_wrapped(TcBuf *b, int tabs, const char *head, char **items, int n,
	      const char *tail)
{
	int start = tabs * 8 + (int)strlen(head), col = start;
	for (int t = 0; t < tabs; t++)
		tc_buf_puts(b, "\t");
	tc_buf_puts(b, head);
	for (int i = 0; i < n; i++) {
		bool last = i + 1 == n;
		int len = (int)strlen(items[i]);
		int w = len + (last ? (int)strlen(tail) : 1);
		if (i > 0 && col + 1 + w > 80) {
			tc_buf_puts(b, "\n");
			for (int t = 0; t < tabs; t++)
				tc_buf_puts(b, "\t");
			tc_buf_printf(b, "%*s", start - tabs * 8, "");
			col = start;
		} else if (i > 0) {
			tc_buf_puts(b, " ");
			col++;
		}
		tc_buf_printf(b, "%s%s", items[i], last ? "" : ",");
		col += len + (last ? 0 : 1);
	}
	tc_buf_printf(b, "%s\n", tail);
}

/* Comment lines starting with `lead` ("//", " *"), words wrapped at 80
 * columns; text goes through tc_quote_comment (it holds paths). */
static void
print_comment_lines(TcBuf *b, const char *lead, const char *text)
{
	int col = 0, gap = 1;
	TcBuf safe;
	tc_buf_init(&safe);
	tc_quote_comment(&safe, text);
	const char *p = safe.data ? safe.data : "";
	while (*p) {
		size_t n = strcspn(p, " ");
		if (col > 0 && col + gap + (int)n > 80) {
			tc_buf_puts(b, "\n");
			col = 0;
		}
		if (col == 0) {
			tc_buf_puts(b, lead);
			col = (int)strlen(lead);
			gap = 1;
		}
		/* Two spaces after a sentence stay two. */
		tc_buf_printf(b, "%*s%.*s", gap, "", (int)n, p);
		col += gap + (int)n;
		p += n;
		for (gap = 0; *p == ' '; p++)
			gap++;
	}
	tc_buf_puts(b, "\n");
	tc_buf_free(&safe);
}

/* A grid extent as C over the launch function's parameters: tunables
 * become their values, integer helpers the file's own.  False if the
 * expression uses anything else. */
static bool
grid_expr(TcBuf *b, const TcExpr *e, const char *prefix, unsigned *helpers)
{
	switch (e->kind) {
	case TC_EX_INT:
		tc_buf_printf(b, "%lld", e->u.ival);
		return true;
	case TC_EX_VAR:
		if (e->u.var->kind == TC_VAR_TUNABLE) {
			tc_buf_printf(b, "%lld", e->u.var->value);
			return true;
		}
		if (e->u.var->kind != TC_VAR_SCALAR ||
		    !tc_dtype_is_int(e->u.var->dtype))
			return false;
		tc_buf_printf(b, "(long long)%s", e->u.var->name);
		return true;
	case TC_EX_SMS:
		/* The launch function's `sms`, read from the device. */
		tc_buf_puts(b, "(long long)sms");
		return true;
	case TC_EX_BINARY:
		tc_buf_puts(b, "(");
		if (!grid_expr(b, e->u.bin.lhs, prefix, helpers))
			return false;
		tc_buf_printf(b, " %s ", tc_binop_name(e->u.bin.op));
		if (!grid_expr(b, e->u.bin.rhs, prefix, helpers))
			return false;
		tc_buf_puts(b, ")");
		return true;
	case TC_EX_UNARY:
		tc_buf_printf(b, "(%s", tc_unop_name(e->u.un.op));
		if (!grid_expr(b, e->u.un.arg, prefix, helpers))
			return false;
		tc_buf_puts(b, ")");
		return true;
	case TC_EX_SELECT:
		tc_buf_puts(b, "(");
		if (!grid_expr(b, e->u.sel.cond, prefix, helpers))
			return false;
		tc_buf_puts(b, " ? ");
		if (!grid_expr(b, e->u.sel.then, prefix, helpers))
			return false;
		tc_buf_puts(b, " : ");
		if (!grid_expr(b, e->u.sel.els, prefix, helpers))
			return false;
		tc_buf_puts(b, ")");
		return true;
	case TC_EX_CAST: {
		/* The cast's own conversion, then back to long long. */
		const char *to;
		switch (e->dtype) {
		case TC_DT_I64: to = ""; break;
		case TC_DT_I32: to = "(int)"; break;
		case TC_DT_I8: to = "(signed char)"; break;
		case TC_DT_U8: to = "(unsigned char)"; break;
		case TC_DT_BOOL: to = "!!"; break;
		case TC_DT_I4: to = NULL; break;
		default: return false;
		}
		tc_buf_puts(b, to ? "((long long)" : "(((");
		if (to)
			tc_buf_puts(b, to);
		tc_buf_puts(b, "(");
		if (!grid_expr(b, e->u.cast.arg, prefix, helpers))
			return false;
		/* i4: the low 4 bits as a signed value. */
		tc_buf_puts(b, to ? "))" : ") & 15) ^ 8) - 8)");
		return true;
	}
	case TC_EX_CALL: {
		const char *fn;
		switch (e->u.call.fn) {
		case TC_FN_CEILDIV: fn = "ceildiv"; *helpers |= 1; break;
		case TC_FN_MIN: fn = "min"; *helpers |= 2; break;
		case TC_FN_MAX: fn = "max"; *helpers |= 4; break;
		default: return false;
		}
		tc_buf_printf(b, "%s_%s(", prefix, fn);
		for (int i = 0; i < e->u.call.nargs; i++) {
			tc_buf_puts(b, i ? ", " : "");
			if (!grid_expr(b, e->u.call.args[i], prefix, helpers))
				return false;
		}
		tc_buf_puts(b, ")");
		return true;
	}
	default:
		return false;
	}
}

/* --- The launch function ------------------------------------------------------ */

/* The parameters of K_launch, and for GPUs the stream. */
static int
launch_params(TcArena *a, const TcAbi *abi, bool gpu, char **items)
{
	int n = 0;
	for (int i = 0; i < abi->nparams; i++)
		items[n++] = param_text(a, &abi->params[i]);
	if (gpu)
		items[n++] = "void *stream";
	return n;
}

/* The CPU's launch: the kernel runs the grid itself.  For a vector ISA
 * the CPU is asked first, so a machine without it gets a sentence and -1
 * rather than an illegal instruction. */
static void
cpu_launch(TcArena *a, const TcKernel *k, const TcTarget *t, const char *base,
	   TcBuf *b)
{
	char *items[MAX_ITEMS];
	/* The CPU's features the code needs (target.c), and the narrower
	 * archs that follow t in the table, to export for instead. */
	bool need = t->cpu_features[0] != NULL;
	TcBuf instead;
	tc_buf_init(&instead);
	for (int i = 0, after = 0; need && i < tc_ntargets; i++) {
		const TcTarget *o = &tc_targets[i];
		if (strcmp(o->name, t->name) != 0)
			continue;
		if (after)
			tc_buf_printf(&instead, "%s%s", after++ > 1 ? " or " : "",
				      o->arch);
		else if (strcmp(o->arch, t->arch) == 0)
			after = 1;
	}
	tc_buf_printf(b, "\n// ---- %s_launch (tilec export) ----\n", k->name);
	if (need)
		tc_buf_puts(b, "#include <stdio.h>\n\n");
	tc_buf_printf(b, "#include \"%s.h\"\n\n", base);
	if (need) {
		tc_buf_printf(b, "// Whether this CPU has what the code above was "
			      "generated for (%s).\n", t->arch);
		tc_buf_printf(b, "static int\n%s_launch_cpu_ok(void)\n{\n",
			      k->name);
		tc_buf_puts(b, "#if defined(__GNUC__) && (defined(__x86_64__) || "
			    "defined(__i386__))\n\t__builtin_cpu_init();\n"
			    "\treturn ");
		for (int i = 0; t->cpu_features[i]; i++)
			tc_buf_printf(b, "%s__builtin_cpu_supports(\"%s\")",
				      i ? " &&\n\t       " : "",
				      t->cpu_features[i]);
		/* AMX: CPUID and Linux's permission for the tile state
		 * (tilec_cpu.h), which __builtin_cpu_supports cannot ask
		 * everywhere. */
		if (t->amx)
			tc_buf_puts(b, " &&\n\t       tilec_amx_ready()");
		tc_buf_puts(b, ";\n#else\n\treturn 1;\n#endif\n}\n\n");
	}
	tc_buf_printf(b, "// The kernel with plain pointers: runs the whole "
		      "grid on the calling\n// thread's OpenMP team and "
		      "returns 0 when it is done%s.\n",
		      need ? "; -1, having run\n// nothing, on a CPU "
				  "without the instructions it uses" : "");
	tc_buf_puts(b, "int\n");
	int n = launch_params(a, tc_abi_of(a, k, t), false, items);
	print_wrapped(b, 0, tc_fmt(a, "%s_launch(", k->name), items, n, ")");
	tc_buf_puts(b, "{\n");
	if (need) {
		tc_buf_printf(b, "\tif (!%s_launch_cpu_ok()) {\n", k->name);
		const char *msg = tc_fmt(a, "%s_launch: %s.c was exported for "
					 "%s (%s), which this CPU lacks; export "
					 "it with --arch %s", k->name, base,
					 t->arch, t->cpu_spelled, instead.data);
		/* The message as adjacent literals, broken after a space so
		 * each line stays within 80 columns. */
		tc_buf_puts(b, "\t\tfputs(");
		for (const char *m = msg; *m;) {
			size_t piece = strlen(m);
			if (piece > 56) {
				piece = 56;
				while (piece > 1 && m[piece - 1] != ' ')
					piece--;
			}
			tc_buf_printf(b, "%s\"%.*s%s\"",
				      m == msg ? "" : "\n\t\t      ", (int)piece,
				      m, m[piece] ? "" : "\\n");
			m += piece;
		}
		tc_buf_puts(b, ",\n\t\t      stderr);\n\t\treturn -1;\n\t}\n");
	}
	/* Through void *: C11 has no implicit conversion from a pointer to
	 * const elements to a pointer to an array of them. */
	for (int i = 0; i < k->params.len; i++) {
		const TcVar *v = k->params.items[i];
		items[i] = v->kind == TC_VAR_SCALAR
				   ? (char *)v->name
				   : tc_fmt(a, "(void *)%s", v->name);
	}
	print_wrapped(b, 1, tc_fmt(a, "%s(", k->name), items, k->params.len,
		      ");");
	tc_buf_puts(b, "\treturn 0;\n}\n");
	tc_buf_free(&instead);
}

/* PREFIX_tensor_map: a kernel's tensor map (docs/launch.md, "Tensor
 * maps") built as the runtime builds it, through the driver's
 * cuTensorMapEncodeTiled, which the CUDA runtime hands out. */
static void
tensor_map_helper(TcBuf *b, const char *prefix)
{
	tc_buf_printf(b,
		"\n// Tensor map m of a dense tensor at base: dims and box innermost first,\n"
		"// rows of swizzle bytes.  Built (m->usable) when the base is 16-byte\n"
		"// aligned, every stride a whole 16-byte multiple and no extent 0 or\n"
		"// past 32 bits; otherwise the kernel runs its loop without TMA.\n"
		"static void\n%s_tensor_map(tilec::TensorMap *m, const void *base, int rank,\n"
		"    const long long *dims, const unsigned *box, int swizzle, int elem)\n{\n"
		"\ttypedef int (*Encode)(void *, int, unsigned, void *,\n"
		"\t    const unsigned long long *, const unsigned long long *,\n"
		"\t    const unsigned *, const unsigned *, int, int, int, int);\n"
		"\tstatic const unsigned ones[5] = { 1, 1, 1, 1, 1 };\n"
		"\tunsigned long long d[5], strides[4];\n"
		"\tunsigned long long stride = (unsigned long long)elem;\n"
		"\tvoid *fn = nullptr;\n"
		"\tcudaDriverEntryPointQueryResult found;\n"
		"\t*m = tilec::TensorMap{};\n"
		"\tif ((unsigned long long)base %% 16 != 0)\n\t\treturn;\n"
		"\tfor (int i = 0; i < rank; i++) {\n"
		"\t\tif (dims[i] < 1 || dims[i] > 0xffffffffLL || (i > 0 && stride %% 16 != 0))\n"
		"\t\t\treturn;\n"
		"\t\td[i] = (unsigned long long)dims[i];\n"
		"\t\tif (i > 0)\n\t\t\tstrides[i - 1] = stride;\n"
		"\t\tstride *= d[i];\n\t}\n"
		"\tif (d[0] * (unsigned long long)elem %% 16 != 0)\n\t\treturn;\n"
		"#if CUDART_VERSION >= 12050\n"
		"\tif (cudaGetDriverEntryPointByVersion(\"cuTensorMapEncodeTiled\", &fn, 12000,\n"
		"\t\t    cudaEnableDefault, &found) != cudaSuccess)\n\t\treturn;\n"
		"#else\n"
		"\tif (cudaGetDriverEntryPoint(\"cuTensorMapEncodeTiled\", &fn, cudaEnableDefault,\n"
		"\t\t    &found) != cudaSuccess)\n\t\treturn;\n"
		"#endif\n"
		"\tif (found != cudaDriverEntryPointSuccess || !fn)\n\t\treturn;\n"
		"\t// Elements as unsigned integers of their width, zeros outside the\n"
		"\t// tensor, 128-byte L2 promotion.\n"
		"\tconst int type = elem == 1 ? 0 : elem == 2 ? 1 : elem == 4 ? 2 : 4;\n"
		"\tconst int mode = swizzle == 128 ? 3 : swizzle == 64 ? 2 : 1;\n"
		"\tif (((Encode)fn)(m->desc, type, (unsigned)rank, (void *)base, d, strides, box,\n"
		"\t\t    ones, 0, mode, 2, 0) == 0)\n\t\tm->usable = 1;\n"
		"}\n", prefix);
}

/* The declarations and builds of the kernel's tensor maps in K_launch:
 * each tensor's extents from its shape, innermost first. */
static bool
tensor_maps(TcArena *a, const TcAbi *abi, const char *prefix, TcBuf *b,
	    unsigned *helpers, TcDiags *d)
{
	for (int i = 0; i < abi->ntmaps; i++) {
		const TcTensorMap *m = abi->tmaps[i];
		const TcVar *t = m->tensor;
		tc_buf_printf(b, "\t// %s: the tensor map of %s (box", m->name, t->name);
		for (int j = 0; j < t->rank; j++)
			tc_buf_printf(b, "%s%d", j ? " x " : " ", m->box[j]);
		tc_buf_printf(b, ", %d-byte swizzle).\n", m->swizzle);
		tc_buf_printf(b, "\tconst long long %s_dims[] = {", m->name);
		for (int j = t->rank - 1; j >= 0; j--) {
			TcBuf e;
			tc_buf_init(&e);
			if (!grid_expr(&e, t->shape[j], prefix, helpers)) {
				tc_diag(d, TC_ERROR, t->loc, "tensor '%s': its extents "
					"are not integer expressions over scalar "
					"parameters", t->name);
				tc_buf_free(&e);
				return false;
			}
			tc_buf_printf(b, "%s%s", j < t->rank - 1 ? ", " : " ", e.data);
			tc_buf_free(&e);
		}
		tc_buf_printf(b, " };\n\tstatic const unsigned %s_box[] = {", m->name);
		for (int j = t->rank - 1; j >= 0; j--)
			tc_buf_printf(b, "%s%d", j < t->rank - 1 ? ", " : " ", m->box[j]);
		tc_buf_printf(b, " };\n\ttilec::TensorMap %s;\n", m->name);
		tc_buf_printf(b, "\t%s_tensor_map(&%s, %s, %d, %s_dims, %s_box, %d, %d);\n",
			      prefix, m->name, t->name, t->rank, m->name, m->name,
			      m->swizzle, tc_dtype_storage_bits(t->dtype) / 8);
	}
	(void)a;
	return true;
}

/* The GPU's launch: grid and shared memory from the manifest, the
 * opt-in, the launch on the caller's stream. */
static bool
gpu_launch(TcArena *a, const TcKernel *k, const TcTarget *t, const GpuApi *api,
	   const char *base, TcBuf *b, TcDiags *d)
{
	char *items[MAX_ITEMS];
	const TcAbi *abi = tc_abi_of(a, k, t);
	const char *prefix = tc_fmt(a, "%s_launch", k->name);
	TcBuf grid[3];
	unsigned helpers = 0;
	for (int i = 0; i < 3; i++) {
		tc_buf_init(&grid[i]);
		if (!k->grid[i]) {
			tc_buf_puts(&grid[i], "1");
		} else if (!grid_expr(&grid[i], k->grid[i], prefix, &helpers)) {
			tc_diag(d, TC_ERROR, k->loc, "kernel '%s': its grid "
				"along %c is not an integer expression over "
				"scalar parameters", k->name, "xyz"[i]);
			for (int j = 0; j <= i; j++)
				tc_buf_free(&grid[j]);
			return false;
		}
	}
	tc_buf_printf(b, "\n// ---- %s_launch (tilec export) ----\n", k->name);
	tc_buf_printf(b, "#include <%s>\n\n#include \"%s.h\"\n", api->include,
		      base);
	if (helpers & 1)
		tc_buf_printf(b, "\nstatic long long\n%s_ceildiv(long long a, "
			      "long long b)\n{\n\treturn a / b + (a %% b > 0);\n}\n",
			      prefix);
	if (helpers & 2)
		tc_buf_printf(b, "\nstatic long long\n%s_min(long long a, long "
			      "long b)\n{\n\treturn a < b ? a : b;\n}\n", prefix);
	if (helpers & 4)
		tc_buf_printf(b, "\nstatic long long\n%s_max(long long a, long "
			      "long b)\n{\n\treturn a > b ? a : b;\n}\n", prefix);
	if (abi->ntmaps)
		tensor_map_helper(b, prefix);
	tc_buf_puts(b, "\n");
	print_comment_lines(b, "//", tc_fmt(a, "The grid and shared memory of %s.launch.json, "
				"computed from the arguments; the launch is "
				"asynchronous on `stream`.", base));
	tc_buf_puts(b, "extern \"C\" int\n");
	int n = launch_params(a, abi, true, items);
	print_wrapped(b, 0, tc_fmt(a, "%s(", prefix), items, n, ")");
	tc_buf_puts(b, "{\n");
	if (tc_expr_has_sms(k->grid[0])) {
		print_comment_lines(b, "\t//", "A persistent kernel: one wave "
				    "of blocks on the SMs of the current "
				    "device.");
		tc_buf_printf(b, "\tint device = 0, sms = 0;\n"
			      "\tif (%s(&device) != %s ||\n"
			      "\t    %s(&sms, %s, device) != %s)\n"
			      "\t\treturn (int)%s();\n", api->get_device,
			      api->success, api->get_attr, api->sms_attr,
			      api->success, api->last_error);
	}
	for (int i = 0; i < 3; i++) {
		/* Past 80 columns, after the '=' as clang-format breaks. */
		bool wide = 8 + 26 + grid[i].len > 80;
		tc_buf_printf(b, "\tconst long long grid_%c =%s%s;\n", "xyz"[i],
			      wide ? "\n\t    " : " ", grid[i].data);
	}
	tc_buf_puts(b, "\tif (grid_x <= 0 || grid_y <= 0 || grid_z <= 0)\n"
		    "\t\treturn 0; // an empty grid: nothing to launch\n");
	if (api->max_grid_yz)
		tc_buf_printf(b, "\tif (grid_x > 2147483647 || grid_y > %lld || "
			      "grid_z > %lld)\n\t\treturn (int)%s;\n",
			      api->max_grid_yz, api->max_grid_yz, api->bad_config);
	else
		tc_buf_printf(b, "\tif (grid_x > 2147483647 || grid_y > "
			      "2147483647 || grid_z > 2147483647)\n"
			      "\t\treturn (int)%s;\n", api->bad_config);
	tc_buf_printf(b, "\tconst dim3 grid((unsigned)grid_x, (unsigned)grid_y, "
		      "(unsigned)grid_z);\n");
	tc_buf_printf(b, "\tconst size_t smem = %lld;\n", abi->smem_bytes);
	tc_buf_printf(b, "\tconst void *kernel = (const void *)%s;\n", k->name);
	if (k->smem_bytes > t->smem_default) {
		tc_buf_printf(b, "\t// Above %lld KiB a kernel must opt in.\n",
			      t->smem_default / 1024);
		tc_buf_printf(b, "\t%s err = %s(\n\t    kernel, %s, (int)smem);\n",
			      api->error_t, api->set_attr, api->smem_attr);
		tc_buf_printf(b, "\tif (err != %s)\n\t\treturn (int)err;\n",
			      api->success);
	}
	if (!tensor_maps(a, abi, prefix, b, &helpers, d)) {
		for (int i = 0; i < 3; i++)
			tc_buf_free(&grid[i]);
		return false;
	}
	for (int i = 0; i < k->params.len; i++)
		items[i] = tc_fmt(a, "&%s", ((TcVar *)k->params.items[i])->name);
	for (int i = 0; i < abi->ntmaps; i++)
		items[k->params.len + i] = tc_fmt(a, "&%s", abi->tmaps[i]->name);
	print_wrapped(b, 1, "void *args[] = {", items, k->params.len + abi->ntmaps,
		      "};");
	char *call[6] = { "kernel", "grid", tc_fmt(a, "dim3(%lld)", abi->threads),
			  "args", "smem", tc_fmt(a, "(%s)stream", api->stream_t) };
	print_wrapped(b, 1, tc_fmt(a, "return (int)%s(", api->launch), call, 6,
		      ");");
	tc_buf_puts(b, "}\n");
	for (int i = 0; i < 3; i++)
		tc_buf_free(&grid[i]);
	return true;
}

/* K.h: the declaration, with what a caller must know in its comment. */
static void
header(TcArena *a, const TcProgram *p, const TcKernel *k, const TcTarget *t,
       const char *src_name, const GpuApi *api, const ExportArgs *x,
       const char *kernel, TcBuf *b)
{
	bool gpu = api != NULL;
	char *items[MAX_ITEMS];
	const char *guard = tc_fmt(a, "TILEC_EXPORT_%s_H", k->name);
	char *g = (char *)guard;
	for (; *g; g++)
		if (*g >= 'a' && *g <= 'z')
			*g = (char)(*g - 'a' + 'A');
	tc_buf_printf(b, "/* SPDX-License-Identifier: %s */\n", EXPORT_LICENSE);
	tc_buf_puts(b, "/*\n");
	print_comment_lines(b, " *", tc_fmt(a, "%s.h - launch the kernel %s%s%s, "
					    "exported by tilec %s (git %s) from "
					    "%s (SHA-256 %s) for %s/%s.",
					    k->name, kernel,
					    x->prefix || x->suffix ? " as " : "",
					    x->prefix || x->suffix ? k->name : "",
					    TILEC_VERSION, TILEC_GIT_REVISION,
					    p->path, x->sha256, t->name,
					    t->arch));
	if (p->tunables.len) {
		TcBuf tun;
		tc_buf_init(&tun);
		tc_buf_puts(&tun, "Tunables:");
		for (int i = 0; i < p->tunables.len; i++) {
			const TcVar *v = p->tunables.items[i];
			tc_buf_printf(&tun, " %s=%lld", v->name, v->value);
		}
		tc_buf_puts(b, " *\n");
		print_comment_lines(b, " *", tc_fmt(a, "%s.", tun.data));
		tc_buf_free(&tun);
	}
	tc_buf_puts(b, " *\n");
	if (gpu)
		print_comment_lines(b, " *", tc_fmt(a, "Build %s with %s alone (%s "
						    "%s=%s -c %s) and call %s_launch "
						    "from C or C++.  Tensors are "
						    "device pointers to row-major, "
						    "contiguous data:", src_name,
						    api->compiler, api->compiler,
						    t->kind == TC_TARGET_CUDA
							    ? "-arch"
							    : "--offload-arch",
						    t->arch, src_name, k->name));
	else
		print_comment_lines(b, " *", tc_fmt(a, "Build %s with a C11 "
						    "compiler and OpenMP (cc -O3 "
						    "-march=native -fopenmp "
						    "-fno-math-errno; the code uses "
						    "%s) and call %s_launch.  "
						    "Tensors are row-major and "
						    "contiguous:", src_name, t->arch,
						    k->name));
	for (int i = 0; i < k->params.len; i++) {
		const TcVar *v = k->params.items[i];
		if (v->kind != TC_VAR_TENSOR)
			continue;
		TcBuf dims;
		tc_buf_init(&dims);
		for (int j = 0; j < v->rank; j++) {
			tc_buf_puts(&dims, "[");
			tc_print_expr(&dims, v->shape[j]);
			tc_buf_puts(&dims, "]");
		}
		const char *note = element_note(v->dtype);
		tc_buf_printf(b, " *   %-8s %s%s%s%s%s%s\n", v->name,
			      v->is_const ? "const " : "", tc_dtype_name(v->dtype),
			      dims.data, note ? " (" : "", note ? note : "",
			      note ? ")" : "");
		tc_buf_free(&dims);
	}
	if (gpu)
		print_comment_lines(b, " *", tc_fmt(a, "The launch is asynchronous "
						    "on `stream` (a %s; NULL for "
						    "the default stream).  Returns "
						    "a %s: 0 when the launch was "
						    "accepted.", api->stream_t,
						    api->error_t));
	else
		print_comment_lines(b, " *", tc_fmt(a, "Returns 0 when the whole "
						    "grid has run%s.", strcmp(t->arch,
						    "generic") != 0 ? tc_fmt(a, "; -1, "
						    "running nothing, on a CPU "
						    "without %s (it says so on stderr)",
						    t->arch) : ""));
	tc_buf_puts(b, " */\n");
	tc_buf_printf(b, "#ifndef %s\n#define %s\n\n", guard, guard);
	tc_buf_puts(b, "#include <stdint.h>\n#ifndef __cplusplus\n"
		    "#include <stdbool.h>\n#endif\n\n");
	tc_buf_puts(b, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
	int n = launch_params(a, tc_abi_of(a, k, t), gpu, items);
	print_wrapped(b, 0, tc_fmt(a, "int %s_launch(", k->name), items, n, ");");
	tc_buf_puts(b, "\n#ifdef __cplusplus\n}\n#endif\n\n");
	tc_buf_printf(b, "#endif /* %s */\n", guard);
}

/* --- Files ------------------------------------------------------------------ */

/* One file to write once everything translated. */
typedef struct OutFile {
	char *path; /* under DIR (malloc'd) */
	char *text; /* contents (malloc'd) */
} OutFile;

/* mkdir -p for the directories above path. */
static bool
make_parents(const char *path)
{
	char *p = strdup(path);
	if (!p)
		return false;
	for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (mkdir(p, 0755) != 0 && errno != EEXIST) {
			free(p);
			return false;
		}
		*s = '/';
	}
	free(p);
	return true;
}

static void
add_file(OutFile *files, int *n, const char *dir, const char *name,
	 char *text)
{
	size_t len = strlen(dir) + strlen(name) + 2;
	/* -o vendor/ names vendor/gemm.cu, not vendor//gemm.cu. */
	size_t dlen = strlen(dir);
	while (dlen > 1 && dir[dlen - 1] == '/')
		dlen--;
	files[*n].path = malloc(len);
	if (files[*n].path)
		snprintf(files[*n].path, len, "%.*s/%s", (int)dlen, dir, name);
	files[*n].text = text;
	(*n)++;
}

/* --- Exporting ---------------------------------------------------------------- */

/* Translate kernel `name` and make its three files, named (and the
 * kernel's symbols) with --prefix before the kernel's name. */
static bool
export_kernel(ExportArgs *x, TcOptions *opt, const char *text,
	      const char *name, OutFile *files, int *nfiles, TcDiags *d)
{
	const TcBackend *be = tc_backend_find(opt->target.kind);
	TcArena *a = tc_arena_new();
	opt->kernel = name;
	TcProgram *p = NULL;
	TcBuf src;
	tc_buf_init(&src);
	bool ok = tc_compile(a, x->file, text, opt, d, &p) && d->errors == 0;
	TcKernel *k = NULL;
	for (int i = 0; ok && i < p->kernels.len; i++)
		if (strcmp(((TcKernel *)p->kernels.items[i])->name, name) == 0)
			k = p->kernels.items[i];
	/* The exported name: every symbol the emitters derive from the
	 * kernel's (the kernel, its CPU entry, the launch function and its
	 * helpers) and every file name follow it. */
	if (ok && k && (x->prefix || x->suffix)) {
		k->name = tc_fmt(a, "%s%s%s", x->prefix ? x->prefix : "", name,
				 x->suffix ? x->suffix : "");
		/* The kernel's own name passed parse's test; the new one
		 * must too (--prefix ex on a kernel p is exp). */
		if (tc_reserved_name(k->name)) {
			tc_diag(d, TC_ERROR, k->loc, "kernel '%s' would be "
				"exported as '%s', a name the C library or "
				"the generated code's helpers already use; "
				"choose another --prefix", name, k->name);
			ok = false;
		}
	}
	const char *base = k ? k->name : name;
	/* Where it came from, ahead of the emitter's own first line. */
	tc_buf_printf(&src, "// SPDX-License-Identifier: %s\n", EXPORT_LICENSE);
	print_comment_lines(&src, "//", tc_fmt(a, "Exported by tilec %s (git %s) "
						"from %s, SHA-256 %s.",
						TILEC_VERSION, TILEC_GIT_REVISION,
						x->file, x->sha256));
	if (ok && k) {
		/* Emitted on its own: an emitter starts the file (its
		 * comment, includes) only into an empty buffer. */
		TcBuf body;
		tc_buf_init(&body);
		ok = be->emit(p, k, &opt->target, opt, &body, d) &&
		     d->errors == 0;
		tc_buf_append(&src, body.data ? body.data : "", body.len);
		tc_buf_free(&body);
	}
	/* The launch function's locals; `device` and `sms` only where the
	 * grid reads the device's SMs. */
	static const char *const locals[] = { "kernel", "grid", "grid_x",
					      "grid_y", "grid_z", "smem",
					      "err", "args", "stream",
					      "device", "sms" };
	size_t nlocals = sizeof locals / sizeof locals[0] -
			 (k && tc_expr_has_sms(k->grid[0]) ? 0 : 2);
	const char *launch = k ? tc_fmt(a, "%s_launch", k->name) : NULL;
	for (int i = 0; ok && k && i < k->params.len; i++) {
		const TcVar *v = k->params.items[i];
		/* The launch function calls the kernel (and its helpers,
		 * KERNEL_launch_*) by name: a parameter of that name would
		 * hide it there. */
		if (strcmp(v->name, k->name) == 0 ||
		    strncmp(v->name, launch, strlen(launch)) == 0) {
			tc_diag(d, TC_ERROR, v->loc, "parameter '%s' has the "
				"name of %s, which the launch function calls; "
				"rename it to export", v->name,
				strcmp(v->name, k->name) == 0
					? "the exported kernel"
					: "a function of the export");
			ok = false;
			continue;
		}
		for (size_t j = 0; j < nlocals; j++)
			if (opt->target.kind != TC_TARGET_OPENMP &&
			    strcmp(v->name, locals[j]) == 0) {
				tc_diag(d, TC_ERROR, v->loc, "parameter '%s' has "
					"the name of a variable of the launch "
					"function; rename it to export", v->name);
				ok = false;
			}
	}
	if (ok && k && k->params.len > 64) {
		tc_diag(d, TC_ERROR, k->loc, "kernel '%s' has %d parameters; "
			"export handles 64", name, k->params.len);
		ok = false;
	}
	const GpuApi *api = opt->target.kind == TC_TARGET_CUDA ? &cuda_api
			    : opt->target.kind == TC_TARGET_HIP ? &hip_api
								 : NULL;
	char *src_name = tc_fmt(a, "%s%s", base, be->file_ext);
	if (ok && k) {
		if (api)
			ok = gpu_launch(a, k, &opt->target, api, base, &src, d);
		else
			cpu_launch(a, k, &opt->target, base, &src);
	}
	if (ok && k) {
		TcBuf h, m, l;
		tc_buf_init(&h);
		tc_buf_init(&m);
		tc_buf_init(&l);
		header(a, p, k, &opt->target, src_name, api, x, name, &h);
		/* The manifest, with the provenance members first. */
		tc_buf_printf(&m, "\"spdx_license\": \"%s\", \"tilec_version\": "
			      "\"%s\", \"tilec_revision\": \"%s\",\n "
			      "\"source_sha256\": \"%s\", ", EXPORT_LICENSE,
			      TILEC_VERSION, TILEC_GIT_REVISION, x->sha256);
		tc_launch_document(p, k, &opt->target, m.data, &l);
		tc_buf_free(&m);
		add_file(files, nfiles, x->dir, src_name, tc_buf_take(&src));
		add_file(files, nfiles, x->dir, tc_fmt(a, "%s.h", base),
			 tc_buf_take(&h));
		add_file(files, nfiles, x->dir, tc_fmt(a, "%s.launch.json", base),
			 tc_buf_take(&l));
	}
	tc_buf_free(&src);
	tc_arena_free(a);
	return ok && k;
}

/* --json: what was written, one object on stdout. */
static void
print_json(const ExportArgs *x, const TcOptions *opt, const TcProgram *p,
	   const OutFile *files, int nfiles, const int *kernel_files)
{
	json_t *o = json_object(), *ks = json_array(), *all = json_array();
	json_object_set_new(o, "file", tc_json_text(x->file));
	json_object_set_new(o, "source_sha256", json_string(x->sha256));
	json_object_set_new(o, "target", json_string(opt->target.name));
	json_object_set_new(o, "arch", json_string(opt->target.arch));
	json_object_set_new(o, "dir", tc_json_text(x->dir));
	for (int i = 0; i < p->kernels.len; i++) {
		const char *name = ((TcKernel *)p->kernels.items[i])->name;
		TcBuf b;
		tc_buf_init(&b);
		tc_buf_printf(&b, "%s%s", x->prefix ? x->prefix : "", name);
		json_t *k = json_object(), *kf = json_array();
		json_object_set_new(k, "name", json_string(b.data));
		tc_buf_puts(&b, "_launch");
		json_object_set_new(k, "launch", json_string(b.data));
		tc_buf_free(&b);
		for (int f = kernel_files[i]; f < kernel_files[i + 1]; f++)
			json_array_append_new(kf, tc_json_text(files[f].path));
		json_object_set_new(k, "files", kf);
		json_array_append_new(ks, k);
	}
	for (int f = 0; f < nfiles; f++)
		json_array_append_new(all, tc_json_text(files[f].path));
	json_object_set_new(o, "kernels", ks);
	json_object_set_new(o, "files", all);
	char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (s) {
		printf("%s\n", s);
		free(s);
	}
	json_decref(o);
}

/* --- One entry point over several tuning records (--config, more than once) --- */

/* One record of a dispatch. */
typedef struct Variant {
	const char *path;       /* the record */
	TcRecord rec;
	json_t *bucket;         /* its "shape_bucket" (rec's) */
	char suffix[16];        /* "_b0": after the kernel's name */
} Variant;

/* The integer scalar parameter of k named name, or NULL. */
static const TcVar *
int_scalar(const TcKernel *k, const char *name)
{
	for (int i = 0; i < k->params.len; i++) {
		const TcVar *v = k->params.items[i];
		if (v->kind == TC_VAR_SCALAR && tc_dtype_is_int(v->dtype) &&
		    strcmp(v->name, name) == 0)
			return v;
	}
	return NULL;
}

/* Read record r and check what the dispatch takes from it: the kernel,
 * and a shape bucket (record.c's rule reads it) of k's integer
 * scalars. */
static bool
variant_load(Variant *r, int index, TcBucket *b, const TcKernel *k,
	     TcDiags *d)
{
	if (!tc_record_load(&r->rec, r->path, d))
		return false;
	const char *kk[1] = { "kernel" };
	const char *kname = json_string_value(json_object_get(r->rec.root,
							      "kernel"));
	if (!kname || strcmp(kname, k->name) != 0) {
		tc_diag(d, TC_ERROR, tc_json_key_loc(r->path, r->rec.text, kk, 1),
			"key \"kernel\": the record is for %s, not %s",
			kname ? kname : "(no kernel)", k->name);
		return false;
	}
	if (!tc_bucket_read(&r->rec, index, b, d))
		return false;
	r->bucket = json_object_get(r->rec.root, "shape_bucket");
	for (int i = 0; i < b->n; i++)
		if (!int_scalar(k, b->name[i])) {
			const char *kp[2] = { "shape_bucket", b->name[i] };
			tc_diag(d, TC_ERROR, tc_json_key_loc(r->path, r->rec.text,
							     kp, 2),
				"key \"shape_bucket.%s\": %s has no integer "
				"scalar parameter of that name", b->name[i],
				k->name);
			return false;
		}
	return true;
}

/* "M <= 256 && N <= 256" over k's integer scalars in signature order,
 * as far as the bucket names them. */
static char *
bucket_test(TcArena *a, const TcKernel *k, json_t *bucket, const char *and)
{
	TcBuf b;
	tc_buf_init(&b);
	for (int i = 0; i < k->params.len; i++) {
		const TcVar *v = k->params.items[i];
		json_t *val = json_object_get(bucket, v->name);
		if (v->kind == TC_VAR_SCALAR && val)
			tc_buf_printf(&b, "%s%s <= %lld", b.len ? and : "",
				      v->name, (long long)json_integer_value(val));
	}
	char *r = tc_fmt(a, "%s", b.data ? b.data : "");
	tc_buf_free(&b);
	return r;
}

/* The record's chosen values, "BLOCK_M=64 BLOCK_N=128" (tunables of the
 * program only: tc_config_apply checked them). */
static char *
chosen_text(TcArena *a, const TcProgram *p, const Variant *r)
{
	json_t *chosen = json_object_get(r->rec.root, "chosen");
	TcBuf b;
	tc_buf_init(&b);
	for (int i = 0; i < p->tunables.len; i++) {
		const TcVar *t = p->tunables.items[i];
		json_t *val = json_object_get(chosen, t->name);
		if (json_is_integer(val))
			tc_buf_printf(&b, "%s%s=%lld", b.len ? " " : "", t->name,
				      (long long)json_integer_value(val));
	}
	char *s = tc_fmt(a, "%s", b.data ? b.data : "(no tunables)");
	tc_buf_free(&b);
	return s;
}

/* The entry point's header and source: BASE.h declares BASE_launch,
 * BASE.c picks a variant by the launch's shape, the rule in its comment
 * and in its code. */
static void
dispatch_files(TcArena *a, const ExportArgs *x, const TcProgram *p,
	       const TcKernel *k, const TcTarget *t, const char *ext,
	       const Variant *v, int n, OutFile *files, int *nfiles)
{
	bool gpu = t->kind != TC_TARGET_OPENMP;
	const char *base = tc_fmt(a, "%s%s", x->prefix ? x->prefix : "",
				  k->name);
	char *items[MAX_ITEMS], *args[MAX_ITEMS];
	const TcAbi *abi = tc_abi_of(a, k, t);
	int nitems = launch_params(a, abi, gpu, items);
	for (int i = 0; i < abi->nparams; i++)
		args[i] = (char *)abi->params[i].var->name;
	if (gpu)
		args[abi->nparams] = "stream";

	/* BASE.h */
	TcBuf h;
	tc_buf_init(&h);
	char *guard = tc_fmt(a, "TILEC_EXPORT_%s_H", base);
	for (char *g = guard; *g; g++)
		if (*g >= 'a' && *g <= 'z')
			*g = (char)(*g - 'a' + 'A');
	TcBuf list;
	tc_buf_init(&list);
	for (int i = 0; i < n; i++)
		tc_buf_printf(&list, "%s%s%s%s", i ? (i + 1 == n ? " and " : ", ")
						   : "",
			      base, v[i].suffix, ext);
	tc_buf_printf(&h, "/* SPDX-License-Identifier: %s */\n/*\n",
		      EXPORT_LICENSE);
	print_comment_lines(&h, " *", tc_fmt(a, "%s.h - launch the kernel %s "
					     "with the configuration of the "
					     "tuning record whose shape bucket "
					     "holds the launch's shape, exported "
					     "by tilec %s (git %s) from %s "
					     "(SHA-256 %s) for %s/%s.", base,
					     k->name, TILEC_VERSION,
					     TILEC_GIT_REVISION, p->path,
					     x->sha256, t->name, t->arch));
	tc_buf_puts(&h, " *\n");
	print_comment_lines(&h, " *", tc_fmt(a, "Build %s.c (C11) and %s, each "
					     "as its own header says, and call "
					     "%s_launch as you would call each "
					     "of theirs; %s.c says which record "
					     "a launch takes.", base, list.data,
					     base, base));
	tc_buf_puts(&h, " */\n");
	tc_buf_printf(&h, "#ifndef %s\n#define %s\n\n", guard, guard);
	tc_buf_puts(&h, "#include <stdint.h>\n#ifndef __cplusplus\n"
		    "#include <stdbool.h>\n#endif\n\n");
	tc_buf_puts(&h, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
	print_wrapped(&h, 0, tc_fmt(a, "int %s_launch(", base), items, nitems,
		      ");");
	tc_buf_puts(&h, "\n#ifdef __cplusplus\n}\n#endif\n\n");
	tc_buf_printf(&h, "#endif /* %s */\n", guard);
	tc_buf_free(&list);

	/* BASE.c */
	TcBuf c;
	tc_buf_init(&c);
	tc_buf_printf(&c, "/* SPDX-License-Identifier: %s */\n/*\n",
		      EXPORT_LICENSE);
	print_comment_lines(&c, " *", tc_fmt(a, "%s.c - one entry point over %d "
					     "tuning records of the kernel %s, "
					     "exported by tilec %s (git %s) from "
					     "%s (SHA-256 %s).", base, n, k->name,
					     TILEC_VERSION, TILEC_GIT_REVISION,
					     p->path, x->sha256));
	tc_buf_puts(&c, " *\n");
	print_comment_lines(&c, " *", "Each record was tuned at one shape; its "
			    "shape bucket is that shape with every integer "
			    "rounded up to a power of two.  A launch takes the "
			    "first record, smallest bucket first, whose bucket "
			    "holds each of its scalars (none above the "
			    "bucket's value), and the last one when none does:");
	tc_buf_puts(&c, " *\n");
	for (int i = 0; i < n; i++) {
		print_comment_lines(&c, " *  ", tc_fmt(a, "%s%s: %s", base,
						       v[i].suffix,
						       bucket_test(a, k,
								   v[i].bucket,
								   ", ")));
		print_comment_lines(&c, " *      ", tc_fmt(a, "the record %s:",
							   v[i].path));
		print_comment_lines(&c, " *      ", chosen_text(a, p, &v[i]));
	}
	tc_buf_puts(&c, " */\n");
	tc_buf_printf(&c, "#include \"%s.h\"\n", base);
	for (int i = 0; i < n; i++)
		tc_buf_printf(&c, "#include \"%s%s.h\"\n", base, v[i].suffix);
	tc_buf_puts(&c, "\nint\n");
	print_wrapped(&c, 0, tc_fmt(a, "%s_launch(", base), items, nitems, ")");
	tc_buf_puts(&c, "{\n");
	for (int i = 0; i < n; i++) {
		const char *call = tc_fmt(a, "return %s%s_launch(", base,
					  v[i].suffix);
		if (i + 1 == n)
			tc_buf_puts(&c, "\t/* The largest bucket, and shapes "
				    "past every bucket. */\n");
		else
			print_wrapped(&c, 1, "if (", (char **)(const char *[]){
					      bucket_test(a, k, v[i].bucket,
							  " && ") }, 1, ")");
		print_wrapped(&c, i + 1 == n ? 1 : 2, call, args, nitems, ");");
	}
	tc_buf_puts(&c, "}\n");
	add_file(files, nfiles, x->dir, tc_fmt(a, "%s.h", base), tc_buf_take(&h));
	add_file(files, nfiles, x->dir, tc_fmt(a, "%s.c", base), tc_buf_take(&c));
}

/* Export kernel k once per record (BASE_b0, BASE_b1, ..., smallest
 * bucket first), each with its record's values, and the entry point
 * that picks one by the launch's shape. */
static bool
export_dispatch(ExportArgs *x, const TcOptions *base, const char *text,
		size_t len, const TcProgram *p, TcArena *a, OutFile *files,
		int *nfiles, TcDiags *d)
{
	const TcKernel *k = p->kernels.items[0];
	Variant given[EXPORT_MAX_RECORDS], v[EXPORT_MAX_RECORDS];
	TcBucket b[EXPORT_MAX_RECORDS];
	memset(given, 0, sizeof given);
	memset(v, 0, sizeof v);
	int n = x->nconfigs;
	bool ok = true;
	for (int i = 0; i < n; i++) {
		given[i].path = x->configs[i];
		ok = variant_load(&given[i], i, &b[i], k, d) && ok;
	}
	/* The rule's order (record.c), which the entry point's tests
	 * follow. */
	ok = ok && tc_buckets_order(b, n, d);
	for (int i = 0; i < n; i++)
		v[i] = given[ok ? b[i].index : i];
	const TcBackend *be = tc_backend_find(base->target.kind);
	for (int i = 0; ok && i < n; i++) {
		TcOptions o = *base;
		snprintf(v[i].suffix, sizeof v[i].suffix, "_b%d", i);
		x->suffix = v[i].suffix;
		ok = tc_config_apply(v[i].path, text, len, NULL, a, &o, d) &&
		     export_kernel(x, &o, text, k->name, files, nfiles, d);
	}
	x->suffix = NULL;
	if (ok)
		dispatch_files(a, x, p, k, &base->target, be->file_ext, v, n,
			       files, nfiles);
	for (int i = 0; i < n; i++)
		tc_record_free(&v[i].rec);
	return ok;
}

static int
export_all(ExportArgs *x)
{
	TcOptions opt;
	if (!tc_options_init(&opt, x->target, x->arch)) {
		TcBuf why;
		tc_buf_init(&why);
		tc_target_explain(&why, x->target, x->arch);
		fprintf(stderr, "tilec export: %s\nTry 'tilec export --help'.\n",
			why.data);
		tc_buf_free(&why);
		return EXIT_USAGE;
	}
	if (!tc_backend_find(opt.target.kind)) {
		fprintf(stderr, "tilec export: the %s backend is not built yet\n",
			opt.target.name);
		return EXIT_ERROR;
	}
	opt.standalone = x->standalone;
	opt.tma = x->tma;
	opt.no_tma_store = x->no_tma_store;
	opt.no_half_pairs = x->no_half_pairs;
	opt.copy_plans = x->copy_plans;
	opt.ws = x->ws;
	opt.cpu_strip = x->cpu_strip;
	opt.ndefines = x->ndefines;
	for (int i = 0; i < x->ndefines; i++) {
		opt.define_name[i] = x->define_name[i];
		opt.define_value[i] = x->define_value[i];
		opt.define_loc[i] = (TcLoc){ "<command line>", 0, 0 };
	}
	size_t len = 0;
	char *text = tc_read_file(x->file, &len);
	if (!text) {
		fprintf(stderr, "tilec export: cannot read '%s': %s\n", x->file,
			strerror(errno));
		return EXIT_ERROR;
	}
	tilec_sha256_hex(text, len, x->sha256);
	TcDiags d;
	tc_diags_init(&d, x->file, text, len);
	d.to_stderr = true;
	TcArena *a = tc_arena_new();
	int status = EXIT_ERROR;
	OutFile files[3 * 64 + 3 * EXPORT_MAX_RECORDS + 16];
	int nfiles = 0;
	/* The kernels: parse once for their names. */
	TcProgram *p = NULL;
	opt.kernel = x->kernel;
	if (x->nconfigs == 1 && !tc_config_apply(x->config, text, len, NULL, a,
						 &opt, &d))
		goto out;
	if (!tc_compile(a, x->file, text, &opt, &d, &p) || d.errors)
		goto out;
	if (p->kernels.len == 0 || p->kernels.len > 64) {
		fprintf(stderr, "tilec export: %s has %d kernels (1 .. 64 "
			"exported at once)\n", x->file, p->kernels.len);
		goto out;
	}
	/* One kernel's launch function (K_launch, and its helpers
	 * K_launch_*) must not be another kernel's name: the two would be
	 * one symbol in the program that links both. */
	for (int i = 0; i < p->kernels.len; i++)
		for (int j = 0; j < p->kernels.len; j++) {
			const TcKernel *ki = p->kernels.items[i];
			const TcKernel *kj = p->kernels.items[j];
			const char *launch = tc_fmt(a, "%s_launch", ki->name);
			if (i != j && strncmp(kj->name, launch,
					      strlen(launch)) == 0)
				tc_diag(&d, TC_ERROR, kj->loc, "kernel '%s' is "
					"named as a function of the export of "
					"kernel '%s' (%s...); rename it to export "
					"both", kj->name, ki->name, launch);
		}
	if (d.errors)
		goto out;
	bool ok = true;
	int kernel_files[64 + 1]; /* kernel i's files: from [i] to [i + 1] */
	if (x->nconfigs > 1 && p->kernels.len != 1) {
		fprintf(stderr, "tilec export: several records pick between "
			"configurations of one kernel; %s has %d (--kernel "
			"NAME)\n", x->file, p->kernels.len);
		goto out;
	}
	if (x->nconfigs > 1) {
		kernel_files[0] = 0;
		ok = export_dispatch(x, &opt, text, len, p, a, files, &nfiles, &d);
		kernel_files[1] = nfiles;
	}
	for (int i = 0; ok && x->nconfigs <= 1 && i < p->kernels.len; i++) {
		kernel_files[i] = nfiles;
		ok = export_kernel(x, &opt, text,
				   ((TcKernel *)p->kernels.items[i])->name,
				   files, &nfiles, &d);
	}
	if (x->nconfigs <= 1)
		kernel_files[p->kernels.len] = nfiles;
	if (!ok)
		goto out;
	if (!x->standalone) {
		/* The helpers the sources include, as "tilec/<path>": the
		 * target's, and for CUDA and HIP the ones both GPU targets'
		 * headers include (gpu/). */
		bool gpu = opt.target.kind != TC_TARGET_OPENMP;
		const char *dir = !gpu ? "cpu/"
				  : opt.target.kind == TC_TARGET_CUDA ? "cuda/"
								      : "hip/";
		for (const TcEmbedded *e = tc_embedded; e->path; e++) {
			if (strncmp(e->path, dir, strlen(dir)) != 0 &&
			    !(gpu && strncmp(e->path, "gpu/", 4) == 0))
				continue;
			char *name = tc_fmt(a, "tilec/%s", e->path);
			add_file(files, &nfiles, x->dir, name, strdup(e->text));
		}
	}
	for (int i = 0; i < nfiles; i++) {
		if (!files[i].path || !files[i].text ||
		    !make_parents(files[i].path) ||
		    !tc_write_file(files[i].path, files[i].text,
				   strlen(files[i].text))) {
			fprintf(stderr, "tilec export: cannot write '%s': %s\n",
				files[i].path ? files[i].path : x->dir,
				strerror(errno ? errno : ENOMEM));
			goto out;
		}
	}
	if (x->json)
		print_json(x, &opt, p, files, nfiles, kernel_files);
	else
		for (int i = 0; i < nfiles; i++)
			printf("%s\n", files[i].path);
	status = EXIT_OK;
out:
	for (int i = 0; i < nfiles; i++) {
		free(files[i].path);
		free(files[i].text);
	}
	tc_arena_free(a);
	tc_diags_free(&d);
	free(text);
	return status;
}

int
tc_export_main(int argc, char **argv)
{
	ExportArgs x;
	memset(&x, 0, sizeof x);
	int status = parse_args(&x, argc, argv);
	if (status < 0)
		status = export_all(&x);
	for (int i = 0; i < x.ndefines; i++)
		free(x.define_name[i]);
	return status;
}
