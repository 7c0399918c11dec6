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
 * The work is in src/cmd/tune_*.c (tune.h says which file holds what);
 * this file holds the command line and small helpers.
 *
 * Records are read back by tc_config_apply (record.c), for `tilec FILE --config`,
 * `tilec run --config`, `tilec export --config` and `tilec tune --config`
 * (a replay: the record's choice against the default, timed again).
 */
#include "cmd/tune.h"

/* What became of a configuration, as records name it. */
const char *const tune_status_names[ST_COUNT] = {
	[ST_PENDING] = "pending",
	[ST_OK] = "ok",
	[ST_SAME_CODE] = "same_code",
	[ST_PRUNED] = "pruned",
	[ST_COMPILE_ERROR] = "compile_error",
	[ST_WRONG] = "wrong",
	[ST_FAILED] = "failed",
};

/* --- Small helpers -------------------------------------------------------- */

/* A problem that stops the search. */
void
tune_failf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("tilec tune: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputs("\n", stderr);
	va_end(ap);
}

char *
tune_xstrdup(const char *s)
{
	char *d = strdup(s ? s : "");
	if (!d) {
		fputs("tilec: out of memory\n", stderr);
		abort();
	}
	return d;
}

char *
tune_fmt_alloc(const char *fmt, ...)
{
	TcBuf b;
	va_list ap;
	tc_buf_init(&b);
	va_start(ap, fmt);
	tc_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	char *s = tc_buf_take(&b);
	return s ? s : tune_xstrdup("");
}

void
tune_sha256_hex(const void *data, size_t n, char hex[65])
{
	tilec_sha256_hex(data, n, hex);
}

int
tune_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double
tune_median(const double *v, int n)
{
	double s[MAX_TIMES];
	if (n <= 0)
		return 0;
	memcpy(s, v, (size_t)n * sizeof *s);
	qsort(s, (size_t)n, sizeof *s, tune_cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* Whether the configurations differ in u: several choices, or one
 * that is not the default (--choices BN=32 searches BN=32 against the
 * default); a tunable pinned with -D is never searched. */
bool
tune_searched(const Tunable *u)
{
	return u->nchoices > 1 || (u->nchoices == 1 && u->choices[0] != u->def);
}

/* "BLOCK_M=64 BLOCK_N=128" for the searched tunables. */
void
tune_values_text(const Tune *t, const long long *values, TcBuf *b)
{
	int n = 0;
	for (int i = 0; i < t->ntun; i++)
		if (tune_searched(&t->tun[i]))
			tc_buf_printf(b, "%s%s=%lld", n++ ? " " : "",
				      t->tun[i].name, values[i]);
	if (n == 0)
		tc_buf_puts(b, "(no tunables)");
}

/* The tuned values as a JSON object. */
json_t *
tune_values_json(const Tune *t, const long long *values, bool all)
{
	json_t *o = json_object();
	for (int i = 0; i < t->ntun; i++)
		if (all || tune_searched(&t->tun[i]))
			json_object_set_new(o, t->tun[i].name,
					    json_integer(values[i]));
	return o;
}

/* Write data to path whole or not at all (tc_write_file: a temporary
 * file in the same directory, synced and renamed; readers see the old
 * file or the whole new one). */
bool
tune_write_atomic(const char *path, const char *data, size_t len)
{
	if (tc_write_file(path, data, len))
		return true;
	tune_failf("cannot write %s: %s", path, strerror(errno ? errno : EIO));
	return false;
}

/* A JSON document as tilec writes it: sorted keys, two-space indent,
 * six significant digits, a final newline; written atomically. */
bool
tune_write_json(const char *path, json_t *doc)
{
	char *s = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS |
					  JSON_REAL_PRECISION(6));
	if (!s) {
		tune_failf("cannot format %s", path);
		return false;
	}
	TcBuf b;
	tc_buf_init(&b);
	tc_buf_printf(&b, "%s\n", s);
	free(s);
	bool ok = tune_write_atomic(path, b.data, b.len);
	tc_buf_free(&b);
	return ok;
}

/* The current time, for records: "2026-12-01T10:20:30Z". */
json_t *
tune_now_json(void)
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
char *
tune_compiler_version(tilec_context *ctx, const char *cc)
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
					r = tune_fmt_alloc("%.*s", (int)n, text);
			}
			tilec_rt_str_free(&out);
		}
	}
	tilec_rt_free_words(argv, argc);
	return r;
}

/* --- The command line ------------------------------------------------------------ */

