/*
 * tune.c - `tilec tune`: search a kernel's tunables for the fastest correct
 * configuration, and the tuning records that `--config` replays.
 *
 * Input: a tile program, a target and a shape (docs/tuning.md).  Output: a
 * JSON record (jansson, sorted keys, written to a temporary file and
 * renamed, so an interrupted run leaves the old record or none) naming the
 * kernel, the source's SHA-256, the shape, target, device, compilers, the
 * chosen values and every configuration's fate and timing.
 *
 * The search, on a machine that can run the target:
 *
 *   1. enumerate: the cartesian product of every tunable's choices (a -D
 *      binding pins a tunable, --choices replaces its list), plus the
 *      default configuration if the product lacks it;
 *   2. translate each (milliseconds, in this thread), a copy of the one
 *      parse (tc_program_clone) each: the translator's own
 *      errors (shared memory or the CPU frame over the limit, a layout that
 *      does not fit) prune it, and so do the checks the translator leaves
 *      to us -- threads per block over the target's or device's limit,
 *      shared memory over the device's, register fragments needing more
 *      32-bit registers per thread than a GPU thread has.  Configurations
 *      whose code is the same once comments and tunables the code never
 *      names are set aside are run once (THREADS means nothing on the CPU);
 *   3. compile and check in parallel threads: each configuration gets a
 *      harness (cmd/harness.c, `tilec run`'s) at the check shape, given
 *      the translation of step 2, so the JIT (whose disk cache is safe
 *      under concurrent compiles) and the reference comparison are
 *      exactly run's.  The harness's failure kind decides: a compile
 *      failure is printed with its log and skipped; a wrong result is
 *      printed loudly and dropped;
 *   4. time the survivors one at a time at the tuning shape, each on the
 *      harness its check used, bound again (run's --bench: warm-up,
 *      median, rotating input sets; device events on GPUs), then
 *      time the fastest few and the default again in alternating rounds
 *      and choose by the median of all their timings.
 *
 * Where the machine with the translator cannot run the target (a GPU farm
 * without libclang), --prepare DIR does 1 and 2, compiles the survivors
 * with NVRTC compile-only where it is available (to prune what does not
 * compile), and writes each one's source and launch manifest, reference
 * inputs and outputs at the check shape from the interpreter, and
 * manifest.json; tools/tune_farm.py runs them on the GPU and writes
 * timings.json; --finish DIR turns that into the record.
 *
 * Records are read back by tc_config_apply (record.c), for `tilec FILE --config`,
 * `tilec run --config`, `tilec export --config` and `tilec tune --config`
 * (a replay: the record's choice against the default, timed again).
 */
#include "cmd/harness.h"
/* The runtime's SHA-256, so source hashes match `sha256sum FILE`. */
#include "tilec_runtime.h"
/* The runtime's process spawn, for the compiler's version (no shell). */
#include "runtime_int.h"
#include "tilec_version.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define RECORD_FORMAT TC_RECORD_FORMAT /* record.c reads it */
#define PREPARED_FORMAT "tilec-tune-prepared/1"
#define TIMINGS_FORMAT "tilec-tune-timings/1"

enum {
	EXIT_OK = 0,      /* a record was written (or the replay ran) */
	EXIT_NONE = 1,    /* no configuration passed its check */
	EXIT_STOPPED = 2, /* bad arguments, or something stopped the search */
};

#define MAX_TUNABLES TC_MAX_DEFINES
#define MAX_CHOICES 64
#define MAX_TIMES 16
/* Configurations re-timed in the confirmation rounds, besides the
 * default. */
#define FINALISTS 3
/* Timings are noisy when one configuration's timings differ by more
 * than this factor, or a timing's median launch is this far above its
 * fastest: the machine was busy.  Noisy finalists get more rounds. */
#define NOISE_RATIO 1.5
/* The fewest extra rounds noisy finalists get. */
#define NOISE_MIN_ROUNDS 2
/* Bytes of a compiler log kept in the record. */
#define LOG_KEEP 4000

/* What became of one configuration. */
typedef enum Status {
	ST_PENDING,       /* not decided yet */
	ST_OK,            /* checked and timed */
	ST_SAME_CODE,     /* the same code as another configuration */
	ST_PRUNED,        /* cannot fit the target: never compiled */
	ST_COMPILE_ERROR, /* the compiler rejected the generated code */
	ST_WRONG,         /* ran, but does not match the reference */
	ST_FAILED,        /* could not be run or timed */
	ST_COUNT
} Status;

static const char *const status_names[ST_COUNT] = {
	[ST_PENDING] = "pending",
	[ST_OK] = "ok",
	[ST_SAME_CODE] = "same_code",
	[ST_PRUNED] = "pruned",
	[ST_COMPILE_ERROR] = "compile_error",
	[ST_WRONG] = "wrong",
	[ST_FAILED] = "failed",
};

/* One TILE_PARAM of the program. */
typedef struct Tunable {
	const char *name;       /* the tile program's name */
	long long def;          /* its default, or the -D value if pinned */
	long long choices[MAX_CHOICES]; /* the values tried, in order */
	int nchoices;
	bool pinned;            /* bound with -D: one value, not tuned */
} Tunable;

/* One point of the search. */
typedef struct Config {
	long long values[MAX_TUNABLES]; /* per tunable, in declaration order */
	bool is_default;        /* every tunable at its default */
	Status status;          /* what became of it */
	char *reason;           /* why pruned, rejected or failed (malloc'd) */
	char *log;              /* the compiler's log, shortened (malloc'd) */
	char *norm;             /* code without comments and unnamed
				   tunables, to find duplicates (malloc'd) */
	char *source;           /* the generated source (--prepare) */
	char *launch;           /* its launch manifest (--prepare) */
	int same_as;            /* ST_SAME_CODE: the configuration it equals */
	double rel_err;         /* the check's largest relative error; -1 */
	bool cache_hit;         /* the check's compile came from the cache */
	double compile_ms;      /* the check's JIT time */
	double median_ms;       /* the first timing: median launch */
	double min_ms;          /* its fastest launch */
	double mean_ms;         /* its mean launch */
	int runs;               /* its timed launches */
	int input_sets;         /* its rotated input sets */
	double gflops;          /* at the median; 0 without tile_gemm */
	double gbps;            /* bytes of every tensor per median launch */
	double times[MAX_TIMES]; /* the medians of every timing */
	int ntimes;
	int noisy_timings;      /* timings whose median launch was over
				   NOISE_RATIO times their fastest */
	double final_ms;        /* median of times[]: what is compared */
	char id[16];            /* --prepare: "c007" */
	char *cubin;            /* --prepare: the compiled cubin in the JIT
				   cache, or NULL (malloc'd) */
	/* The translation (translate_all), until the harness takes it. */
	TcArena *gen_arena;     /* holds gen_kernel, or NULL */
	const TcKernel *gen_kernel;
	TcBuf gen_src;          /* its source */
	double translate_s;     /* how long translating it took */
	TcHarness *harness;     /* checked: the harness, kept for timing */
} Config;

/* A --shape list, kept as written and parsed. */
typedef struct Shape {
	char *text;             /* "M=1000,N=3000" (malloc'd) */
	int n;                  /* pairs */
	char *name[64];         /* malloc'd */
	char *value[64];        /* malloc'd, as written */
} Shape;

/* Everything one `tilec tune` holds. */
typedef struct Tune {
	/* The command line. */
	const char *file;       /* the tile program */
	const char *target;     /* -t */
	const char *arch;       /* --arch for the translator, or NULL */
	const char *march;      /* --march for the JIT compiler, or NULL */
	const char *kernel;     /* --kernel, or NULL */
	const char *cc;         /* --cc, or NULL */
	const char *out;        /* -o RECORD, or NULL for the default name */
	const char *prepare;    /* --prepare DIR */
	const char *finish;     /* --finish DIR */
	const char *timings;    /* --timings FILE (with --finish) */
	const char *config;     /* --config RECORD: replay it */
	const char *device_arg; /* --device N as written, or NULL */
	Shape shape;            /* --shape: the shape tuned for */
	Shape check_shape;      /* --check-shape, or empty: the shape */
	int nranges;            /* --range T=LO:HI lists, as written */
	const char *range_arg[TC_MAX_DEFINES];
	int nrange_items;       /* their items, parsed (malloc'd) */
	char *range_name[TC_HARNESS_MAX_SHAPES];
	char *range_lo[TC_HARNESS_MAX_SHAPES];
	char *range_hi[TC_HARNESS_MAX_SHAPES];
	json_t *tune_ranges;    /* --prepare: {T: [LO, HI]} at the tuning
				   shape, for the farm's timing inputs */
	int ndefines;           /* -D bindings: pinned tunables */
	char *define_name[TC_MAX_DEFINES];
	long long define_value[TC_MAX_DEFINES];
	int nchoice_args;       /* --choices NAME=V,V,... */
	char *choice_arg[TC_MAX_DEFINES];
	int jobs;               /* --jobs: parallel compiles */
	int repeat;             /* --repeat: timed launches */
	int warmup;             /* --warmup: untimed launches first */
	int confirm;            /* --confirm: rounds re-timing the finalists */
	int extra_rounds;       /* rounds taken past --confirm for noise */
	bool noisy;             /* the timings were noisy (warned) */
	int test_noise;         /* $TILEC_TUNE_TEST_NOISE: every Nth timing
				   made 50 times slower, for the tests; 0 */
	int ntimings;           /* timings taken, for test_noise */
	int max_configs;        /* --max-configs */
	int register_limit;     /* --register-limit; 0: no register pruning */
	const char *seed;       /* --seed, as written, or NULL */
	unsigned long long seed_value; /* its value (1 without) */
	const char *tol;        /* --tol, as written, or NULL */
	double tol_value;       /* its value, or -1: the table's */
	int device_index;       /* --device's value (0 without) */
	bool no_prune_dupes;    /* --keep-duplicates */
	bool json;              /* --json: the summary as one JSON object */
	/* The program. */
	char *text;             /* its source */
	size_t len;
	char sha[65];           /* SHA-256 of text, hex */
	TcArena *arena;         /* the parsed program */
	TcProgram *prog;        /* parsed, for its tunables and kernels */
	const char *kname;      /* the kernel tuned */
	TcTarget tinfo;         /* the translator's target */
	/* The search. */
	Tunable tun[MAX_TUNABLES];
	int ntun;
	Config *cfg;
	int ncfg;
	int default_index;      /* the default configuration in cfg */
	char device[256];       /* the device's name, as records give it */
	size_t device_smem;     /* its shared memory per block; 0 unknown */
	json_t *compilers;      /* compiler names and versions */
	const char *timer;      /* "wall clock" or "device events" */
	char *partial;          /* where the partial record goes while the
				   search runs, or NULL (malloc'd) */
	bool partial_failed;    /* writing it failed once (warned) */
	/* The worker threads' queue. */
	pthread_mutex_t lock;   /* guards next and the progress lines */
	int next;               /* the next configuration to take */
	int done;               /* configurations finished */
	int todo;               /* configurations queued */
} Tune;

/* --- Small helpers -------------------------------------------------------- */

static void
failf(const char *fmt, ...) TC_PRINTF(1, 2);

/* A problem that stops the search. */
static void
failf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("tilec tune: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputs("\n", stderr);
	va_end(ap);
}

static char *
xstrdup(const char *s)
{
	char *d = strdup(s ? s : "");
	if (!d) {
		fputs("tilec: out of memory\n", stderr);
		abort();
	}
	return d;
}

static char *
fmt_alloc(const char *fmt, ...) TC_PRINTF(1, 2);

static char *
fmt_alloc(const char *fmt, ...)
{
	TcBuf b;
	va_list ap;
	tc_buf_init(&b);
	va_start(ap, fmt);
	tc_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	char *s = tc_buf_take(&b);
	return s ? s : xstrdup("");
}

