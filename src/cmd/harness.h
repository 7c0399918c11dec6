/*
 * harness.h - one kernel, run and checked: what `tilec run` and `tilec tune`
 * share (harness.c).
 *
 * A harness holds one tile program's reference (parse -> specialize ->
 * check, no target pass), one kernel's parameters bound to values, the
 * kernel translated and JIT-compiled for a target, and the storage both
 * sides run on.  The steps, each returning false with h->fail set:
 *
 *   tc_harness_load     the reference program, the kernel, its parameters
 *   tc_harness_bind     scalar values, tensor storage, value ranges, the
 *                       tolerance (again for another shape: the program
 *                       and the compiled kernel stay)
 *   tc_harness_compile  translate for the target (or adopt a translation
 *                       made elsewhere), JIT-compile, load
 *   tc_harness_place    GPU: the launch configuration and device copies
 *   tc_harness_check    fresh random inputs, poisoned outputs, the
 *                       reference and the kernel once, every output
 *                       compared (h->out[])
 *   tc_harness_bench    the kernel timed over rotating input sets
 *
 * Failures are a kind and a sentence (TcHarnessFail), never text to be
 * parsed.  Nothing here prints except the diagnostics of the translator
 * and the interpreter, and only when spec.quiet is false.
 *
 * Float outputs are checked against the one tolerance table
 * (ir/tolerance.c), which launch manifests also carry (docs/launch.md)
 * for the tools that check kernels without the translator.
 */
#ifndef TILEC_HARNESS_H
#define TILEC_HARNESS_H

#include "ir/tilec_int.h"
#include "tilec_runtime.h"

#include <jansson.h>

#define TC_HARNESS_MAX_SHAPES 64

/* Why a step stopped. */
typedef enum TcHarnessFail {
	TC_HARNESS_OK,        /* nothing failed */
	TC_HARNESS_SETUP,     /* the program, kernel, shape, range or memory */
	TC_HARNESS_DEVICE,    /* no runtime or device; device memory, copies */
	TC_HARNESS_TRANSLATE, /* the translator rejected the program */
	TC_HARNESS_COMPILE,   /* the JIT compiler rejected the generated code */
	TC_HARNESS_REFERENCE, /* the interpreter stopped on an error in the
				 tile program */
	TC_HARNESS_LAUNCH,    /* the kernel's launch or its run failed */
	TC_HARNESS_MISMATCH,  /* an output differs from the reference */
	TC_HARNESS_BENCH,     /* timing failed */
	TC_HARNESS_FAIL_COUNT
} TcHarnessFail;

/* "compile", "mismatch", ... */
const char *tc_harness_fail_name(TcHarnessFail f);

/* --- The harness ------------------------------------------------------------ */

/* Whether a tensor is read, written or both by the kernel. */
enum { TC_HARNESS_IN = 1, TC_HARNESS_OUT = 2, TC_HARNESS_INOUT = 3 };

/* What one harness runs: the program, the target, the bindings. */
typedef struct TcHarnessSpec {
	const char *file;        /* the tile program's path */
	const char *text;        /* its source (the caller's, kept), or
				    NULL: the harness reads the file once
				    the runtime is open */
	size_t len;
	const char *target;      /* "openmp", "cuda", "hip" */
	const char *arch;        /* the translator's, or NULL */
	const char *march;       /* the JIT compiler's, or NULL */
	const char *kernel;      /* the kernel, or NULL if there is one */
	const char *cc;          /* the C compiler, or NULL */
	const char *source;      /* generated code to compile instead, or
				    NULL */
	const char *config;      /* a tuning record to bind, or NULL */
	/* The program as tc_parse gave it, before any pass (the caller's,
	 * outliving the harness; copied, never changed), or NULL: the
	 * harness parses text once. */
	const TcProgram *parsed;
	int device;              /* GPU ordinal */
	int ndefines;            /* tunable bindings (win over config) */
	const char *define_name[TC_MAX_DEFINES];
	long long define_value[TC_MAX_DEFINES];
	const char *define_origin; /* their location's file name */
	int cpu_strip;           /* TcOptions.cpu_strip (--cpu-strip) */
	bool no_runtime;         /* the reference only: no runtime context,
				    nothing compiled (tc_harness_reference) */
	bool no_cache;           /* bypass the JIT disk cache */
	bool quiet;              /* print no diagnostics (kept in h) */
} TcHarnessSpec;

/* The values a bind gives: scalars and input ranges, as written. */
typedef struct TcHarnessShape {
	int nshapes;             /* NAME=VALUE of scalar parameters */
	const char *shape_name[TC_HARNESS_MAX_SHAPES];
	const char *shape_value[TC_HARNESS_MAX_SHAPES];
	int nranges;             /* TENSOR=LO:HI of inputs */
	const char *range_name[TC_HARNESS_MAX_SHAPES];
	const char *range_lo[TC_HARNESS_MAX_SHAPES];
	const char *range_hi[TC_HARNESS_MAX_SHAPES];
	double tol;              /* relative tolerance, < 0: the table's */
} TcHarnessShape;

