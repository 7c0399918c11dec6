/*
 * tune.h - what the files of `tilec tune` share (docs/tuning.md): the
 * search's state (Tune), its configurations (Config) and the functions
 * each file gives the others.
 *
 *   tune.c         the command line, small helpers, the status names
 *   tune_space.c   the search space: the program's tunables, the
 *                  configurations, pruning, one translation each
 *   tune_search.c  the search on this machine: each configuration checked
 *                  and timed on a harness (harness.c), the replay
 *   tune_record.c  the record: its JSON, the partial record, the summary
 *   tune_farm.c    --prepare and --finish: the search split with a GPU
 *                  farm (tools/tune_farm.py)
 *   tune_unit.c    the prepared search as work units for a batch
 *                  scheduler (Slurm arrays): --unit runs one, --finish
 *                  merges what finished
 */
#ifndef TILEC_TUNE_H
#define TILEC_TUNE_H

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

/* The statuses' names in records (tune.c). */
extern const char *const tune_status_names[ST_COUNT];

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
	int cpu_strip;          /* --cpu-strip (TcOptions.cpu_strip): the
				   same for every configuration */
	const char *kernel;     /* --kernel, or NULL */
	const char *cc;         /* --cc, or NULL */
	const char *out;        /* -o RECORD, or NULL for the default name */
	const char *prepare;    /* --prepare DIR */
	const char *finish;     /* --finish DIR */
	const char *timings;    /* --timings FILE (with --finish) */
	const char *config;     /* --config RECORD: replay it */
	bool check;             /* --check RECORD: the replay decides the
				   exit status (config is RECORD) */
	double margin;          /* --margin PCT: the record wins when the
				   default takes (1 + PCT/100) times the
				   choice's time or more */
	const char *unit_dir;   /* --unit DIR: run one unit of DIR */
	const char *unit_index_arg; /* --index N, or NULL: Slurm's task id */
	int unit_size;          /* --unit-size: configurations per unit; 0 */
	double config_timeout;  /* --config-timeout: seconds; 0 the default */
	int cpus_per_unit;      /* --cpus-per-unit; 0 the default */
	bool jobs_given;        /* --jobs was given */
	bool unit_rerun;        /* --unit: the unit had started before */
	char *owned_file;       /* --unit: the program's path (malloc'd) */
	json_t *unit_results;   /* --finish of units: results by config id */
	json_t *unit_summary;   /* --finish of units: done, missing, failed */
	double started;         /* tilec_now() when the search began (here) */
	double wall_s;          /* the search's wall time; 0 unknown */
	double timing_s;        /* seconds spent timing at the tuning shape:
				   on a GPU target, the GPU time */
	char timer_buf[64];     /* --finish of units: the units' timer */
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

/* tune.c */
bool tune_add_ranges(Tune *t, const char *list);
int tune_cmp_double(const void *a, const void *b);
char *tune_compiler_version(tilec_context *ctx, const char *cc);
/* A problem that stops the search, on stderr. */
void tune_failf(const char *fmt, ...) TC_PRINTF(1, 2);
/* printf into a new string (malloc'd). */
char *tune_fmt_alloc(const char *fmt, ...) TC_PRINTF(1, 2);
double tune_median(const double *v, int n);
bool tune_searched(const Tunable *u);
json_t *tune_now_json(void);
void tune_sha256_hex(const void *data, size_t n, char hex[65]);
json_t *tune_values_json(const Tune *t, const long long *values, bool all);
void tune_values_text(const Tune *t, const long long *values, TcBuf *b);
bool tune_write_atomic(const char *path, const char *data, size_t len);
bool tune_write_json(const char *path, json_t *doc);
char *tune_xstrdup(const char *s);

/* tune_space.c */
json_t *tune_bucket_json(const Tune *t, const Shape *s);
TcHarnessSpec tune_harness_spec(const Tune *t, const long long *values,
				bool reference_only);
void tune_config_options(const Tune *t, const Config *c, TcOptions *opt);
bool tune_enumerate(Tune *t);
void tune_gen_free(Config *c);
bool tune_load_program(Tune *t);
bool tune_shape_add(Shape *s, const char *list);
void tune_shape_free(Shape *s);
json_t *tune_shape_json(const Shape *s);
const char *tune_values_from_json(const Tune *t, json_t *o, long long *values);
int tune_translate_all(Tune *t, bool keep_source);

/* tune_search.c */
/* The values of `shape` and the --range lists, for a harness. */
void tune_harness_shape(const Tune *t, const Shape *shape, TcHarnessShape *s);
void tune_harness_free(Config *c);
bool tune_is_noisy(const Config *c);
double tune_num(json_t *o, const char *key);
void tune_progress(Tune *t, const Config *c, const char *what);
const char *tune_str(json_t *o, const char *key);
/* Where the search ran with --cpu-strip, its value as the option takes
 * it ("cpu_strip": 0 for none) in a record or manifest o; and back. */
void tune_strip_json(const Tune *t, json_t *o);
int tune_strip_from_json(json_t *o);
double tune_timing_spread(const Config *c);
int tune_here(Tune *t);
bool tune_open_device(Tune *t, char *arch_buf, size_t n);
int tune_replay(Tune *t);

/* tune_record.c */
const Config *tune_best_so_far(const Tune *t);
json_t *tune_ms_json(bool ok, double ms);
void tune_print_choice(const Tune *t, const Config *best, const char *path);
void tune_print_json(json_t *o);
json_t *tune_record_json(Tune *t, const Config *best, json_t *shape, json_t *bucket, json_t *check);
const char *tune_record_path(Tune *t, char *buf, size_t n);
void tune_save_partial(Tune *t, const char *stage);

/* tune_unit.c */
int tune_merge_units(Tune *t);
int tune_unit(Tune *t);
bool tune_units_write(Tune *t, json_t *configs, json_t *manifest);

/* tune_farm.c */
int tune_finish(Tune *t);
int tune_prepare(Tune *t);

#endif