static void
sha256_hex(const void *data, size_t n, char hex[65])
{
	tilec_sha256_hex(data, n, hex);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double
median(const double *v, int n)
{
	double s[MAX_TIMES];
	if (n <= 0)
		return 0;
	memcpy(s, v, (size_t)n * sizeof *s);
	qsort(s, (size_t)n, sizeof *s, cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* "BLOCK_M=64 BLOCK_N=128" for the tuned (not pinned) tunables. */
static void
values_text(const Tune *t, const long long *values, TcBuf *b)
{
	int n = 0;
	for (int i = 0; i < t->ntun; i++)
		if (t->tun[i].nchoices > 1)
			tc_buf_printf(b, "%s%s=%lld", n++ ? " " : "",
				      t->tun[i].name, values[i]);
	if (n == 0)
		tc_buf_puts(b, "(no tunables)");
}

/* The tuned values as a JSON object. */
static json_t *
values_json(const Tune *t, const long long *values, bool all)
{
	json_t *o = json_object();
	for (int i = 0; i < t->ntun; i++)
		if (all || t->tun[i].nchoices > 1)
			json_object_set_new(o, t->tun[i].name,
					    json_integer(values[i]));
	return o;
}

/* Write data to path whole or not at all (tc_write_file: a temporary
 * file in the same directory, synced and renamed; readers see the old
 * file or the whole new one). */
static bool
write_atomic(const char *path, const char *data, size_t len)
{
	if (tc_write_file(path, data, len))
		return true;
	failf("cannot write %s: %s", path, strerror(errno ? errno : EIO));
	return false;
}

/* A JSON document as tilec writes it: sorted keys, two-space indent,
 * six significant digits, a final newline; written atomically. */
static bool
write_json(const char *path, json_t *doc)
{
	char *s = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS |
					  JSON_REAL_PRECISION(6));
	if (!s) {
		failf("cannot format %s", path);
		return false;
	}
	TcBuf b;
	tc_buf_init(&b);
	tc_buf_printf(&b, "%s\n", s);
	free(s);
	bool ok = write_atomic(path, b.data, b.len);
	tc_buf_free(&b);
	return ok;
}

/* The current time, for records: "2026-12-01T10:20:30Z". */
static json_t *
now_json(void)
{
	char buf[64];
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_string(buf);
}

/* The first line `CC --version` prints, or NULL.  The command is words,
 * run as the runtime runs the compiler: spawned without a shell, with the
 * context's compile timeout. */
static char *
compiler_version(tilec_context *ctx, const char *cc)
{
	char **argv = NULL;
	int argc = 0;
	char *r = NULL;
	if (tilec_rt_split_words(cc, &argv, &argc) && argc > 0) {
		char **v = realloc(argv, sizeof *v * (size_t)(argc + 2));
		if (v) {
			argv = v;
			argv[argc] = "--version"; /* not freed: past argc */
			argv[argc + 1] = NULL;
			TilecStr out = { 0 };
			int status, signo;
			if (tilec_rt_run_process(ctx, argv, &out, &status,
						 &signo) == TILEC_OK &&
			    status == 0 && !out.oom) {
				const char *text = tilec_rt_str_cstr(&out);
				size_t n = strcspn(text, "\r\n");
				if (n > 0)
					r = fmt_alloc("%.*s", (int)n, text);
			}
			tilec_rt_str_free(&out);
		}
	}
	tilec_rt_free_words(argv, argc);
	return r;
}

/* --- Shapes --------------------------------------------------------------- */

/* Add "M=1,N=2" to a shape; false on a malformed pair. */
static bool
shape_add(Shape *s, const char *list)
{
	char *joined = s->text ? fmt_alloc("%s,%s", s->text, list)
			       : xstrdup(list);
	free(s->text);
	s->text = joined;
	const char *p = list;
	while (*p) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		const char *eq = memchr(p, '=', n);
		if (!eq || eq == p || eq + 1 == p + n || s->n == 64) {
			failf("--shape: expected NAME=VALUE,..., got '%.*s'",
			      (int)n, p);
			return false;
		}
		s->name[s->n] = strndup(p, (size_t)(eq - p));
		s->value[s->n] = strndup(eq + 1, (size_t)(p + n - eq - 1));
		s->n++;
		p += n + (comma ? 1 : 0);
	}
	return true;
}

static void
shape_free(Shape *s)
{
	for (int i = 0; i < s->n; i++) {
		free(s->name[i]);
		free(s->value[i]);
	}
	free(s->text);
	memset(s, 0, sizeof *s);
}

/* The shape as JSON numbers ({"M": 1000, "eps": 1e-05}); later pairs
 * win, as in `tilec run`. */
static json_t *
shape_json(const Shape *s)
{
	json_t *o = json_object();
	for (int i = 0; i < s->n; i++) {
		long long v;
		if (tc_opt_integer(s->value[i], &v))
			json_object_set_new(o, s->name[i], json_integer(v));
		else
			json_object_set_new(o, s->name[i],
					    json_real(strtod(s->value[i], NULL)));
	}
	return o;
}

/* Each integer extent rounded up to a power of two: the shapes a record
 * is meant for. */
static json_t *
bucket_json(const Shape *s)
{
	json_t *o = json_object();
	for (int i = 0; i < s->n; i++) {
		long long v, b = 1;
		if (!tc_opt_integer(s->value[i], &v))
			continue;
		while (b < v && b < (1ll << 62))
			b <<= 1;
		json_object_set_new(o, s->name[i], json_integer(v <= 0 ? v : b));
	}
	return o;
}

/* --- The program and its tunables ------------------------------------------ */

/* Parse the program (no target passes), pick the kernel, collect the
 * tunables with their choices. */
static bool
load_program(Tune *t)
{
	if (!(t->text = tc_read_file(t->file, &t->len))) {
		failf("cannot read %s: %s", t->file, strerror(errno));
		return false;
	}
	sha256_hex(t->text, t->len, t->sha);
	TcOptions opt;
	if (!tc_options_init(&opt, t->target, t->arch)) {
		TcBuf why;
		tc_buf_init(&why);
		tc_target_explain(&why, t->target, t->arch);
		failf("%s", why.data);
		tc_buf_free(&why);
		return false;
	}
	t->tinfo = opt.target;
	TcDiags d;
	tc_diags_init(&d, t->file, t->text, t->len);
	d.to_stderr = true;
	t->arena = tc_arena_new();
	t->prog = tc_parse(t->arena, t->file, t->text, &opt, &d);
	bool ok = t->prog && d.errors == 0;
	tc_diags_free(&d);
	if (!ok)
		return false;
	TcBuf names;
	tc_buf_init(&names);
	for (int i = 0; i < t->prog->kernels.len; i++) {
		const TcKernel *k = t->prog->kernels.items[i];
		tc_buf_printf(&names, "%s%s", i ? ", " : "", k->name);
		if (t->kernel ? strcmp(k->name, t->kernel) == 0
			      : t->prog->kernels.len == 1)
			t->kname = k->name;
	}
	if (!t->kname) {
		if (t->kernel)
			failf("%s has no kernel named '%s' (kernels: %s)",
			      t->file, t->kernel, names.data ? names.data : "");
		else
			failf("%s has %d kernels (%s); pick one with --kernel",
			      t->file, t->prog->kernels.len,
			      names.data ? names.data : "none");
	}
	tc_buf_free(&names);
	if (!t->kname)
		return false;

	if (t->prog->tunables.len > MAX_TUNABLES) {
		failf("%s has %d tunables; tilec tune handles %d", t->file,
		      t->prog->tunables.len, MAX_TUNABLES);
		return false;
	}
	for (int i = 0; i < t->prog->tunables.len; i++) {
		const TcVar *v = t->prog->tunables.items[i];
		Tunable *u = &t->tun[t->ntun++];
		u->name = v->name;
		u->def = v->def_value;
		for (int j = 0; j < v->nchoices && j < MAX_CHOICES; j++)
			u->choices[u->nchoices++] = v->choices[j];
		if (u->nchoices == 0)
			u->choices[u->nchoices++] = u->def;
	}
	/* -D pins; --choices replaces a list. */
	for (int i = 0; i < t->ndefines; i++) {
		Tunable *u = NULL;
		for (int j = 0; j < t->ntun; j++)
			if (strcmp(t->tun[j].name, t->define_name[i]) == 0)
				u = &t->tun[j];
		if (!u) {
			failf("-D %s: %s has no tunable of that name",
			      t->define_name[i], t->file);
			return false;
		}
		u->def = t->define_value[i];
		u->choices[0] = u->def;
		u->nchoices = 1;
		u->pinned = true;
	}
	for (int i = 0; i < t->nchoice_args; i++) {
		const char *arg = t->choice_arg[i];
		const char *eq = strchr(arg, '=');
		Tunable *u = NULL;
		for (int j = 0; eq && j < t->ntun; j++)
			if (strlen(t->tun[j].name) == (size_t)(eq - arg) &&
			    strncmp(t->tun[j].name, arg, (size_t)(eq - arg)) == 0)
				u = &t->tun[j];
		if (!u) {
			failf("--choices %s: expected NAME=V,V,... naming a "
			      "tunable of %s", arg, t->file);
			return false;
		}
		if (u->pinned) {
			failf("--choices %s: %s is pinned with -D", arg, u->name);
			return false;
		}
		u->nchoices = 0;
		char *list = xstrdup(eq + 1);
		bool good = true;
		for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save)) {
			long long v;
			if (!tc_opt_integer(tok, &v) || u->nchoices == MAX_CHOICES) {
				good = false;
				break;
			}
			u->choices[u->nchoices++] = v;
		}
		free(list);
		if (!good || u->nchoices == 0) {
			failf("--choices %s: expected at most %d integers", arg,
			      MAX_CHOICES);
			return false;
		}
	}
	return true;
}

/* The cartesian product of the choices (the last tunable varying
 * fastest), and the default if the product lacks it. */
static bool
enumerate(Tune *t)
{
	long long total = 1;
	for (int i = 0; i < t->ntun; i++) {
		total *= t->tun[i].nchoices;
		if (total > t->max_configs)
			break;
	}
	if (total > t->max_configs) {
		failf("the choices make more than %d configurations; narrow "
		      "them with --choices or -D, or raise --max-configs",
		      t->max_configs);
		return false;
	}
	t->cfg = calloc((size_t)total + 1, sizeof *t->cfg);
	if (!t->cfg) {
		failf("out of memory");
		return false;
	}
	t->default_index = -1;
	for (long long n = 0; n < total; n++) {
		Config *c = &t->cfg[t->ncfg++];
		long long rest = n;
		bool def = true;
		for (int i = t->ntun - 1; i >= 0; i--) {
			const Tunable *u = &t->tun[i];
			c->values[i] = u->choices[rest % u->nchoices];
			rest /= u->nchoices;
			def &= c->values[i] == u->def;
		}
		if (def && t->default_index < 0) {
			c->is_default = true;
			t->default_index = (int)n;
		}
	}
	if (t->default_index < 0) {
		Config *c = &t->cfg[t->ncfg];
		for (int i = 0; i < t->ntun; i++)
			c->values[i] = t->tun[i].def;
		c->is_default = true;
		t->default_index = t->ncfg++;
	}
	for (int i = 0; i < t->ncfg; i++) {
		t->cfg[i].rel_err = -1;
		t->cfg[i].same_as = -1;
		snprintf(t->cfg[i].id, sizeof t->cfg[i].id, "c%03d", i);
	}
	return true;
}

/* Options translating configuration c. */
static void
config_options(const Tune *t, const Config *c, TcOptions *opt)
{
	tc_options_init(opt, t->target, t->arch);
	opt->kernel = t->kname;
	opt->ndefines = t->ntun;
	for (int i = 0; i < t->ntun; i++) {
		opt->define_name[i] = t->tun[i].name;
		opt->define_value[i] = c->values[i];
		opt->define_loc[i] = (TcLoc){ "<tune>", 0, 0 };
	}
}

/* Free the translation translate_all kept for c. */
static void
gen_free(Config *c)
{
	if (c->gen_arena)
		tc_arena_free(c->gen_arena);
	c->gen_arena = NULL;
	c->gen_kernel = NULL;
	tc_buf_free(&c->gen_src);
}

/* --- Pruning ------------------------------------------------------------- */

/* 32-bit registers one thread needs for the kernel's register fragments
 * and local buffers, all live at once; names them in `what`. */
static long long
fragment_registers(const TcKernel *k, long long threads, TcBuf *what)
{
	long long regs = 0;
	for (int i = 0; i < k->vars.len; i++) {
		const TcVar *v = k->vars.items[i];
		if (v->kind != TC_VAR_BUFFER)
			continue;
		bool in_regs = v->scope == TC_SCOPE_LOCAL ||
			       (v->scope == TC_SCOPE_FRAGMENT &&
				v->layout.kind != TC_LAYOUT_NONE &&
				v->layout.kind != TC_LAYOUT_SMEM);
		if (!in_regs)
			continue;
		long long elems = 1, e;
		for (int j = 0; j < v->rank; j++)
			elems *= tc_expr_const(v->shape[j], &e) ? e : 1;
		if (v->scope == TC_SCOPE_FRAGMENT)
			elems = (elems + threads - 1) / threads;
		long long r = (elems * tc_dtype_bits(v->dtype) + 31) / 32;
		regs += r;
		tc_buf_printf(what, "%s%s %lld", what->len ? ", " : "", v->name,
			      r);
	}
	return regs;
}

/* Why the translated kernel cannot run on the target, or NULL. */
static char *
prune_reason(const Tune *t, const TcKernel *k)
{
	if (!t->tinfo.simt)
		return NULL;
	long long threads = tc_abi_threads(k, &t->tinfo);
	if (threads > t->tinfo.max_threads)
		return fmt_alloc("threads: %lld per block; %s allows %d",
				 threads, t->tinfo.arch, t->tinfo.max_threads);
	if (t->device_smem && (size_t)k->smem_bytes > t->device_smem)
		return fmt_alloc("shared memory: %lld bytes per block; %s "
				 "allows %zu", k->smem_bytes, t->device,
				 t->device_smem);
	if (t->register_limit > 0) {
		TcBuf what;
		tc_buf_init(&what);
		long long regs = fragment_registers(k, threads, &what);
		char *r = NULL;
		if (regs > t->register_limit)
			r = fmt_alloc("registers: the fragments need %lld 32-bit "
				      "registers per thread (%s); a thread has "
				      "%d", regs, what.data, t->register_limit);
		tc_buf_free(&what);
		if (r)
			return r;
	}
	return NULL;
}

/* The code without comments, and without the definitions of tunables it
 * never names: two configurations with the same normal form compile to
 * the same thing. */
static char *
normal_form(const Tune *t, const char *src)
{
	TcBuf b;
	tc_buf_init(&b);
	for (const char *p = src; *p;) {
		if (p[0] == '/' && p[1] == '/') {
			while (*p && *p != '\n')
				p++;
		} else if (p[0] == '/' && p[1] == '*') {
			const char *e = strstr(p + 2, "*/");
			p = e ? e + 2 : p + strlen(p);
		} else if (*p == '"' || *p == '\'') {
			const char *q = p + 1;
			while (*q && *q != *p)
				q += q[0] == '\\' && q[1] ? 2 : 1;
			q += *q ? 1 : 0;
			tc_buf_printf(&b, "%.*s", (int)(q - p), p);
			p = q;
		} else {
			const char *q = p;
			while (*q && !(q[0] == '/' && (q[1] == '/' || q[1] == '*')) &&
			       *q != '"' && *q != '\'')
				q++;
			tc_buf_printf(&b, "%.*s", (int)(q - p), p);
			p = q;
		}
	}
	char *code = tc_buf_take(&b);
	if (!code)
		return xstrdup("");
	for (int i = 0; i < t->ntun; i++) {
		const char *name = t->tun[i].name;
		size_t n = strlen(name);
		int uses = 0, defs = 0;
		for (char *q = strstr(code, name); q; q = strstr(q + n, name)) {
			bool word = (q == code || !(q[-1] == '_' ||
						    (q[-1] >= '0' && q[-1] <= '9') ||
						    ((q[-1] | 32) >= 'a' &&
						     (q[-1] | 32) <= 'z'))) &&
				    !(q[n] == '_' || (q[n] >= '0' && q[n] <= '9') ||
				      ((q[n] | 32) >= 'a' && (q[n] | 32) <= 'z'));
			if (!word)
				continue;
			uses++;
			const char *r = q + n;
			while (*r == ' ')
				r++;
			if (*r == '=' && r[1] != '=')
				defs++;
		}
		if (uses != defs)
			continue;
		/* Only defined: blank out "NAME = VALUE". */
		for (char *q = strstr(code, name); q; q = strstr(q + 1, name)) {
			char *r = q + n;
			while (*r == ' ')
				r++;
			if (*r != '=')
				continue;
			r++;
			while (*r == ' ')
				r++;
			if (*r == '-')
				r++;
			while (*r >= '0' && *r <= '9')
				r++;
			memset(q, ' ', (size_t)(r - q));
		}
	}
	return code;
}

/* How many tunables c has at their default. */
static int
nearness(const Tune *t, const Config *c)
{
	int n = 0;
	for (int i = 0; i < t->ntun; i++)
		n += c->values[i] == t->tun[i].def;
	return n;
}