/* One kernel parameter and its storage. */
typedef struct TcHarnessParam {
	const TcVar *var;        /* the parameter */
	int role;                /* TENSOR: TC_HARNESS_IN/OUT/INOUT */
	bool unused;             /* TENSOR: neither read nor written (filled
				    as an input all the same) */
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
	bool ranged;             /* TENSOR input: a range gave its values */
	double lo, hi;           /* ranged: the values, both included */
	int32_t wide;            /* SCALAR i8/u8 on a GPU: the value as the
				    kernel's int parameter */
	void *dev;               /* TENSOR on a GPU: the device copy */
	void *slot;              /* TENSOR: kernel data pointer */
	void *ref_slot;          /* TENSOR: reference data pointer */
} TcHarnessParam;

/* How one output compared with the reference.  Integer and bool outputs
 * compare exactly; float ones within the relative tolerance. */
typedef struct TcCompare {
	const TcHarnessParam *param; /* the output */
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
} TcCompare;

/* A timing (tc_harness_bench). */
typedef struct TcHarnessTiming {
	double median_ms, min_ms, mean_ms; /* per launch */
	int runs;             /* timed launches */
	int input_sets;       /* input sets rotated through */
	double bytes;         /* of every tensor, per launch */
	double gbps;          /* bytes over the median */
	double flops;         /* per launch (given, or tile_gemm's count) */
	double gflops;        /* at the median; 0 without flops */
} TcHarnessTiming;

typedef struct TcHarness {
	TcHarnessSpec spec;         /* text set (h->text when read) */
	char *text;                 /* the source the harness read, or NULL */
	/* The outcome of the last step that failed. */
	TcHarnessFail fail;         /* TC_HARNESS_OK while all is well */
	char *message;              /* its sentence (malloc'd), or NULL */
	char *log;                  /* compile errors: the compiler's log;
				       else what the translator and the
				       interpreter said (malloc'd) */
	/* The program. */
	TcOptions opt;              /* the translator's options */
	const TcProgram *parsed;    /* the parse every copy is taken from */
	TcArena *ref_arena;         /* the parse (unless given) and the
				       reference program */
	TcArena *gen_arena;         /* the translated program */
	TcDiags ref_diags;          /* reference pipeline */
	TcDiags gen_diags;          /* translation */
	const TcProgram *ref_prog;
	const TcKernel *kernel;     /* in the reference program */
	const TcKernel *gen_kernel; /* the translated kernel */
	/* The runtime. */
	tilec_context *ctx;
	tilec_device_info device;   /* what ctx runs on */
	bool gpu;                   /* a GPU target */
	tilec_module *mod;
	tilec_kernel *entry;
	tilec_module_info info;     /* the JIT's account of the compile */
	TcBuf src;                  /* generated source */
	double translate_s;
	/* The bound parameters. */
	TcHarnessParam *params;
	int nparams;
	void **kargs;               /* the kernel's args */
	void **rargs;               /* the reference's args */
	double tol;                 /* for float outputs */
	tilec_launch_config cfg;    /* GPU launch configuration */
	bool empty_grid;            /* a grid extent is 0 */
	bool placed;                /* cfg and device copies are current */
	/* The last check. */
	TcCompare *out;             /* one per output, in parameter order */
	int nout;
	double reference_s;
	double first_run_s;
	TcInterpStats stats;
} TcHarness;

/* Open the runtime for spec->target (its absence stops everything
 * first), read the tuning record, build the reference program and pick
 * the kernel. */
bool tc_harness_load(TcHarness *h, const TcHarnessSpec *spec);
bool tc_harness_bind(TcHarness *h, const TcHarnessShape *shape);
/* Free the bound tensors (a later bind makes new ones). */
void tc_harness_unbind(TcHarness *h);
/* Take a translation of the same program for the same options made
 * elsewhere: the arena that holds it, its kernel and its source (taken,
 * *src left empty); tc_harness_compile then only JIT-compiles. */
void tc_harness_adopt(TcHarness *h, TcArena *arena, const TcKernel *k,
		      TcBuf *src, double translate_s);
bool tc_harness_compile(TcHarness *h);
bool tc_harness_place(TcHarness *h);
/* With compare false, the interpreter only counts (for the FLOPs of a
 * timing) and the outputs are not compared. */
bool tc_harness_check(TcHarness *h, unsigned long long seed, bool compare);
/* The reference alone (no kernel): fresh random inputs in each tensor's
 * data, outputs poisoned, the interpreter's results in each output's
 * ref; what `tilec tune --prepare` ships to a farm. */
bool tc_harness_reference(TcHarness *h, unsigned long long seed);
/* The check against inputs and expected outputs the caller put in
 * each tensor's data and ref (a tuning unit's reference data). */
bool tc_harness_check_stored(TcHarness *h);
/* flops <= 0: the count of the last check. */
bool tc_harness_bench(TcHarness *h, int warmup, int repeat, double flops,
		      TcHarnessTiming *t);
void tc_harness_free(TcHarness *h);

#endif