static void
usage(FILE *f)
{
	fputs("usage: tilec tune FILE --shape N=V,... [options]\n"
	      "       tilec tune FILE -t cuda --shape ... --prepare DIR\n"
	      "       tilec tune --finish DIR [--timings FILE] [-o RECORD]\n"
	      "       tilec tune FILE --config RECORD --shape ...   (replay)\n"
	      "       tilec tune FILE --check RECORD [--margin PCT]\n"
	      "       tilec tune --unit DIR [--index N|LIST|all] [--jobs N]\n"
	      "\n"
	      "Search the tunables of FILE's kernel for the fastest "
	      "configuration that\nmatches the reference, and write a JSON "
	      "record that --config replays.\n"
	      "\n"
	      "options:\n"
	      "  -t, --target T        openmp (default) or cuda\n"
	      "  --arch A, --march M   as for `tilec run`\n"
	      "  --cpu-strip=N         as for `tilec run`, every configuration\n"
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
	      "  --jobs N              compiles (with --unit: units) at once\n"
	      "                        (default: the CPUs)\n"
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
	      "  --check RECORD        the same, and exit 1 unless the choice "
	      "still wins\n"
	      "                        by --margin PCT (default 0: the "
	      "default takes\n"
	      "                        at least as long as the choice)\n"
	      "  --unit-size N         configurations per work unit "
	      "(--prepare)\n"
	      "  --config-timeout S    seconds a configuration of a unit may "
	      "take\n"
	      "                        (default 600)\n"
	      "  --cpus-per-unit N     the Slurm script's --cpus-per-task "
	      "(CPU default:\n"
	      "                        --exclusive)\n"
	      "  --unit DIR            run one unit of DIR (--index N, default "
	      "Slurm's\n"
	      "                        SLURM_ARRAY_TASK_ID) and write its "
	      "result;\n"
	      "                        --index 0-5,9 or all: those units, "
	      "--jobs at a\n"
	      "                        time, their timings one at a time\n"
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
bool
tune_add_ranges(Tune *t, const char *list)
{
	for (const char *p = list; *p;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		char *name, *lo, *hi;
		if (!tc_opt_range(p, n, &name, &lo, &hi)) {
			tune_failf("--range: expected TENSOR=LO:HI, got '%.*s'", (int)n,
			      p);
			return false;
		}
		if (t->nrange_items == TC_HARNESS_MAX_SHAPES) {
			free(name);
			free(lo);
			free(hi);
			tune_failf("--range: more than %d tensors",
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

/* A file or directory option: an empty name is refused now, not found
 * out after the search (or taken as the current directory). */
static bool
path_opt(const char *name, const char *v, const char **out)
{
	if (!*v) {
		tune_failf("%s wants a path, not an empty one", name);
		return false;
	}
	*out = v;
	return true;
}

static bool
int_opt(const char *name, const char *v, int lo, int hi, int *out)
{
	long long n;
	if (!tc_opt_integer(v, &n) || n < lo || n > hi) {
		tune_failf("%s %s: expected an integer in %d .. %d", name, v, lo, hi);
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
	OPT_RANGE, OPT_JSON, OPT_CHECK, OPT_MARGIN, OPT_UNIT, OPT_INDEX,
	OPT_UNIT_SIZE, OPT_CONFIG_TIMEOUT, OPT_CPUS_PER_UNIT, OPT_CPU_STRIP,
};

static const TcOptSpec options[] = {
	{ "help", 'h', false, OPT_HELP },
	{ "keep-duplicates", 0, false, OPT_KEEP_DUPLICATES },
	{ "target", 't', true, OPT_TARGET },
	{ "arch", 0, true, OPT_ARCH },
	{ "march", 0, true, OPT_MARCH },
	{ "cpu-strip", 0, true, OPT_CPU_STRIP },
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
	{ "check", 0, true, OPT_CHECK },
	{ "margin", 0, true, OPT_MARGIN },
	{ "unit", 0, true, OPT_UNIT },
	{ "index", 0, true, OPT_INDEX },
	{ "unit-size", 0, true, OPT_UNIT_SIZE },
	{ "config-timeout", 0, true, OPT_CONFIG_TIMEOUT },
	{ "cpus-per-unit", 0, true, OPT_CPUS_PER_UNIT },
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
				tune_failf("more than one file: '%s' and '%s'",
				      t->file, v);
				return EXIT_STOPPED;
			}
			t->file = v;
			break;
		case TC_OPT_UNKNOWN: {
			char hint[96];
			tune_failf("unknown option '%s'%s (tilec tune --help)", a,
			      tc_opt_suggest(a, options, hint, sizeof hint));
			return EXIT_STOPPED;
		}
		case TC_OPT_MISSING:
			tune_failf("option '%s' needs a value", a);
			return EXIT_STOPPED;
		case OPT_HELP:
			usage(stdout);
			return EXIT_OK;
		case OPT_KEEP_DUPLICATES: t->no_prune_dupes = true; break;
		case OPT_JSON: t->json = true; break;
		case OPT_TARGET: t->target = v; break;
		case OPT_ARCH: t->arch = v; break;
		case OPT_MARCH: t->march = v; break;
		case OPT_CPU_STRIP:
			if (!tc_opt_cpu_strip(v, &t->cpu_strip)) {
				tune_failf(TC_OPT_CPU_STRIP_WANTS ", not '%s'", v);
				return EXIT_STOPPED;
			}
			break;
		case OPT_KERNEL: t->kernel = v; break;
		case OPT_CHECK_SHAPE: ok = tune_shape_add(&t->check_shape, v); break;
		case OPT_SHAPE: ok = tune_shape_add(&t->shape, v); break;
		case OPT_CHOICES:
			if (t->nchoice_args == TC_MAX_DEFINES) {
				tune_failf("too many --choices");
				return EXIT_STOPPED;
			}
			t->choice_arg[t->nchoice_args++] = tune_xstrdup(v);
			break;
		case OPT_DEFINE:
			if (t->ndefines == TC_MAX_DEFINES ||
			    !tc_opt_define(v, &t->define_name[t->ndefines],
					   &t->define_value[t->ndefines])) {
				tune_failf("-D %s: expected NAME=INTEGER", v);
				return EXIT_STOPPED;
			}
			t->ndefines++;
			break;
		case OPT_OUT: ok = path_opt(a, v, &t->out); break;
		case OPT_PREPARE: ok = path_opt(a, v, &t->prepare); break;
		case OPT_FINISH: ok = path_opt(a, v, &t->finish); break;
		case OPT_TIMINGS: ok = path_opt(a, v, &t->timings); break;
		case OPT_UNIT: ok = path_opt(a, v, &t->unit_dir); break;
		case OPT_JOBS:
			ok = int_opt(a, v, 1, 256, &t->jobs);
			t->jobs_given = true;
			break;
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
				tune_failf("--seed %s: expected an integer >= 0", v);
			t->seed_value = (unsigned long long)n;
			break;
		}
		case OPT_TOL:
			t->tol = v;
			ok = tc_opt_number(v, &t->tol_value) && t->tol_value >= 0;
			if (!ok)
				tune_failf("--tol %s: expected a number >= 0", v);
			break;
		case OPT_CC: t->cc = v; break;
		case OPT_DEVICE: {
			long long n;
			t->device_arg = v;
			ok = tc_opt_integer(v, &n) && n >= 0 && n <= 1024;
			if (!ok)
				tune_failf("--device %s: expected a device number", v);
			t->device_index = (int)n;
			break;
		}
		case OPT_CONFIG: t->config = v; break;
		case OPT_CHECK:
			t->config = v;
			t->check = true;
			break;
		case OPT_MARGIN:
			ok = tc_opt_number(v, &t->margin) && t->margin > -100 &&
			     t->margin < 1e6;
			if (!ok)
				tune_failf("--margin %s: expected a percentage "
					   "above -100", v);
			break;
		case OPT_INDEX: t->unit_index_arg = v; break;
		case OPT_UNIT_SIZE:
			ok = int_opt(a, v, 1, 1000000, &t->unit_size);
			break;
		case OPT_CONFIG_TIMEOUT:
			ok = tc_opt_number(v, &t->config_timeout) &&
			     t->config_timeout >= 1 && t->config_timeout <= 86400;
			if (!ok)
				tune_failf("--config-timeout %s: expected seconds "
					   "in 1 .. 86400", v);
			break;
		case OPT_CPUS_PER_UNIT:
			ok = int_opt(a, v, 1, 4096, &t->cpus_per_unit);
			break;
		case OPT_RANGE:
			if (t->nranges == TC_MAX_DEFINES) {
				tune_failf("too many --range");
				return EXIT_STOPPED;
			}
			t->range_arg[t->nranges++] = v;
			ok = tune_add_ranges(t, v);
			break;
		}
		if (!ok)
			return EXIT_STOPPED;
	}
	if (!t->file && !t->finish && !t->unit_dir) {
		usage(stderr);
		return EXIT_STOPPED;
	}
	if (!!t->prepare + !!t->finish + !!t->config + !!t->unit_dir > 1) {
		tune_failf("--prepare, --finish, --config, --check and --unit do "
			   "not go together");
		return EXIT_STOPPED;
	}
	if (t->unit_dir && t->file) {
		tune_failf("--unit DIR runs the program DIR was prepared from; "
			   "give no FILE");
		return EXIT_STOPPED;
	}
	if (t->prepare && t->config_timeout == 0)
		t->config_timeout = 600;
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
		tune_gen_free(c);
		tune_harness_free(c);
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
	tune_shape_free(&t->shape);
	tune_shape_free(&t->check_shape);
	json_decref(t->compilers);
	json_decref(t->tune_ranges);
	free(t->partial);
	free(t->owned_file);
	json_decref(t->unit_results);
	json_decref(t->unit_summary);
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
		else if (t.unit_dir)
			status = tune_unit(&t);
		else if (t.config)
			status = tune_replay(&t);
		else
			status = tune_here(&t);
	}
	tune_free(&t);
	return status;
}