/* Translate every configuration: prune, find duplicates, keep the source
 * and launch manifest when asked.  Returns the number left to compile. */
static int
translate_all(Tune *t, bool keep_source)
{
	int left = 0, pruned = 0, same = 0;
	for (int i = 0; i < t->ncfg; i++) {
		Config *c = &t->cfg[i];
		TcOptions opt;
		config_options(t, c, &opt);
		opt.standalone = keep_source;
		TcDiags d;
		tc_diags_init(&d, t->file, t->text, t->len);
		TcArena *a = tc_arena_new();
		TcBuf src;
		tc_buf_init(&src);
		double t0 = tilec_now();
		/* A copy of the one parse, scheduled for c. */
		TcProgram *p = tc_program_clone(a, t->prog);
		bool ok = tc_translate_parsed(a, p, &opt, &d, &src) &&
			  d.errors == 0;
		double translate_s = tilec_now() - t0;
		const TcKernel *k = NULL;
		for (int j = 0; ok && j < p->kernels.len; j++)
			if (strcmp(((TcKernel *)p->kernels.items[j])->name,
				   t->kname) == 0)
				k = p->kernels.items[j];
		if (!ok || !k) {
			/* The translator's first word on it. */
			const char *msg = d.text.data ? d.text.data : "";
			const char *e = strstr(msg, "error: ");
			e = e ? e + 7 : msg;
			c->reason = strndup(e, strcspn(e, "\n"));
			c->status = ST_PRUNED;
		} else if ((c->reason = prune_reason(t, k))) {
			c->status = ST_PRUNED;
		} else {
			c->norm = normal_form(t, src.data ? src.data : "");
			for (int j = 0; j < i && !t->no_prune_dupes; j++) {
				Config *o = &t->cfg[j];
				if (o->norm && o->status == ST_PENDING &&
				    strcmp(o->norm, c->norm) == 0) {
					c->status = ST_SAME_CODE;
					c->same_as = j;
					break;
				}
			}
		}
		/* Of configurations with the same code, the one measured is
		 * the one nearest the default (the default itself, which
		 * the comparison needs by name): the record then changes
		 * no value it need not. */
		if (c->status == ST_SAME_CODE &&
		    nearness(t, c) > nearness(t, &t->cfg[c->same_as])) {
			Config *o = &t->cfg[c->same_as];
			o->status = ST_SAME_CODE;
			o->same_as = i;
			c->status = ST_PENDING;
			c->same_as = -1;
			free(o->source);
			free(o->launch);
			o->source = o->launch = NULL;
			gen_free(o);
		}
		if (keep_source && c->status == ST_PENDING) {
			c->source = tc_buf_take(&src);
			TcBuf l;
			tc_buf_init(&l);
			tc_launch_json(p, k, &opt.target, &l);
			c->launch = tc_buf_take(&l);
		} else if (c->status == ST_PENDING) {
			/* Kept for the harness, which then only compiles. */
			c->gen_arena = a;
			c->gen_kernel = k;
			c->gen_src = src;
			c->translate_s = translate_s;
			a = NULL;
			tc_buf_init(&src);
		}
		tc_buf_free(&src);
		if (a)
			tc_arena_free(a);
		tc_diags_free(&d);
	}
	for (int i = 0; i < t->ncfg; i++) {
		Config *c = &t->cfg[i];
		/* Point duplicates at the one that is measured. */
		while (c->status == ST_SAME_CODE &&
		       t->cfg[c->same_as].status == ST_SAME_CODE)
			c->same_as = t->cfg[c->same_as].same_as;
		left += c->status == ST_PENDING;
		pruned += c->status == ST_PRUNED;
		same += c->status == ST_SAME_CODE;
	}
	fprintf(stderr, "tilec tune: %s, kernel %s for %s/%s: %d "
		"configurations, %d pruned, %d with the same code as another, "
		"%d to compile\n", t->file, t->kname, t->tinfo.name,
		t->tinfo.arch, t->ncfg, pruned, same, left);
	for (int i = 0; i < t->ncfg; i++) {
		const Config *c = &t->cfg[i];
		if (c->status != ST_PRUNED)
			continue;
		TcBuf v;
		tc_buf_init(&v);
		values_text(t, c->values, &v);
		fprintf(stderr, "  pruned %s: %s\n", v.data, c->reason);
		tc_buf_free(&v);
	}
	return left;
}

/* --- Searching on this machine: the harness per configuration --------------- */

static double
num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return v ? json_number_value(v) : 0;
}

static const char *
str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

static void
harness_free(Config *c)
{
	if (c->harness) {
		tc_harness_free(c->harness);
		free(c->harness);
		c->harness = NULL;
	}
}

/* The values of `shape` (and the --range lists) for the harness. */
static void
harness_shape(const Tune *t, const Shape *shape, TcHarnessShape *s)
{
	memset(s, 0, sizeof *s);
	s->nshapes = shape->n;
	for (int i = 0; i < shape->n; i++) {
		s->shape_name[i] = shape->name[i];
		s->shape_value[i] = shape->value[i];
	}
	s->nranges = t->nrange_items;
	for (int i = 0; i < t->nrange_items; i++) {
		s->range_name[i] = t->range_name[i];
		s->range_lo[i] = t->range_lo[i];
		s->range_hi[i] = t->range_hi[i];
	}
	s->tol = t->tol_value;
}

/* A harness for configuration c: the program, the translation
 * translate_all made, compiled. */
static bool
harness_open(Tune *t, Config *c, TcHarness *h)
{
	TcHarnessSpec spec = {
		.file = t->file,
		.text = t->text,
		.len = t->len,
		.target = t->target,
		.arch = t->arch,
		.march = t->march,
		.kernel = t->kname,
		.cc = t->cc,
		.device = t->device_index,
		.parsed = t->prog,
		.ndefines = t->ntun,
		.quiet = true,
	};
	for (int i = 0; i < t->ntun; i++) {
		spec.define_name[i] = t->tun[i].name;
		spec.define_value[i] = c->values[i];
	}
	if (!tc_harness_load(h, &spec))
		return false;
	if (c->gen_kernel) {
		tc_harness_adopt(h, c->gen_arena, c->gen_kernel, &c->gen_src,
				 c->translate_s);
		c->gen_arena = NULL;
		c->gen_kernel = NULL;
	}
	return tc_harness_compile(h);
}

/* What a harness that stopped says about c: its status, reason and log. */
static void
harness_outcome(Config *c, const TcHarness *h)
{
	const char *msg = h->message ? h->message : "";
	switch (h->fail) {
	case TC_HARNESS_OK:
		c->status = ST_PENDING;
		break;
	case TC_HARNESS_MISMATCH:
	case TC_HARNESS_REFERENCE:
		c->status = ST_WRONG;
		c->reason = xstrdup(msg[0] ? msg : "the check failed");
		break;
	case TC_HARNESS_COMPILE:
		c->status = ST_COMPILE_ERROR;
		c->reason = xstrdup("the compiler rejected the generated code");
		c->log = xstrdup(msg);
		break;
	default:
		c->status = ST_FAILED;
		c->reason = msg[0] ? xstrdup(msg)
				   : fmt_alloc("stopped at the %s step",
					       tc_harness_fail_name(h->fail));
		if (h->log)
			c->log = xstrdup(h->log);
		break;
	}
}

/* Check configuration c at the check shape (worker threads); a
 * configuration that passes keeps its harness for the timings. */
static void
check_one(Tune *t, Config *c)
{
	TcHarness *h = calloc(1, sizeof *h);
	if (!h) {
		c->status = ST_FAILED;
		c->reason = xstrdup("out of memory");
		return;
	}
	TcHarnessShape s;
	harness_shape(t, t->check_shape.n ? &t->check_shape : &t->shape, &s);
	bool ok = harness_open(t, c, h) && tc_harness_bind(h, &s) &&
		  tc_harness_check(h, t->seed_value, true);
	gen_free(c);
	if (h->info.note[0])
		fprintf(stderr, "tilec tune: %s\n", h->info.note);
	c->cache_hit = h->info.from_cache;
	c->compile_ms = h->info.total_seconds * 1e3;
	c->rel_err = 0;
	for (int i = 0; i < h->nout; i++)
		if (h->out[i].rel_err > c->rel_err)
			c->rel_err = h->out[i].rel_err;
	harness_outcome(c, h);
	tc_harness_unbind(h);
	c->harness = h;
	if (!ok)
		harness_free(c);
}

/* One progress line (and a failure's details), under the lock. */
static void
progress(Tune *t, const Config *c, const char *what)
{
	TcBuf v;
	tc_buf_init(&v);
	values_text(t, c->values, &v);
	fprintf(stderr, "[%3d/%d] %s%s: %s\n", t->done, t->todo, v.data,
		c->is_default ? " (default)" : "", what);
	if (c->log && c->status == ST_COMPILE_ERROR)
		fprintf(stderr, "%s\n", c->log);
	tc_buf_free(&v);
}

static void
report_check(Tune *t, const Config *c)
{
	char *what;
	switch (c->status) {
	case ST_WRONG:
		what = fmt_alloc("WRONG, dropped: %s", c->reason);
		break;
	case ST_COMPILE_ERROR:
		what = fmt_alloc("COMPILE ERROR, skipped; the log:");
		break;
	case ST_FAILED:
		what = fmt_alloc("FAILED, skipped: %s", c->reason);
		break;
	default:
		what = fmt_alloc("correct (max rel err %.2g), %s %.0f ms",
				 c->rel_err, c->cache_hit ? "cached" : "compiled",
				 c->compile_ms);
		break;
	}
	progress(t, c, what);
	free(what);
}

static void *
check_worker(void *arg)
{
	Tune *t = arg;
	for (;;) {
		pthread_mutex_lock(&t->lock);
		while (t->next < t->ncfg && t->cfg[t->next].status != ST_PENDING)
			t->next++;
		int i = t->next < t->ncfg ? t->next++ : -1;
		pthread_mutex_unlock(&t->lock);
		if (i < 0)
			return NULL;
		Config *c = &t->cfg[i];
		check_one(t, c);
		pthread_mutex_lock(&t->lock);
		t->done++;
		report_check(t, c);
		pthread_mutex_unlock(&t->lock);
	}
}

/* Compile and check every pending configuration, --jobs at a time. */
static void
check_all(Tune *t)
{
	t->next = t->done = 0;
	t->todo = 0;
	for (int i = 0; i < t->ncfg; i++)
		t->todo += t->cfg[i].status == ST_PENDING;
	fprintf(stderr, "tilec tune: compiling and checking %d at %s, %d at "
		"a time\n", t->todo,
		t->check_shape.n ? t->check_shape.text : t->shape.text, t->jobs);
	pthread_t th[64];
	int n = t->jobs < 64 ? t->jobs : 64, started = 0;
	for (int i = 0; i < n; i++)
		started += pthread_create(&th[started], NULL, check_worker, t) == 0;
	if (started == 0)
		check_worker(t);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
}

/* Time configuration c at the tuning shape; false (*why set, malloc'd)
 * if that failed. */
static bool
time_one(Tune *t, Config *c, char **why)
{
	TcHarness *h = c->harness;
	TcHarnessShape s;
	harness_shape(t, &t->shape, &s);
	TcHarnessTiming b;
	bool ok = h && tc_harness_bind(h, &s) &&
		  tc_harness_check(h, t->seed_value, false) &&
		  tc_harness_bench(h, t->warmup, t->repeat, 0, &b);
	if (h)
		tc_harness_unbind(h);
	if (!ok) {
		*why = xstrdup(h && h->message ? h->message : "timing failed");
		return false;
	}
	double ms = b.median_ms;
	t->ntimings++;
	if (t->test_noise > 0 && t->ntimings % t->test_noise == 0)
		ms *= 50; /* as if the machine were busy for this timing */
	if (ms > NOISE_RATIO * b.min_ms)
		c->noisy_timings++;
	if (c->ntimes == 0) {
		c->median_ms = ms;
		c->min_ms = b.min_ms;
		c->mean_ms = b.mean_ms;
		c->runs = b.runs;
		c->input_sets = b.input_sets;
		c->gflops = b.gflops;
		c->gbps = b.gbps;
	}
	if (c->ntimes < MAX_TIMES)
		c->times[c->ntimes++] = ms;
	c->final_ms = median(c->times, c->ntimes);
	return true;
}

static char *
time_text(const Config *c)
{
	if (c->gflops > 0)
		return fmt_alloc("%.4g ms (min %.4g), %.1f GFLOP/s", c->median_ms,
				 c->min_ms, c->gflops);
	return fmt_alloc("%.4g ms (min %.4g), %.1f GB/s", c->median_ms,
			 c->min_ms, c->gbps);
}

static void save_partial(Tune *t, const char *stage);

/* How far apart c's timings are: the slowest over the fastest (1 with a
 * single timing). */
static double
timing_spread(const Config *c)
{
	double lo = INFINITY, hi = 0;
	for (int i = 0; i < c->ntimes; i++) {
		lo = c->times[i] < lo ? c->times[i] : lo;
		hi = c->times[i] > hi ? c->times[i] : hi;
	}
	return c->ntimes > 1 && lo > 0 ? hi / lo : 1;
}

/* c's timings disagree, or one of them spread over its launches. */
static bool
is_noisy(const Config *c)
{
	return c->noisy_timings > 0 || timing_spread(c) > NOISE_RATIO;
}

/* One round over the finalists, starting at a different one each
 * round. */
static void
time_round(Tune *t, Config **fin, int nfin, int round)
{
	for (int j = 0; j < nfin; j++) {
		Config *c = fin[(j + round) % nfin];
		char *why = NULL;
		if (!time_one(t, c, &why)) {
			/* Keep its earlier timings. */
			fprintf(stderr, "tilec tune: timing again failed: %s\n",
				why);
			free(why);
		}
		save_partial(t, "confirming");
	}
}

/* Say that the timings were noisy, naming the worst configuration. */
static void
warn_noise(Tune *t, Config **ok, int nok)
{
	const Config *worst = NULL;
	int within = 0, total = 0;
	for (int i = 0; i < nok; i++) {
		within += ok[i]->noisy_timings;
		total += ok[i]->ntimes;
		if (!worst || timing_spread(ok[i]) > timing_spread(worst))
			worst = ok[i];
	}
	TcBuf v;
	tc_buf_init(&v);
	fprintf(stderr, "tilec tune: warning: the timings are noisy");
	if (worst && timing_spread(worst) > NOISE_RATIO) {
		values_text(t, worst->values, &v);
		double lo = INFINITY, hi = 0;
		for (int i = 0; i < worst->ntimes; i++) {
			lo = worst->times[i] < lo ? worst->times[i] : lo;
			hi = worst->times[i] > hi ? worst->times[i] : hi;
		}
		fprintf(stderr, ": %s timed from %.4g to %.4g ms (%.1fx) over "
			"%d timings", v.data, lo, hi, hi / lo, worst->ntimes);
	}
	if (within)
		fprintf(stderr, "%s%d of %d timings had their median launch over "
			"%.1fx their fastest", worst && timing_spread(worst) >
			NOISE_RATIO ? "; " : ": ", within, total, NOISE_RATIO);
	fprintf(stderr, ".  The machine is likely busy; the choice rests on "
		"medians of %d rounds but may be noise: tune on a quiet "
		"machine, or with more --repeat and --confirm\n",
		1 + t->confirm + t->extra_rounds);
	tc_buf_free(&v);
}

static int
cmp_by_time(const void *a, const void *b)
{
	const Config *x = *(Config *const *)a, *y = *(Config *const *)b;
	return cmp_double(&x->final_ms, &y->final_ms);
}

/* Time every checked configuration, then the finalists again in
 * alternating rounds.  Returns the chosen one, or NULL. */
static Config *
time_all(Tune *t)
{
	t->done = 0;
	t->todo = 0;
	for (int i = 0; i < t->ncfg; i++)
		t->todo += t->cfg[i].status == ST_PENDING;
	fprintf(stderr, "tilec tune: timing %d at %s (%s, median of %d after "
		"%d warm-up launches, rotating input sets)\n", t->todo,
		t->shape.text, t->timer, t->repeat, t->warmup);
	Config **ok = calloc((size_t)t->ncfg + 1, sizeof *ok);
	int nok = 0;
	for (int i = 0; ok && i < t->ncfg; i++) {
		Config *c = &t->cfg[i];
		if (c->status != ST_PENDING)
			continue;
		t->done++;
		char *why = NULL;
		if (time_one(t, c, &why)) {
			c->status = ST_OK;
			ok[nok++] = c;
			/* Saved before it is reported: what the progress line
			 * shows is on disk. */
			save_partial(t, "timing");
			char *tt = time_text(c);
			progress(t, c, tt);
			free(tt);
		} else {
			c->status = ST_FAILED;
			c->reason = why;
			save_partial(t, "timing");
			char *line = fmt_alloc("FAILED, skipped: %s", why);
			progress(t, c, line);
			free(line);
		}
	}
	if (!ok || nok == 0) {
		free(ok);
		return NULL;
	}
	/* The finalists: the fastest few and the default. */
	qsort(ok, (size_t)nok, sizeof *ok, cmp_by_time);
	Config *fin[FINALISTS + 1];
	int nfin = 0;
	for (int i = 0; i < nok && nfin < FINALISTS; i++)
		fin[nfin++] = ok[i];
	Config *def = &t->cfg[t->default_index];
	bool have_def = false;
	for (int i = 0; i < nfin; i++)
		have_def |= fin[i] == def;
	if (def->status == ST_OK && !have_def)
		fin[nfin++] = def;
	if (t->confirm > 0 && nfin > 1)
		fprintf(stderr, "tilec tune: %d more rounds over the %d "
			"finalists\n", t->confirm, nfin);
	int round = 0;
	for (; round < t->confirm && nfin > 1; round++)
		time_round(t, fin, nfin, round);
	/* Noisy finalists (the machine was busy for some of their
	 * timings): as many rounds again, at least NOISE_MIN_ROUNDS, within
	 * MAX_TIMES timings each; the medians then rest on more of them.
	 * --confirm 0 asked for no more timings. */
	bool noisy = false;
	for (int i = 0; i < nfin; i++)
		noisy |= is_noisy(fin[i]);
	if (noisy && t->confirm > 0 && nfin > 1) {
		int extra = t->confirm > NOISE_MIN_ROUNDS ? t->confirm
							  : NOISE_MIN_ROUNDS;
		if (1 + t->confirm + extra > MAX_TIMES)
			extra = MAX_TIMES - 1 - t->confirm;
		if (extra > 0)
			fprintf(stderr, "tilec tune: the finalists' timings are "
				"noisy; %d more rounds\n", extra);
		for (int i = 0; i < extra; i++)
			time_round(t, fin, nfin, round++);
		t->extra_rounds = extra > 0 ? extra : 0;
	}
	for (int i = 0; i < nok && !noisy; i++)
		noisy |= is_noisy(ok[i]);
	if (noisy) {
		t->noisy = true;
		warn_noise(t, ok, nok);
	}
	Config *best = NULL;
	for (int i = 0; i < nfin; i++)
		if (!best || fin[i]->final_ms < best->final_ms)
			best = fin[i];
	if (nfin > 1) {
		for (int i = 0; i < nfin; i++) {
			TcBuf v;
			tc_buf_init(&v);
			values_text(t, fin[i]->values, &v);
			fprintf(stderr, "  %-40s %.4g ms median of %d timings%s%s\n",
				v.data, fin[i]->final_ms, fin[i]->ntimes,
				fin[i]->is_default ? ", the default" : "",
				fin[i] == best ? ", chosen" : "");
			tc_buf_free(&v);
		}
	}
	free(ok);
	return best;
}

/* --- The record ------------------------------------------------------------- */

/* Order in the record: measured ones fastest first (the finalists,
 * re-timed together, before the rest), then the rest by status, each in
 * enumeration order. */
static int
status_rank(Status s)
{
	static const int rank[ST_COUNT] = {
		[ST_OK] = 0,      [ST_SAME_CODE] = 1,     [ST_WRONG] = 2,
		[ST_FAILED] = 3,  [ST_COMPILE_ERROR] = 4, [ST_PRUNED] = 5,
		[ST_PENDING] = 6,
	};
	return rank[s];
}

static int
cmp_record_order(const void *a, const void *b)
{
	const Config *x = *(Config *const *)a, *y = *(Config *const *)b;
	int rx = status_rank(x->status), ry = status_rank(y->status);
	if (rx != ry)
		return rx - ry;
	/* The finalists first: their times come from the same later rounds,
	 * and a machine that slowed down between the rounds makes the
	 * others' single first-round times look faster. */
	if (x->status == ST_OK && (x->ntimes > 1) != (y->ntimes > 1))
		return y->ntimes > 1 ? 1 : -1;
	if (x->status == ST_OK && x->final_ms != y->final_ms)
		return cmp_double(&x->final_ms, &y->final_ms);
	return (x > y) - (x < y);
}

static json_t *
config_json(const Tune *t, const Config *c)
{
	json_t *o = json_object();
	json_object_set_new(o, "values", values_json(t, c->values, false));
	json_object_set_new(o, "status", json_string(status_names[c->status]));
	if (c->is_default)
		json_object_set_new(o, "default", json_true());
	if (c->reason)
		json_object_set_new(o, "reason", json_string(c->reason));
	if (c->log) {
		size_t n = strlen(c->log);
		char *keep = n > LOG_KEEP ? fmt_alloc("%.*s\n[... %zu more bytes]",
						      LOG_KEEP, c->log,
						      n - LOG_KEEP)
					  : xstrdup(c->log);
		json_object_set_new(o, "log", json_string(keep));
		free(keep);
	}
	if (c->status == ST_SAME_CODE && c->same_as >= 0)
		json_object_set_new(o, "same_code_as",
				    values_json(t, t->cfg[c->same_as].values,
						false));
	if (c->rel_err >= 0)
		json_object_set_new(o, "max_rel_err", json_real(c->rel_err));
	if (c->ntimes > 0) {
		json_object_set_new(o, "median_ms", json_real(c->median_ms));
		json_object_set_new(o, "min_ms", json_real(c->min_ms));
		json_object_set_new(o, "mean_ms", json_real(c->mean_ms));
		json_object_set_new(o, "runs", json_integer(c->runs));
		json_object_set_new(o, "final_ms", json_real(c->final_ms));
		json_object_set_new(o, "timings", json_integer(c->ntimes));
		if (c->ntimes > 1)
			json_object_set_new(o, "spread",
					    json_real(timing_spread(c)));
		if (is_noisy(c))
			json_object_set_new(o, "noisy", json_true());
		if (c->gflops > 0)
			json_object_set_new(o, "gflops", json_real(c->gflops));
		if (c->gbps > 0)
			json_object_set_new(o, "gbps", json_real(c->gbps));
	}
	return o;
}

/* The whole record.  shape, bucket and check are consumed.  best is
 * NULL in a partial record that has timed nothing yet: it has no
 * "chosen". */
static json_t *
record_json(Tune *t, const Config *best, json_t *shape, json_t *bucket,
	    json_t *check)
{
	json_t *r = json_object();
	json_object_set_new(r, "format", json_string(RECORD_FORMAT));
	json_object_set_new(r, "spdx_license", json_string("MIT"));
	json_object_set_new(r, "tilec_version", json_string(TILEC_VERSION));
	json_object_set_new(r, "tilec_revision",
			    json_string(TILEC_GIT_REVISION));
	json_object_set_new(r, "created", now_json());
	json_object_set_new(r, "kernel", json_string(t->kname));
	json_object_set_new(r, "source", json_string(t->file));
	json_object_set_new(r, "source_sha256", json_string(t->sha));
	json_object_set_new(r, "target", json_string(t->tinfo.name));
	json_object_set_new(r, "arch", json_string(t->tinfo.arch));
	if (t->march)
		json_object_set_new(r, "march", json_string(t->march));
	json_object_set_new(r, "device", json_string(t->device));
	json_object_set_new(r, "compilers", json_incref(t->compilers));
	json_object_set_new(r, "shape", shape);
	json_object_set_new(r, "shape_bucket", bucket);
	json_object_set_new(r, "check_shape", check);
	if (t->nranges) {
		/* The inputs' value ranges the search ran with. */
		json_t *ranges = json_array();
		for (int i = 0; i < t->nranges; i++)
			json_array_append_new(ranges,
					      json_string(t->range_arg[i]));
		json_object_set_new(r, "ranges", ranges);
	}
	json_t *pinned = json_object();
	for (int i = 0; i < t->ntun; i++)
		if (t->tun[i].pinned)
			json_object_set_new(pinned, t->tun[i].name,
					    json_integer(t->tun[i].def));
	json_object_set_new(r, "pinned", pinned);
	const Config *def = &t->cfg[t->default_index];
	json_object_set_new(r, "default", values_json(t, def->values, true));
	if (best)
		json_object_set_new(r, "chosen",
				    values_json(t, best->values, true));

	json_t *m = json_object();
	json_object_set_new(m, "statistic", json_string("median"));
	json_object_set_new(m, "timer", json_string(t->timer));
	json_object_set_new(m, "warmup", json_integer(t->warmup));
	json_object_set_new(m, "repeat", json_integer(t->repeat));
	json_object_set_new(m, "confirm_rounds", json_integer(t->confirm));
	json_object_set_new(m, "finalists", json_integer(FINALISTS));
	json_object_set_new(m, "noisy", json_boolean(t->noisy));
	json_object_set_new(m, "noise_ratio", json_real(NOISE_RATIO));
	json_object_set_new(m, "extra_rounds", json_integer(t->extra_rounds));
	if (best && best->input_sets)
		json_object_set_new(m, "input_sets",
				    json_integer(best->input_sets));
	json_object_set_new(r, "measure", m);

	json_t *res = json_object();
	int count[ST_COUNT] = { 0 };
	for (int i = 0; i < t->ncfg; i++)
		count[t->cfg[i].status]++;
	json_t *counts = json_object();
	for (int s = 0; s < ST_COUNT; s++)
		if (count[s])
			json_object_set_new(counts, status_names[s],
					    json_integer(count[s]));
	json_object_set_new(res, "configs", json_integer(t->ncfg));
	json_object_set_new(res, "by_status", counts);
	if (best)
		json_object_set_new(res, "chosen_ms", json_real(best->final_ms));
	if (best && def->status == ST_OK) {
		json_object_set_new(res, "default_ms", json_real(def->final_ms));
		json_object_set_new(res, "speedup",
				    json_real(def->final_ms / best->final_ms));
	}
	json_object_set_new(r, "result", res);

	Config **order = calloc((size_t)t->ncfg, sizeof *order);
	json_t *all = json_array();
	for (int i = 0; order && i < t->ncfg; i++)
		order[i] = &t->cfg[i];
	if (order) {
		qsort(order, (size_t)t->ncfg, sizeof *order, cmp_record_order);
		for (int i = 0; i < t->ncfg; i++)
			json_array_append_new(all, config_json(t, order[i]));
	}
	free(order);
	json_object_set_new(r, "configs", all);
	return r;
}

/* The choice so far: the fastest of the configurations timed more than
 * once (the finalists), else of those timed; NULL if none is. */
static const Config *
best_so_far(const Tune *t)
{
	const Config *best = NULL;
	for (int pass = 0; pass < 2 && !best; pass++)
		for (int i = 0; i < t->ncfg; i++) {
			const Config *c = &t->cfg[i];
			if (c->status != ST_OK || (pass == 0 && c->ntimes < 2))
				continue;
			if (!best || c->final_ms < best->final_ms)
				best = c;
		}
	return best;
}

/* Write what the search has measured so far to t->partial (atomically,
 * so an interrupted search leaves the last one whole): the record as it
 * would be now, with "partial" saying how far it got.  A failure is
 * warned about once and does not stop the search. */
static void
save_partial(Tune *t, const char *stage)
{
	if (!t->partial || t->partial_failed)
		return;
	int checked = 0, timed = 0, to_time = 0;
	for (int i = 0; i < t->ncfg; i++) {
		Status st = t->cfg[i].status;
		checked += st == ST_OK || st == ST_PENDING || st == ST_WRONG ||
			   st == ST_FAILED || st == ST_COMPILE_ERROR;
		timed += st == ST_OK;
		to_time += st == ST_OK || st == ST_PENDING;
	}
	json_t *rec = record_json(t, best_so_far(t), shape_json(&t->shape),
				  bucket_json(&t->shape),
				  shape_json(t->check_shape.n ? &t->check_shape
							      : &t->shape));
	json_t *p = json_object();
	json_object_set_new(p, "stage", json_string(stage));
	json_object_set_new(p, "checked", json_integer(checked));
	json_object_set_new(p, "timed", json_integer(timed));
	json_object_set_new(p, "to_time", json_integer(to_time));
	json_object_set_new(rec, "partial", p);
	char *s = json_dumps(rec, JSON_INDENT(2) | JSON_SORT_KEYS |
					  JSON_REAL_PRECISION(6));
	json_decref(rec);
	TcBuf b;
	tc_buf_init(&b);
	tc_buf_printf(&b, "%s\n", s ? s : "");
	free(s);
	if (!tc_write_file(t->partial, b.data, b.len)) {
		fprintf(stderr, "tilec tune: warning: cannot write the partial "
			"record %s: %s; the search goes on\n",
			t->partial, strerror(errno ? errno : EIO));
		t->partial_failed = true;
	}
	tc_buf_free(&b);
}

/* Print o as the one JSON object on stdout (--json), and free it. */
static void
print_json(json_t *o)
{
	char *s = json_dumps(o, JSON_INDENT(2) | JSON_SORT_KEYS);
	if (s) {
		printf("%s\n", s);
		free(s);
	}
	json_decref(o);
}

/* A time for --json: null when there is none. */
static json_t *
ms_json(bool ok, double ms)
{
	return ok && isfinite(ms) ? json_real(ms) : json_null();
}

/* The summary after a search (or --finish), as --json prints it. */
static void
print_choice_json(const Tune *t, const Config *best, const char *path)
{
	const Config *def = &t->cfg[t->default_index];
	bool def_ok = def->status == ST_OK;
	json_t *o = json_object(), *counts = json_object();
	json_object_set_new(o, "kernel", json_string(t->kname));
	json_object_set_new(o, "file", json_string(t->file));
	json_object_set_new(o, "target", json_string(t->tinfo.name));
	json_object_set_new(o, "arch", json_string(t->tinfo.arch));
	json_object_set_new(o, "device", json_string(t->device));
	json_object_set_new(o, "chosen", values_json(t, best->values, true));
	json_object_set_new(o, "chosen_ms", ms_json(true, best->final_ms));
	json_object_set_new(o, "chosen_is_default", json_boolean(best == def));
	json_object_set_new(o, "default", values_json(t, def->values, true));
	json_object_set_new(o, "default_status",
			    json_string(status_names[def->status]));
	json_object_set_new(o, "default_ms", ms_json(def_ok, def->final_ms));
	json_object_set_new(o, "speedup",
			    ms_json(def_ok, def->final_ms / best->final_ms));
	for (int i = 0; i < t->ncfg; i++) {
		const char *s = status_names[t->cfg[i].status];
		json_t *n = json_object_get(counts, s);
		json_object_set_new(counts, s,
				    json_integer(n ? json_integer_value(n) + 1
						   : 1));
	}
	json_object_set_new(o, "configs", counts);
	json_object_set_new(o, "record", path ? json_string(path) : json_null());
	print_json(o);
}

/* The summary after a search. */
static void
print_choice(const Tune *t, const Config *best, const char *path)
{
	if (t->json) {
		print_choice_json(t, best, path);
		return;
	}
	const Config *def = &t->cfg[t->default_index];
	TcBuf v;
	tc_buf_init(&v);
	values_text(t, best->values, &v);
	printf("chosen: %s, %.4g ms", v.data, best->final_ms);
	if (best == def)
		printf(" (the default)");
	else if (def->status == ST_OK)
		printf("; the default %.4g ms (%.2fx)", def->final_ms,
		       def->final_ms / best->final_ms);
	else
		printf("; the default was %s", status_names[def->status]);
	printf("\n");
	if (path)
		printf("record: %s\n", path);
	tc_buf_free(&v);
}

static const char *
record_path(Tune *t, char *buf, size_t n)
{
	if (t->out)
		return t->out;
	snprintf(buf, n, "%s.%s.tune.json", t->kname, t->tinfo.name);
	return buf;
}

/* --- This machine: device, compilers ------------------------------------------ */

/* Open the target's device once: its name, limits, and the translator
 * arch `tilec run` will use on it. */
static bool
open_device(Tune *t, char *arch_buf, size_t n)
{
	int backend = tilec_backend_from_name(t->target);
	if (backend < 0) {
		TcBuf why;
		tc_buf_init(&why);
		tc_target_explain(&why, t->target, NULL);
		failf("%s", why.data);
		tc_buf_free(&why);
		return false;
	}
	long long dev = 0;
	if (t->device_arg && (!tc_opt_integer(t->device_arg, &dev) || dev < 0)) {
		failf("--device %s: expected a device number", t->device_arg);
		return false;
	}
	tilec_init_error e;
	tilec_context *ctx = tilec_context_new((tilec_backend)backend,
					       backend == TILEC_BACKEND_OPENMP
						       ? 0
						       : (int)dev,
					       &e);
	if (!ctx) {
		failf("%s", e.message);
		if (backend != TILEC_BACKEND_OPENMP)
			fprintf(stderr, "  (where the target cannot run, "
				"`tilec tune --prepare DIR` writes the "
				"configurations for tools/tune_farm.py)\n");
		return false;
	}
	tilec_device_info info;
	tilec_device_get_info(ctx, &info);
	tc_tune_device_name(t->target, info.name, t->device, sizeof t->device);
	t->device_smem = info.max_shared_bytes;
	t->compilers = json_object();
	if (backend == TILEC_BACKEND_OPENMP) {
		const char *cc = t->cc ? t->cc : getenv("TILEC_CC");
		char *v = compiler_version(ctx, cc && cc[0] ? cc : "cc");
		json_object_set_new(t->compilers, "cc",
				    json_string(v ? v : "unknown"));
		free(v);
		t->timer = "wall clock";
	} else {
		json_object_set_new(t->compilers, "runtime",
				    json_string("tilec runtime "
						TILEC_RUNTIME_VERSION));
		t->timer = "device events";
		/* As `tilec run` picks it. */
		TcTarget tt;
		if (!t->arch) {
			if (tc_target_init(&tt, t->target, info.arch))
				snprintf(arch_buf, n, "%s", info.arch);
			else
				snprintf(arch_buf, n, "%s",
					 backend == TILEC_BACKEND_CUDA ? "sm_80"
								       : "gfx90a");
			t->arch = arch_buf;
		}
	}
	tilec_context_free(ctx);
	return true;
}

/* Search on this machine and write the record. */
static int
tune_here(Tune *t)
{
	char arch[32];
	if (!open_device(t, arch, sizeof arch) || !load_program(t) ||
	    !enumerate(t))
		return EXIT_STOPPED;
	if (!t->shape.n) {
		failf("--shape is required: the values of %s's integer "
		      "parameters", t->kname);
		return EXIT_STOPPED;
	}
	/* Where the record goes, checked before a search that may take
	 * hours; the partial record goes next to it (not for a device or a
	 * pipe, which have no "next to"). */
	char buf[512];
	const char *path = record_path(t, buf, sizeof buf);
	if (!tc_check_writable(path)) {
		failf("cannot write the record %s: %s; nothing searched", path,
		      strerror(errno ? errno : EIO));
		return EXIT_STOPPED;
	}
	struct stat st;
	if (stat(path, &st) != 0 || S_ISREG(st.st_mode))
		t->partial = fmt_alloc("%s.partial", path);
	if (translate_all(t, false) > 0)
		check_all(t);
	save_partial(t, "checked");
	Config *best = time_all(t);
	if (!best) {
		failf("no configuration of %s passed its check; no record "
		      "written", t->kname);
		if (t->partial)
			unlink(t->partial);
		return EXIT_NONE;
	}
	json_t *rec = record_json(t, best, shape_json(&t->shape),
				  bucket_json(&t->shape),
				  shape_json(t->check_shape.n ? &t->check_shape
							      : &t->shape));
	bool ok = write_json(path, rec);
	json_decref(rec);
	if (!ok) {
		if (t->partial && !t->partial_failed)
			fprintf(stderr, "tilec tune: what was measured is in "
				"%s\n", t->partial);
		return EXIT_STOPPED;
	}
	/* The record has everything the partial one had. */
	if (t->partial)
		unlink(t->partial);
	print_choice(t, best, path);
	return EXIT_OK;
}

/* --config RECORD: the record's choice and the default, checked and timed
 * again here, next to what the record says. */
static int
tune_replay(Tune *t)
{
	char arch[32];
	if (!open_device(t, arch, sizeof arch) || !load_program(t))
		return EXIT_STOPPED;
	if (!t->shape.n) {
		failf("--shape is required");
		return EXIT_STOPPED;
	}
	TcOptions opt;
	tc_options_init(&opt, t->target, t->arch);
	TcDiags d;
	tc_diags_init(&d, t->file, t->text, t->len);
	d.to_stderr = true;
	for (int i = 0; i < t->ndefines; i++) {
		opt.define_name[opt.ndefines] = t->define_name[i];
		opt.define_value[opt.ndefines++] = t->define_value[i];
	}
	TcArena *a = tc_arena_new();
	bool ok = tc_config_apply(t->config, t->text, t->len, t->device, a,
				  &opt, &d);
	tc_diags_free(&d);
	t->cfg = calloc(2, sizeof *t->cfg);
	if (!ok || !t->cfg) {
		tc_arena_free(a);
		return EXIT_STOPPED;
	}
	Config *chosen = &t->cfg[0], *def = &t->cfg[1];
	bool same = true;
	for (int i = 0; i < t->ntun; i++) {
		chosen->values[i] = def->values[i] = t->tun[i].def;
		for (int j = 0; j < opt.ndefines; j++)
			if (strcmp(opt.define_name[j], t->tun[i].name) == 0)
				chosen->values[i] = opt.define_value[j];
		same &= chosen->values[i] == def->values[i];
		/* Show every value that differs. */
		if (chosen->values[i] != def->values[i])
			t->tun[i].nchoices = t->tun[i].nchoices > 1
						     ? t->tun[i].nchoices
						     : 2;
	}
	tc_arena_free(a);
	t->ncfg = same ? 1 : 2;
	def = same ? chosen : def;
	def->is_default = true;
	t->default_index = same ? 0 : 1;
	for (int i = 0; i < t->ncfg; i++) {
		t->cfg[i].rel_err = -1;
		t->cfg[i].same_as = -1;
	}
	if (translate_all(t, false) > 0)
		check_all(t);
	Config *best = time_all(t);
	if (!best) {
		failf("neither the record's choice nor the default passed");
		return EXIT_NONE;
	}
	TcRecord r;
	TcDiags quiet;
	tc_diags_init(&quiet, NULL, NULL, 0);
	if (t->json) {
		bool def_ok = !same && def->status == ST_OK;
		bool chosen_ok = chosen->status == ST_OK;
		json_t *o = json_object();
		json_object_set_new(o, "replay", json_string(t->config));
		json_object_set_new(o, "kernel", json_string(t->kname));
		json_object_set_new(o, "device", json_string(t->device));
		json_object_set_new(o, "chosen", values_json(t, chosen->values,
							     true));
		json_object_set_new(o, "chosen_status",
				    json_string(status_names[chosen->status]));
		json_object_set_new(o, "chosen_ms",
				    ms_json(chosen_ok, chosen->final_ms));
		json_object_set_new(o, "default_ms", ms_json(def_ok,
							     def->final_ms));
		json_object_set_new(o, "speedup",
				    ms_json(chosen_ok && def_ok,
					    def->final_ms / chosen->final_ms));
		if (tc_record_load(&r, t->config, &quiet))
			json_object_set(o, "recorded",
					json_object_get(r.root, "result"));
		tc_record_free(&r);
		tc_diags_free(&quiet);
		print_json(o);
		return chosen_ok ? EXIT_OK : EXIT_NONE;
	}
	if (tc_record_load(&r, t->config, &quiet)) {
		json_t *res = json_object_get(r.root, "result");
		if (json_object_get(res, "chosen_ms"))
			printf("the record: chosen %.4g ms, default %.4g ms, on "
			       "%s\n", num(res, "chosen_ms"),
			       num(res, "default_ms"),
			       str(r.root, "device"));
	}
	tc_record_free(&r);
	tc_diags_free(&quiet);
	printf("replayed here (%s): the record's choice %.4g ms", t->device,
	       chosen->status == ST_OK ? chosen->final_ms : NAN);
	if (!same && def->status == ST_OK)
		printf(", the default %.4g ms (%.2fx)", def->final_ms,
		       def->final_ms / chosen->final_ms);
	printf("\n");
	return chosen->status == ST_OK ? EXIT_OK : EXIT_NONE;
}

/* --- --prepare: configurations for a machine without the translator --------- */

enum { READ = 1, WRITE = 2 };

/* One kernel parameter at the check shape. */
typedef struct Arg {
	const TcVar *var;       /* the parameter */
	int role;               /* TENSOR: READ | WRITE */
	size_t count;           /* TENSOR: elements */
	size_t bytes;           /* TENSOR: bytes of storage */
	void *data;             /* TENSOR: its storage */
	bool ranged;            /* TENSOR read: --range gave its values */
	double lo, hi;          /* ranged: the values, both included */
	union {
		int32_t i32;
		int64_t i64;
		int8_t i8;
		uint8_t u8;
		float f32;
		double f64;
	} scalar;               /* SCALAR: the value, in its C type */
} Arg;

/* Every scalar parameter's value at `shape` as JSON: integers must be
 * given, floats default as in `tilec run` (1e-5 for eps..., else 1). */
static json_t *
resolve_shape(const TcKernel *k, const Shape *shape, TcBuf *err)
{
	json_t *o = json_object();
	for (int i = 0; i < k->params.len; i++) {
		const TcVar *v = k->params.items[i];
		if (v->kind != TC_VAR_SCALAR)
			continue;
		const char *s = NULL;
		for (int j = 0; j < shape->n; j++)
			if (strcmp(shape->name[j], v->name) == 0)
				s = shape->value[j];
		long long n;
		if (tc_dtype_is_float(v->dtype))
			json_object_set_new(o, v->name,
					    json_real(s ? strtod(s, NULL)
						      : strncmp(v->name, "eps", 3) == 0
								? 1e-5
								: 1.0));
		else if (s && tc_opt_integer(s, &n))
			json_object_set_new(o, v->name, json_integer(n));
		else
			tc_buf_printf(err, "%sno integer value for %s", err->len ? "; " : "",
				      v->name);
	}
	return o;
}

/* Store bytes as DIR/data/<hash>.bin once; its name relative to DIR. */
static char *
save_data(const char *dir, const void *data, size_t n)
{
	char hex[65];
	sha256_hex(data, n, hex);
	char *rel = fmt_alloc("data/%.16s.bin", hex);
	char *path = fmt_alloc("%s/%s", dir, rel);
	struct stat st;
	if (stat(path, &st) != 0 || (size_t)st.st_size != n) {
		FILE *f = fopen(path, "wb");
		bool ok = f && fwrite(data, 1, n, f) == n;
		if (f)
			ok = fclose(f) == 0 && ok;
		if (!ok) {
			failf("cannot write %s: %s", path, strerror(errno));
			free(rel);
			rel = NULL;
		}
	}
	free(path);
	return rel;
}

/* The value ranges --range gives the tensors of args (check_data), for
 * the scalar values there; false (reported) on a bad range. */
static bool
apply_ranges(const Tune *t, Arg *args, int n, json_t *values)
{
	const char **names = calloc((size_t)n + 1, sizeof *names);
	double *vals = calloc((size_t)n + 1, sizeof *vals);
	int nscalars = 0;
	for (int i = 0; names && vals && i < n; i++)
		if (args[i].var->kind == TC_VAR_SCALAR) {
			names[nscalars] = args[i].var->name;
			vals[nscalars++] = json_number_value(
				json_object_get(values, args[i].var->name));
		}
	bool ok = names && vals;
	for (int r = 0; ok && r < t->nranges; r++) {
		for (const char *p = t->range_arg[r]; ok && *p;) {
			const char *comma = strchr(p, ',');
			size_t len = comma ? (size_t)(comma - p) : strlen(p);
			char *name = NULL, *lo = NULL, *hi = NULL;
			ok = tc_opt_range(p, len, &name, &lo, &hi);
			Arg *g = NULL;
			for (int i = 0; ok && i < n; i++)
				if (args[i].var->kind == TC_VAR_TENSOR &&
				    strcmp(args[i].var->name, name) == 0)
					g = &args[i];
			TcBuf err;
			tc_buf_init(&err);
			if (ok && (!g || !(g->role & READ))) {
				failf("--range %s: the kernel reads no tensor of "
				      "that name", name);
				ok = false;
			} else if (ok && !tc_opt_range_values(
						 name, lo, hi, g->var->dtype,
						 nscalars, names, vals, &g->lo,
						 &g->hi, &err)) {
				failf("%s (at the check shape)", err.data);
				ok = false;
			}
			if (ok)
				g->ranged = true;
			tc_buf_free(&err);
			free(name);
			free(lo);
			free(hi);
			p += len + (comma ? 1 : 0);
		}
	}
	free(names);
	free(vals);
	return ok;
}

/* The reference at the check shape for configuration c: inputs and
 * expected outputs written under dir; *check describes them.  *roles and
 * *tol are filled when not NULL. */
static bool
check_data(Tune *t, const Config *c, const char *dir, json_t **check,
	   json_t **roles, double *tol)
{
	const Shape *shape = t->check_shape.n ? &t->check_shape : &t->shape;
	TcOptions opt;
	config_options(t, c, &opt);
	TcArena *a = tc_arena_new();
	TcDiags d;
	tc_diags_init(&d, t->file, t->text, t->len);
	d.to_stderr = true;
	TcProgram *p = tc_parse(a, t->file, t->text, &opt, &d);
	bool ok = p && tc_specialize(a, p, &opt, &d) && tc_check(a, p, &opt, &d) &&
		  d.errors == 0;
	const TcKernel *k = NULL;
	for (int i = 0; ok && i < p->kernels.len; i++)
		if (strcmp(((TcKernel *)p->kernels.items[i])->name, t->kname) == 0)
			k = p->kernels.items[i];
	int n = k ? k->params.len : 0;
	Arg *args = calloc((size_t)n + 1, sizeof *args);
	void **slots = calloc((size_t)n + 1, sizeof *slots);
	void **argv = calloc((size_t)n + 1, sizeof *argv);
	ok = ok && k && args && slots && argv;
	TcBuf err;
	tc_buf_init(&err);
	json_t *values = ok ? resolve_shape(k, shape, &err) : NULL;
	if (ok && err.len) {
		failf("--check-shape: %s", err.data);
		ok = false;
	}
	for (int i = 0; ok && i < n; i++) {
		Arg *g = &args[i];
		g->var = k->params.items[i];
		if (g->var->kind != TC_VAR_SCALAR)
			continue;
		double x = json_number_value(json_object_get(values, g->var->name));
		switch (g->var->dtype) {
		case TC_DT_F64: g->scalar.f64 = x; break;
		case TC_DT_F32:
		case TC_DT_F16:
		case TC_DT_BF16: g->scalar.f32 = (float)x; break;
		case TC_DT_I64: g->scalar.i64 = (int64_t)x; break;
		case TC_DT_I8: g->scalar.i8 = (int8_t)x; break;
		case TC_DT_U8:
		case TC_DT_BOOL: g->scalar.u8 = (uint8_t)x; break;
		default: g->scalar.i32 = (int32_t)x; break;
		}
		argv[i] = &g->scalar;
	}
	if (ok) {
		int *role = calloc((size_t)n + 1, sizeof *role);
		ok = role != NULL;
		if (ok)
			tc_tensor_roles(k, role);
		for (int i = 0; ok && i < n; i++)
			args[i].role = (role[i] & TC_ROLE_READ ? READ : 0) |
				       (role[i] & TC_ROLE_WRITE ? WRITE : 0);
		free(role);
	}
	for (int i = 0; ok && i < n; i++) {
		Arg *g = &args[i];
		const TcVar *v = g->var;
		if (v->kind != TC_VAR_TENSOR)
			continue;
		if (v->is_const || !g->role)
			g->role |= READ;
		double count = 1, e;
		for (int j = 0; ok && j < v->rank; j++) {
			ok = tc_interp_eval(k, v->shape[j], argv, &e, &d) && e >= 0;
			count *= e;
		}
		if (!ok || count * tc_dtype_bits(v->dtype) / 8 > 4e9) {
			failf("tensor %s: a bad or huge extent at the check shape",
			      v->name);
			ok = false;
			break;
		}
		g->count = (size_t)count;
		g->bytes = tc_elem_bytes(v->dtype, g->count);
		g->data = calloc(1, g->bytes ? g->bytes : 1);
		ok = g->data != NULL;
		slots[i] = g->data;
		argv[i] = &slots[i];
	}
	if (ok && t->nranges && !t->tune_ranges) {
		/* The values at the tuning shape, which the farm times at. */
		json_t *tv = resolve_shape(k, &t->shape, &err);
		ok = tv && !err.len && apply_ranges(t, args, n, tv);
		if (ok) {
			t->tune_ranges = json_object();
			for (int i = 0; i < n; i++) {
				if (!args[i].ranged)
					continue;
				json_t *lh = json_array();
				bool real = tc_dtype_is_float(args[i].var->dtype);
				json_array_append_new(
					lh, real ? json_real(args[i].lo)
						 : json_integer((json_int_t)args[i].lo));
				json_array_append_new(
					lh, real ? json_real(args[i].hi)
						 : json_integer((json_int_t)args[i].hi));
				json_object_set_new(t->tune_ranges,
						    args[i].var->name, lh);
			}
		} else if (err.len) {
			failf("--shape: %s", err.data);
		}
		json_decref(tv);
	}
	ok = ok && apply_ranges(t, args, n, values);
	uint64_t seed = 1;
	long long s;
	if (t->seed && tc_opt_integer(t->seed, &s))
		seed = (uint64_t)s;
	json_t *inputs = json_object(), *expected = json_object();
	for (int i = 0; ok && i < n; i++) {
		Arg *g = &args[i];
		if (g->var->kind != TC_VAR_TENSOR)
			continue;
		if (g->role & READ) {
			if (g->ranged)
				tc_elem_fill_range(g->var->dtype, g->data,
						   g->count, seed, g->var->param,
						   g->lo, g->hi);
			else
				tc_elem_fill_random(g->var->dtype, g->data,
						    g->count, seed,
						    g->var->param);
			char *f = save_data(dir, g->data, g->bytes);
			ok = f != NULL;
			if (f)
				json_object_set_new(inputs, g->var->name,
						    json_string(f));
			free(f);
		} else {
			/* Poison, as `tilec run` does: what the reference
			 * leaves unwritten shows. */
			if (tc_dtype_is_float(g->var->dtype))
				for (size_t j = 0; j < g->count; j++)
					tc_elem_store(g->var->dtype, g->data, j,
						      NAN);
			else
				memset(g->data, 0xab, g->bytes);
		}
	}
	if (ok && !tc_interp_run(k, argv, false, NULL, &d)) {
		failf("the reference interpreter stopped at the check shape "
		      "(above)");
		ok = false;
	}
	for (int i = 0; ok && i < n; i++) {
		Arg *g = &args[i];
		if (g->var->kind != TC_VAR_TENSOR || !(g->role & WRITE))
			continue;
		char *f = save_data(dir, g->data, g->bytes);
		ok = f != NULL;
		if (f)
			json_object_set_new(expected, g->var->name, json_string(f));
		free(f);
	}
	if (ok) {
		*check = json_object();
		json_object_set_new(*check, "shape", json_incref(values));
		json_object_set_new(*check, "inputs", json_incref(inputs));
		json_object_set_new(*check, "expected", json_incref(expected));
		if (roles) {
			*roles = json_object();
			for (int i = 0; i < n; i++)
				if (args[i].var->kind == TC_VAR_TENSOR)
					json_object_set_new(
						*roles, args[i].var->name,
						json_string(args[i].role == READ ? "in"
							    : args[i].role == WRITE
								? "out"
								: "inout"));
		}
		if (tol)
			*tol = tc_kernel_tolerance(k);
	}
	json_decref(inputs);
	json_decref(expected);
	json_decref(values);
	for (int i = 0; args && i < n; i++)
		free(args[i].data);
	free(args);
	free(slots);
	free(argv);
	tc_buf_free(&err);
	tc_diags_free(&d);
	tc_arena_free(a);
	return ok;
}

/* Compile-only NVRTC, one context per worker. */
static void *
compile_worker(void *arg)
{
	Tune *t = arg;
	tilec_init_error e;
	tilec_context *ctx = tilec_context_new(TILEC_BACKEND_CUDA,
					       TILEC_DEVICE_NONE, &e);
	for (;;) {
		pthread_mutex_lock(&t->lock);
		while (t->next < t->ncfg && t->cfg[t->next].status != ST_PENDING)
			t->next++;
		int i = t->next < t->ncfg ? t->next++ : -1;
		pthread_mutex_unlock(&t->lock);
		if (i < 0 || !ctx)
			break;
		Config *c = &t->cfg[i];
		tilec_compile_options o;
		tilec_compile_options_init(&o);
		char name[64];
		snprintf(name, sizeof name, "%s.cu", c->id);
		o.name = name;
		o.arch = t->march ? t->march : t->tinfo.arch;
		double t0 = tilec_now();
		tilec_module *m = tilec_compile(ctx, c->source, strlen(c->source),
						&o);
		c->compile_ms = (tilec_now() - t0) * 1e3;
		if (!m) {
			c->status = ST_COMPILE_ERROR;
			c->reason = xstrdup("NVRTC rejected the generated code");
			c->log = xstrdup(tilec_error(ctx));
		} else {
			tilec_module_info info;
			if (tilec_module_get_info(m, &info) == TILEC_OK &&
			    info.path[0])
				c->cubin = xstrdup(info.path);
		}
		tilec_module_free(m);
		pthread_mutex_lock(&t->lock);
		t->done++;
		char *what = m ? fmt_alloc("compiles (%.0f ms)", c->compile_ms)
			       : fmt_alloc("COMPILE ERROR, skipped; the log:");
		progress(t, c, what);
		free(what);
		pthread_mutex_unlock(&t->lock);
	}
	tilec_context_free(ctx);
	return NULL;
}

/* NVRTC over every pending configuration, where NVRTC is available;
 * returns a sentence for the manifest. */
static char *
compile_check(Tune *t)
{
	tilec_init_error e;
	tilec_context *probe = tilec_context_new(TILEC_BACKEND_CUDA,
						 TILEC_DEVICE_NONE, &e);
	if (!probe) {
		fprintf(stderr, "tilec tune: note: not compiling here (%s); "
			"the farm will find compile errors\n", e.message);
		return fmt_alloc("not compiled where prepared: %s", e.message);
	}
	tilec_context_free(probe);
	t->next = t->done = t->todo = 0;
	for (int i = 0; i < t->ncfg; i++)
		t->todo += t->cfg[i].status == ST_PENDING;
	fprintf(stderr, "tilec tune: compiling %d with NVRTC for %s, %d at a "
		"time\n", t->todo, t->march ? t->march : t->tinfo.arch, t->jobs);
	pthread_t th[64];
	int n = t->jobs < 64 ? t->jobs : 64, started = 0;
	for (int i = 0; i < n; i++)
		started += pthread_create(&th[started], NULL, compile_worker, t) == 0;
	if (started == 0)
		compile_worker(t);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	int bad = 0;
	for (int i = 0; i < t->ncfg; i++)
		bad += t->cfg[i].status == ST_COMPILE_ERROR;
	return fmt_alloc("compiled with NVRTC (compile-only) where prepared: "
			 "%d compiled, %d rejected", t->todo - bad, bad);
}

static json_t *
parse_json_text(const char *text)
{
	json_t *j = text ? json_loads(text, 0, NULL) : NULL;
	return j ? j : json_null();
}

/* Write DIR: the sources, manifest.json and the check data. */
static int
tune_prepare(Tune *t)
{
	if (strcmp(t->target, "cuda") != 0) {
		failf("--prepare writes CUDA configurations for "
		      "tools/tune_farm.py; use -t cuda (on the CPU, tune here)");
		return EXIT_STOPPED;
	}
	if (!t->shape.n) {
		failf("--shape is required");
		return EXIT_STOPPED;
	}
	if (!load_program(t) || !enumerate(t))
		return EXIT_STOPPED;
	if (!t->arch)
		fprintf(stderr, "tilec tune: note: translating for %s (the "
			"default); pass --arch sm_90a for Hopper\n",
			t->tinfo.arch);
	snprintf(t->device, sizeof t->device, "%s", "(the farm's)");
	char *data_dir = fmt_alloc("%s/data", t->prepare);
	if ((mkdir(t->prepare, 0755) != 0 && errno != EEXIST) ||
	    (mkdir(data_dir, 0755) != 0 && errno != EEXIST)) {
		failf("cannot create %s: %s", data_dir, strerror(errno));
		free(data_dir);
		return EXIT_STOPPED;
	}
	free(data_dir);
	translate_all(t, true);
	char *compiled = compile_check(t);

	/* The check data, one reference per configuration. */
	json_t *roles = NULL;
	double tol = 0;
	int left = 0;
	for (int i = 0; i < t->ncfg; i++)
		left += t->cfg[i].status == ST_PENDING;
	fprintf(stderr, "tilec tune: the reference at %s for %d "
		"configurations\n",
		t->check_shape.n ? t->check_shape.text : t->shape.text, left);
	json_t *configs = json_array(), *excluded = json_array();
	bool ok = true;
	for (int i = 0; ok && i < t->ncfg; i++) {
		Config *c = &t->cfg[i];
		if (c->status != ST_PENDING) {
			json_t *o = json_object();
			json_object_set_new(o, "id", json_string(c->id));
			json_object_set_new(o, "values",
					    values_json(t, c->values, true));
			json_object_set_new(o, "status",
					    json_string(status_names[c->status]));
			if (c->reason)
				json_object_set_new(o, "reason",
						    json_string(c->reason));
			if (c->log)
				json_object_set_new(o, "log", json_string(c->log));
			if (c->same_as >= 0)
				json_object_set_new(o, "same_code_as",
						    json_string(t->cfg[c->same_as].id));
			if (c->is_default)
				json_object_set_new(o, "default", json_true());
			json_array_append_new(excluded, o);
			continue;
		}
		json_t *check = NULL;
		ok = check_data(t, c, t->prepare, &check, roles ? NULL : &roles,
				&tol);
		if (!ok)
			break;
		char *src_name = fmt_alloc("%s.cu", c->id);
		char *src_path = fmt_alloc("%s/%s", t->prepare, src_name);
		ok = write_atomic(src_path, c->source, strlen(c->source));
		json_t *o = json_object();
		/* The cubin compiled here, which the farm loads instead of
		 * compiling when its driver takes it. */
		size_t clen = 0;
		char *cubin = c->cubin ? tc_read_file(c->cubin, &clen) : NULL;
		if (cubin) {
			char *name = fmt_alloc("%s.cubin", c->id);
			char *path = fmt_alloc("%s/%s", t->prepare, name);
			if (write_atomic(path, cubin, clen))
				json_object_set_new(o, "cubin", json_string(name));
			free(name);
			free(path);
			free(cubin);
		}
		json_object_set_new(o, "id", json_string(c->id));
		json_object_set_new(o, "values", values_json(t, c->values, true));
		json_object_set_new(o, "source", json_string(src_name));
		json_object_set_new(o, "launch", parse_json_text(c->launch));
		json_object_set_new(o, "check", check);
		if (c->is_default)
			json_object_set_new(o, "default", json_true());
		json_array_append_new(configs, o);
		free(src_name);
		free(src_path);
	}
	const TcKernel *k = NULL;
	for (int i = 0; i < t->prog->kernels.len; i++)
		if (strcmp(((TcKernel *)t->prog->kernels.items[i])->name,
			   t->kname) == 0)
			k = t->prog->kernels.items[i];
	TcBuf err;
	tc_buf_init(&err);
	json_t *shape = resolve_shape(k, &t->shape, &err);
	json_t *cshape = resolve_shape(k, t->check_shape.n ? &t->check_shape
							 : &t->shape,
				       &err);
	if (err.len) {
		failf("--shape: %s", err.data);
		ok = false;
	}
	json_t *m = json_object();
	if (ok) {
		json_object_set_new(m, "format", json_string(PREPARED_FORMAT));
		json_object_set_new(m, "tilec_version", json_string(TILEC_VERSION));
		json_object_set_new(m, "created", now_json());
		json_object_set_new(m, "kernel", json_string(t->kname));
		json_object_set_new(m, "source", json_string(t->file));
		json_object_set_new(m, "source_sha256", json_string(t->sha));
		json_object_set_new(m, "target", json_string(t->tinfo.name));
		json_object_set_new(m, "arch", json_string(t->tinfo.arch));
		json_object_set_new(m, "march", json_string(t->march ? t->march
								    : t->tinfo.arch));
		json_object_set_new(m, "shape", json_incref(shape));
		json_object_set_new(m, "shape_bucket", bucket_json(&t->shape));
		json_object_set_new(m, "check_shape", json_incref(cshape));
		json_t *tuned = json_array(), *pinned = json_object();
		for (int i = 0; i < t->ntun; i++) {
			if (t->tun[i].nchoices > 1)
				json_array_append_new(tuned, json_string(t->tun[i].name));
			if (t->tun[i].pinned)
				json_object_set_new(pinned, t->tun[i].name,
						    json_integer(t->tun[i].def));
		}
		json_object_set_new(m, "tunables", tuned);
		json_object_set_new(m, "pinned", pinned);
		json_object_set_new(m, "default",
				    values_json(t, t->cfg[t->default_index].values,
						true));
		json_object_set_new(m, "roles", roles ? roles : json_object());
		roles = NULL;
		if (t->nranges) {
			/* The inputs' value ranges: as written, for the
			 * record, and their values at the tuning shape, for
			 * the farm's timing inputs. */
			json_t *ranges = json_array();
			for (int i = 0; i < t->nranges; i++)
				json_array_append_new(
					ranges, json_string(t->range_arg[i]));
			json_object_set_new(m, "ranges", ranges);
			json_object_set_new(m, "value_ranges",
					    t->tune_ranges ? json_incref(
								     t->tune_ranges)
							   : json_object());
		}
		json_object_set_new(m, "tol", json_real(t->tol ? strtod(t->tol, NULL)
							       : tol));
		json_object_set_new(m, "seed", json_integer(t->seed ? strtoll(t->seed, NULL, 10)
								    : 1));
		json_t *meas = json_object();
		json_object_set_new(meas, "warmup", json_integer(t->warmup));
		json_object_set_new(meas, "repeat", json_integer(t->repeat));
		json_object_set_new(meas, "confirm_rounds", json_integer(t->confirm));
		json_object_set_new(meas, "finalists", json_integer(FINALISTS));
		json_object_set_new(meas, "rotate_bytes", json_integer(256ll << 20));
		json_object_set_new(m, "measure", meas);
		json_object_set_new(m, "compile_check", json_string(compiled));
		json_object_set_new(m, "configs", json_incref(configs));
		json_object_set_new(m, "excluded", json_incref(excluded));
		char *path = fmt_alloc("%s/manifest.json", t->prepare);
		ok = write_json(path, m);
		free(path);
	}
	json_decref(m);
	json_decref(shape);
	json_decref(cshape);
	json_decref(roles);
	tc_buf_free(&err);
	free(compiled);
	if (ok && t->json) {
		json_t *o = json_object();
		json_object_set_new(o, "prepared", json_string(t->prepare));
		json_object_set_new(o, "configs",
				    json_integer((json_int_t)json_array_size(
					    configs)));
		json_object_set_new(o, "excluded",
				    json_integer((json_int_t)json_array_size(
					    excluded)));
		print_json(o);
	} else if (ok) {
		printf("prepared %zu configurations in %s (%zu excluded); run\n"
		       "  python3 tools/tune_farm.py %s\n"
		       "on the GPU machine, then\n"
		       "  tilec tune --finish %s [--timings FILE] -o RECORD\n",
		       json_array_size(configs), t->prepare,
		       json_array_size(excluded), t->prepare, t->prepare);
	}
	json_decref(configs);
	json_decref(excluded);
	return ok ? EXIT_OK : EXIT_STOPPED;
}

/* --- --finish: the farm's timings into a record --------------------------------- */

static Status
status_from_name(const char *s)
{
	for (int i = 0; i < ST_COUNT; i++)
		if (s && strcmp(s, status_names[i]) == 0)
			return (Status)i;
	return ST_FAILED;
}

/* Set c's values from a JSON object of every tunable's value. */
static void
values_from_json(const Tune *t, Config *c, json_t *o)
{
	for (int i = 0; i < t->ntun; i++) {
		json_t *v = json_object_get(o, t->tun[i].name);
		c->values[i] = v ? json_integer_value(v) : t->tun[i].def;
	}
}

static json_t *
load_json(const char *path, char **text_out)
{
	char *text = tc_read_file(path, NULL);
	if (!text) {
		failf("cannot read %s: %s", path, strerror(errno));
		return NULL;
	}
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);
	if (!j)
		fprintf(stderr, "%s:%d:%d: error: malformed JSON: %s\n", path,
			e.line, e.column, e.text);
	if (text_out)
		*text_out = text;
	else
		free(text);
	return j;
}

static int
tune_finish(Tune *t)
{
	char *mpath = fmt_alloc("%s/manifest.json", t->finish);
	char *tpath = t->timings ? xstrdup(t->timings)
				 : fmt_alloc("%s/timings.json", t->finish);
	char *mtext = NULL;
	json_t *m = load_json(mpath, &mtext), *tm = m ? load_json(tpath, NULL)
						      : NULL;
	int status = EXIT_STOPPED;
	char msha[65] = "";
	if (mtext)
		sha256_hex(mtext, strlen(mtext), msha);
	if (!m || !tm)
		goto out;
	if (strcmp(str(m, "format"), PREPARED_FORMAT) != 0 ||
	    strcmp(str(tm, "format"), TIMINGS_FORMAT) != 0) {
		failf("%s or %s is not what --prepare and tools/tune_farm.py "
		      "write (\"format\": \"%s\", \"%s\")", mpath, tpath,
		      PREPARED_FORMAT, TIMINGS_FORMAT);
		goto out;
	}
	if (strcmp(str(tm, "manifest_sha256"), msha) != 0) {
		failf("%s: key \"manifest_sha256\": the timings are for another "
		      "manifest than %s", tpath, mpath);
		goto out;
	}
	t->kname = str(m, "kernel");
	t->file = str(m, "source");
	snprintf(t->sha, sizeof t->sha, "%s", str(m, "source_sha256"));
	if (!tc_target_init(&t->tinfo, str(m, "target"), str(m, "arch"))) {
		failf("%s: unknown target %s/%s", mpath, str(m, "target"),
		      str(m, "arch"));
		goto out;
	}
	if (strcmp(str(m, "march"), t->tinfo.arch) != 0)
		t->march = str(m, "march");
	snprintf(t->device, sizeof t->device, "%s", str(tm, "device"));
	t->compilers = json_incref(json_object_get(tm, "compilers"));
	if (!t->compilers)
		t->compilers = json_object();
	t->timer = "device events";
	json_t *meas = json_object_get(tm, "measure");
	if (!meas)
		meas = json_object_get(m, "measure");
	t->warmup = (int)num(meas, "warmup");
	t->repeat = (int)num(meas, "repeat");
	t->confirm = (int)num(meas, "confirm_rounds");

	/* The tunables, by name (the manifest keeps them sorted). */
	const char *name;
	json_t *v;
	json_object_foreach(json_object_get(m, "default"), name, v) {
		if (t->ntun == MAX_TUNABLES)
			break;
		Tunable *u = &t->tun[t->ntun++];
		u->name = name;
		u->def = json_integer_value(v);
		u->nchoices = 1;
		u->pinned = json_object_get(json_object_get(m, "pinned"), name) != NULL;
		size_t i;
		json_t *tn;
		json_array_foreach(json_object_get(m, "tunables"), i, tn)
			if (strcmp(json_string_value(tn), name) == 0)
				u->nchoices = 2;
	}

	json_t *configs = json_object_get(m, "configs");
	json_t *excluded = json_object_get(m, "excluded");
	size_t total = json_array_size(configs) + json_array_size(excluded);
	t->cfg = calloc(total + 1, sizeof *t->cfg);
	if (!t->cfg)
		goto out;
	t->default_index = -1;
	json_t *farm = json_object_get(tm, "configs");
	for (size_t pass = 0; pass < 2; pass++) {
		json_t *list = pass == 0 ? configs : excluded;
		size_t i;
		json_t *o;
		json_array_foreach(list, i, o) {
			Config *c = &t->cfg[t->ncfg];
			c->rel_err = -1;
			c->same_as = -1;
			snprintf(c->id, sizeof c->id, "%s", str(o, "id"));
			values_from_json(t, c, json_object_get(o, "values"));
			if (json_is_true(json_object_get(o, "default"))) {
				c->is_default = true;
				t->default_index = t->ncfg;
			}
			json_t *f = pass == 0 ? json_object_get(farm, c->id) : o;
			if (!f) {
				c->status = ST_FAILED;
				c->reason = xstrdup("no result from the farm");
				t->ncfg++;
				continue;
			}
			c->status = status_from_name(str(f, "status"));
			if (str(f, "reason")[0])
				c->reason = xstrdup(str(f, "reason"));
			if (c->status == ST_PENDING) {
				/* The farm stopped before deciding. */
				c->status = ST_FAILED;
				free(c->reason);
				c->reason = xstrdup("not finished on the farm");
			}
			if (str(f, "log")[0])
				c->log = xstrdup(str(f, "log"));
			if (json_object_get(f, "max_rel_err"))
				c->rel_err = num(f, "max_rel_err");
			json_t *times = json_object_get(f, "timings_ms");
			size_t j;
			json_t *x;
			json_array_foreach(times, j, x)
				if (c->ntimes < MAX_TIMES)
					c->times[c->ntimes++] = json_number_value(x);
			if (c->status == ST_OK && c->ntimes == 0) {
				c->status = ST_FAILED;
				c->reason = xstrdup("the farm sent no timing");
			}
			c->median_ms = num(f, "median_ms");
			c->min_ms = num(f, "min_ms");
			c->mean_ms = num(f, "mean_ms");
			c->runs = (int)num(f, "runs");
			c->input_sets = (int)num(f, "input_sets");
			c->gbps = num(f, "gbps");
			c->gflops = num(f, "tflops") * 1e3;
			c->final_ms = median(c->times, c->ntimes);
			t->ncfg++;
		}
	}
	/* same_code_as names an id. */
	for (size_t i = 0; i < json_array_size(excluded); i++) {
		const char *to = str(json_array_get(excluded, i), "same_code_as");
		Config *c = &t->cfg[json_array_size(configs) + i];
		for (int j = 0; to[0] && j < t->ncfg; j++)
			if (strcmp(t->cfg[j].id, to) == 0)
				c->same_as = j;
	}
	if (t->default_index < 0) {
		failf("%s names no default configuration", mpath);
		goto out;
	}
	/* The choice: fastest among those timed again, else among all. */
	const Config *best = best_so_far(t);
	/* The ranges the inputs were drawn with, into the record (strings
	 * of m, which outlives it). */
	json_t *ranges = json_object_get(m, "ranges");
	for (size_t i = 0; i < json_array_size(ranges) &&
			   t->nranges < TC_MAX_DEFINES; i++)
		if (json_string_value(json_array_get(ranges, i)))
			t->range_arg[t->nranges++] =
				json_string_value(json_array_get(ranges, i));
	if (!best) {
		failf("no configuration passed on the farm; no record written");
		status = EXIT_NONE;
		goto out;
	}
	json_t *rec = record_json(t, best,
				  json_incref(json_object_get(m, "shape")),
				  json_incref(json_object_get(m, "shape_bucket")),
				  json_incref(json_object_get(m, "check_shape")));
	if (json_object_get(tm, "anchor"))
		json_object_set_new(rec, "anchor",
				    json_incref(json_object_get(tm, "anchor")));
	json_t *f = json_object();
	json_object_set_new(f, "prepared", json_string(t->finish));
	json_object_set_new(f, "compile_check",
			    json_incref(json_object_get(m, "compile_check")));
	json_object_set_new(f, "timings_created",
			    json_incref(json_object_get(tm, "created")));
	if (json_is_true(json_object_get(tm, "dry_run"))) {
		json_object_set_new(f, "dry_run", json_true());
		fprintf(stderr, "tilec tune: warning: %s comes from a dry run: "
			"its times are made up\n", tpath);
	}
	json_object_set_new(rec, "farm", f);
	char buf[512];
	const char *path = record_path(t, buf, sizeof buf);
	bool ok = write_json(path, rec);
	json_decref(rec);
	if (ok) {
		print_choice(t, best, path);
		status = EXIT_OK;
	}
out:
	json_decref(m);
	json_decref(tm);
	free(mtext);
	free(mpath);
	free(tpath);
	return status;
}

/* --- The command line ------------------------------------------------------------ */

static void
usage(FILE *f)
{
	fputs("usage: tilec tune FILE --shape N=V,... [options]\n"
	      "       tilec tune FILE -t cuda --shape ... --prepare DIR\n"
	      "       tilec tune --finish DIR [--timings FILE] [-o RECORD]\n"
	      "       tilec tune FILE --config RECORD --shape ...   (replay)\n"
	      "\n"
	      "Search the tunables of FILE's kernel for the fastest "
	      "configuration that\nmatches the reference, and write a JSON "
	      "record that --config replays.\n"
	      "\n"
	      "options:\n"
	      "  -t, --target T        openmp (default) or cuda\n"
	      "  --arch A, --march M   as for `tilec run`\n"
	      "  --kernel NAME         the kernel (needed if FILE has more)\n"
	      "  --shape N=V,...       the shape to tune for (scalar values)\n"
	      "  --check-shape N=V,... check against the reference here "
	      "(default:\n"
	      "                        --shape; a small ragged shape is "
	      "quicker)\n"
	      "  -D NAME=VALUE         pin a tunable (not searched)\n"
	      "  --choices NAME=V,V    search these values of NAME\n"
	      "  -o RECORD             where to write the record (default\n"
	      "                        KERNEL.TARGET.tune.json)\n"
	      "  --jobs N              compiles at once (default: the CPUs)\n"
	      "  --repeat N            timed launches per timing (default 20; "
	      "30 on a farm)\n"
	      "  --warmup N            untimed launches first (default 3; 5 "
	      "on a farm)\n"
	      "  --confirm N           rounds re-timing the finalists "
	      "(default 2)\n"
	      "  --max-configs N       refuse larger searches (default 4096)\n"
	      "  --register-limit N    prune GPU configurations whose "
	      "fragments need\n"
	      "                        more registers per thread (default "
	      "255; 0: off)\n"
	      "  --keep-duplicates     time configurations with identical "
	      "code too\n"
	      "  --seed S, --tol T, --cc CMD, --device N   as for `tilec run`\n"
	      "  --range T=LO:HI       as for `tilec run`\n"
	      "  --prepare DIR         write the configurations for "
	      "tools/tune_farm.py\n"
	      "  --finish DIR          turn DIR's manifest and the farm's "
	      "timings into\n"
	      "                        a record (--timings FILE, default "
	      "DIR/timings.json)\n"
	      "  --config RECORD       time the record's choice against the "
	      "default\n"
	      "  --json                print the summary (or --prepare's) as "
	      "one JSON\n"
	      "                        object on stdout\n"
	      "  -h, --help\n"
	      "\n"
	      "Exit status: 0 record written, 1 no configuration passed, 2 "
	      "stopped.\n", f);
}

/* Each item of a --range list has the form T=LO:HI (its bounds are
 * evaluated where the shape is known); the items are kept for the
 * harness. */
static bool
add_ranges(Tune *t, const char *list)
{
	for (const char *p = list; *p;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		char *name, *lo, *hi;
		if (!tc_opt_range(p, n, &name, &lo, &hi)) {
			failf("--range: expected TENSOR=LO:HI, got '%.*s'", (int)n,
			      p);
			return false;
		}
		if (t->nrange_items == TC_HARNESS_MAX_SHAPES) {
			free(name);
			free(lo);
			free(hi);
			failf("--range: more than %d tensors",
			      TC_HARNESS_MAX_SHAPES);
			return false;
		}
		t->range_name[t->nrange_items] = name;
		t->range_lo[t->nrange_items] = lo;
		t->range_hi[t->nrange_items++] = hi;
		p += n + (comma ? 1 : 0);
	}
	return true;
}

static bool
int_opt(const char *name, const char *v, int lo, int hi, int *out)
{
	long long n;
	if (!tc_opt_integer(v, &n) || n < lo || n > hi) {
		failf("%s %s: expected an integer in %d .. %d", name, v, lo, hi);
		return false;
	}
	*out = (int)n;
	return true;
}

/* The options, as ids for parse_args's switch. */
enum {
	OPT_HELP = 1, OPT_KEEP_DUPLICATES, OPT_TARGET, OPT_ARCH, OPT_MARCH,
	OPT_KERNEL, OPT_CHECK_SHAPE, OPT_SHAPE, OPT_CHOICES, OPT_DEFINE,
	OPT_OUT, OPT_JOBS, OPT_REPEAT, OPT_WARMUP, OPT_CONFIRM,
	OPT_MAX_CONFIGS, OPT_REGISTER_LIMIT, OPT_SEED, OPT_TOL, OPT_CC,
	OPT_DEVICE, OPT_PREPARE, OPT_FINISH, OPT_TIMINGS, OPT_CONFIG,
	OPT_RANGE, OPT_JSON,
};

static const TcOptSpec options[] = {
	{ "help", 'h', false, OPT_HELP },
	{ "keep-duplicates", 0, false, OPT_KEEP_DUPLICATES },
	{ "target", 't', true, OPT_TARGET },
	{ "arch", 0, true, OPT_ARCH },
	{ "march", 0, true, OPT_MARCH },
	{ "kernel", 0, true, OPT_KERNEL },
	{ "check-shape", 0, true, OPT_CHECK_SHAPE },
	{ "shape", 0, true, OPT_SHAPE },
	{ "choices", 0, true, OPT_CHOICES },
	{ NULL, 'D', true, OPT_DEFINE },
	{ NULL, 'o', true, OPT_OUT },
	{ "jobs", 0, true, OPT_JOBS },
	{ "repeat", 0, true, OPT_REPEAT },
	{ "warmup", 0, true, OPT_WARMUP },
	{ "confirm", 0, true, OPT_CONFIRM },
	{ "max-configs", 0, true, OPT_MAX_CONFIGS },
	{ "register-limit", 0, true, OPT_REGISTER_LIMIT },
	{ "seed", 0, true, OPT_SEED },
	{ "tol", 0, true, OPT_TOL },
	{ "cc", 0, true, OPT_CC },
	{ "device", 0, true, OPT_DEVICE },
	{ "prepare", 0, true, OPT_PREPARE },
	{ "finish", 0, true, OPT_FINISH },
	{ "timings", 0, true, OPT_TIMINGS },
	{ "config", 0, true, OPT_CONFIG },
	{ "range", 0, true, OPT_RANGE },
	{ "json", 0, false, OPT_JSON },
	{ 0 },
};

/* Returns -1 to go on, else an exit status. */
static int
parse_args(Tune *t, int argc, char **argv)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	t->target = "openmp";
	t->jobs = ncpu > 0 ? (int)ncpu : 1;
	t->repeat = t->warmup = -1;
	t->confirm = 2;
	t->max_configs = 4096;
	t->register_limit = 255;
	t->seed_value = 1;
	t->tol_value = -1;
	TcOptParser p;
	tc_opt_init(&p, argc, argv);
	int id;
	while ((id = tc_opt_next(&p, options)) != TC_OPT_END) {
		const char *a = p.arg, *v = p.value;
		bool ok = true;
		switch (id) {
		case TC_OPT_OPERAND:
			if (t->file) {
				failf("more than one file: '%s' and '%s'",
				      t->file, v);
				return EXIT_STOPPED;
			}
			t->file = v;
			break;
		case TC_OPT_UNKNOWN: {
			char hint[96];
			failf("unknown option '%s'%s (tilec tune --help)", a,
			      tc_opt_suggest(a, options, hint, sizeof hint));
			return EXIT_STOPPED;
		}
		case TC_OPT_MISSING:
			failf("option '%s' needs a value", a);
			return EXIT_STOPPED;
		case OPT_HELP:
			usage(stdout);
			return EXIT_OK;
		case OPT_KEEP_DUPLICATES: t->no_prune_dupes = true; break;
		case OPT_JSON: t->json = true; break;
		case OPT_TARGET: t->target = v; break;
		case OPT_ARCH: t->arch = v; break;
		case OPT_MARCH: t->march = v; break;
		case OPT_KERNEL: t->kernel = v; break;
		case OPT_CHECK_SHAPE: ok = shape_add(&t->check_shape, v); break;
		case OPT_SHAPE: ok = shape_add(&t->shape, v); break;
		case OPT_CHOICES:
			if (t->nchoice_args == TC_MAX_DEFINES) {
				failf("too many --choices");
				return EXIT_STOPPED;
			}
			t->choice_arg[t->nchoice_args++] = xstrdup(v);
			break;
		case OPT_DEFINE:
			if (t->ndefines == TC_MAX_DEFINES ||
			    !tc_opt_define(v, &t->define_name[t->ndefines],
					   &t->define_value[t->ndefines])) {
				failf("-D %s: expected NAME=INTEGER", v);
				return EXIT_STOPPED;
			}
			t->ndefines++;
			break;
		case OPT_OUT: t->out = v; break;
		case OPT_JOBS: ok = int_opt(a, v, 1, 256, &t->jobs); break;
		case OPT_REPEAT:
			ok = int_opt(a, v, 1, 1000000, &t->repeat);
			break;
		case OPT_WARMUP:
			ok = int_opt(a, v, 0, 1000000, &t->warmup);
			break;
		case OPT_CONFIRM:
			ok = int_opt(a, v, 0, MAX_TIMES - 1, &t->confirm);
			break;
		case OPT_MAX_CONFIGS:
			ok = int_opt(a, v, 1, 1000000, &t->max_configs);
			break;
		case OPT_REGISTER_LIMIT:
			ok = int_opt(a, v, 0, 1 << 20, &t->register_limit);
			break;
		case OPT_SEED: {
			long long n;
			t->seed = v;
			ok = tc_opt_integer(v, &n) && n >= 0;
			if (!ok)
				failf("--seed %s: expected an integer >= 0", v);
			t->seed_value = (unsigned long long)n;
			break;
		}
		case OPT_TOL:
			t->tol = v;
			ok = tc_opt_number(v, &t->tol_value) && t->tol_value >= 0;
			if (!ok)
				failf("--tol %s: expected a number >= 0", v);
			break;
		case OPT_CC: t->cc = v; break;
		case OPT_DEVICE: {
			long long n;
			t->device_arg = v;
			ok = tc_opt_integer(v, &n) && n >= 0 && n <= 1024;
			if (!ok)
				failf("--device %s: expected a device number", v);
			t->device_index = (int)n;
			break;
		}
		case OPT_PREPARE: t->prepare = v; break;
		case OPT_FINISH: t->finish = v; break;
		case OPT_TIMINGS: t->timings = v; break;
		case OPT_CONFIG: t->config = v; break;
		case OPT_RANGE:
			if (t->nranges == TC_MAX_DEFINES) {
				failf("too many --range");
				return EXIT_STOPPED;
			}
			t->range_arg[t->nranges++] = v;
			ok = add_ranges(t, v);
			break;
		}
		if (!ok)
			return EXIT_STOPPED;
	}
	if (!t->file && !t->finish) {
		usage(stderr);
		return EXIT_STOPPED;
	}
	if (!!t->prepare + !!t->finish + !!t->config > 1) {
		failf("--prepare, --finish and --config do not go together");
		return EXIT_STOPPED;
	}
	bool farm = t->prepare || t->finish;
	if (t->repeat < 0)
		t->repeat = farm ? 30 : 20;
	if (t->warmup < 0)
		t->warmup = farm ? 5 : 3;
	return -1;
}

static void
tune_free(Tune *t)
{
	for (int i = 0; t->cfg && i < t->ncfg; i++) {
		Config *c = &t->cfg[i];
		free(c->reason);
		free(c->log);
		free(c->norm);
		free(c->source);
		free(c->launch);
		free(c->cubin);
		gen_free(c);
		harness_free(c);
	}
	free(t->cfg);
	for (int i = 0; i < t->nrange_items; i++) {
		free(t->range_name[i]);
		free(t->range_lo[i]);
		free(t->range_hi[i]);
	}
	for (int i = 0; i < t->ndefines; i++)
		free(t->define_name[i]);
	for (int i = 0; i < t->nchoice_args; i++)
		free(t->choice_arg[i]);
	shape_free(&t->shape);
	shape_free(&t->check_shape);
	json_decref(t->compilers);
	json_decref(t->tune_ranges);
	free(t->partial);
	if (t->arena)
		tc_arena_free(t->arena);
	free(t->text);
	pthread_mutex_destroy(&t->lock);
}

int
tc_tune_main(int argc, char **argv)
{
	Tune t;
	memset(&t, 0, sizeof t);
	pthread_mutex_init(&t.lock, NULL);
	/* jansson seeds its hash function once; do it before any thread. */
	json_object_seed(0);
	int status = parse_args(&t, argc, argv);
	const char *noise = getenv("TILEC_TUNE_TEST_NOISE");
	long long every;
	if (noise && tc_opt_integer(noise, &every) && every > 0 &&
	    every < 1000000)
		t.test_noise = (int)every;
	if (status < 0) {
		if (t.finish)
			status = tune_finish(&t);
		else if (t.prepare)
			status = tune_prepare(&t);
		else if (t.config)
			status = tune_replay(&t);
		else
			status = tune_here(&t);
	}
	tune_free(&t);
	return status;
}
