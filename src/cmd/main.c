/*
 * main.c - the tilec command line, a thin program over the library.
 *
 * Input: argv.  `tilec FILE [options]` translates a tile program (tilec.c
 * does the work); `tilec run ...` hands over to run.c, `tilec tune ...` to
 * tune.c and `tilec export ...` to export.c.  Output: the IR or
 * the target source on stdout (or -o FILE), diagnostics on stderr as they
 * are reported.
 *
 * Exit status: 0 on success, 1 if any error was reported (bad program,
 * unreadable file, backend not built), 2 for a malformed command line.
 * Nothing is written to -o FILE unless translation succeeded, and then
 * the whole file or nothing (tc_write_file: a temporary, renamed).
 */
#include "ir/tilec_int.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* What to print on success. */
typedef enum Emit {
	EMIT_SOURCE, /* the target's source (default) */
	EMIT_IR,     /* the IR after the pipeline */
	EMIT_LAUNCH, /* each kernel's launch manifest (JSON) */
} Emit;

/* The command line, parsed. */
typedef struct Cli {
	const char *file;       /* the tile program */
	const char *target;     /* -t */
	const char *arch;       /* --arch, or NULL for the target's default */
	const char *out;        /* -o, or NULL for stdout */
	const char *kernel;     /* --kernel */
	const char *dump_after; /* --dump-after */
	bool from_ir;           /* --from-ir: FILE is IR text (read.c) */
	const char *passes;     /* --passes: the passes to run on it */
	Emit emit;              /* --emit */
	bool verify;            /* --verify */
	bool line_directives;   /* --line-directives */
	bool standalone;        /* --standalone */
	TcWgmma wgmma;          /* --wgmma, --no-wgmma, --no-fp8-wgmma */
	TcTma tma;              /* --tma, --no-tma */
	bool no_tma_store;      /* --no-tma-store */
	bool no_half_pairs;     /* --no-half-pairs */
	int copy_plans;         /* --copy-plans 1, --no-copy-plans -1 */
	TcWarpSpec ws;          /* --warp-specialize, --no-warp-specialize,
				   --persistent */
	int cpu_strip;          /* --cpu-strip=N (TcOptions.cpu_strip) */
	bool list_kernels;      /* --list-kernels */
	bool json;              /* --json: --list-kernels as JSON */
	bool explain;           /* --explain */
	const char *config;     /* --config: a tuning record's values */
	bool time;              /* --time: report the translator's time */
	int ndefines;           /* -D bindings, in order */
	const char *define_name[TC_MAX_DEFINES];
	long long define_value[TC_MAX_DEFINES];
} Cli;

enum { EXIT_OK = 0, EXIT_ERROR = 1, EXIT_USAGE = 2 };

static void
usage(FILE *f)
{
	fputs("usage: tilec FILE [options]     translate a tile program\n"
	      "       tilec run ...            run a kernel (tilec run --help)\n"
	      "       tilec tune ...           search the tunables (tilec tune "
	      "--help)\n"
	      "       tilec export ...         kernels and launch functions to "
	      "vendor\n"
	      "                                (tilec export --help)\n"
	      "\n"
	      "options:\n"
	      "  -t, --target T       openmp (default), cuda or hip\n"
	      "  --arch A             the target's architecture (default: "
	      "the host's\n"
	      "                       vector ISA for openmp, the oldest "
	      "supported GPU)\n"
	      "  -o OUT               write the output to OUT, not stdout\n"
	      "  --kernel NAME        translate only kernel NAME\n"
	      "  -D NAME=VALUE        bind tunable NAME to an integer VALUE\n"
	      "  --config RECORD      bind the values of a tuning record "
	      "(-D wins)\n"
	      "  --emit=source|ir|launch  print the target source (default), "
	      "the IR,\n"
	      "                       or each kernel's launch manifest (JSON)\n"
	      "  --dump-after=STAGE   print the IR after STAGE instead of the "
	      "output\n"
	      "  --verify             verify the IR after every pass\n"
	      "  --from-ir            FILE is IR text as --emit=ir prints "
	      "it; only the\n"
	      "                       passes --passes=P,... names run on it "
	      "(none by\n"
	      "                       default)\n"
	      "  --line-directives    #line directives back to the tile "
	      "program\n"
	      "  --standalone         inline the helper headers into the "
	      "output\n"
	      "  --wgmma              on sm_90a, every gemm that fits uses "
	      "wgmma (default);\n"
	      "                       fp8 ones sum promoted per gemm, as "
	      "cuBLASLt's do\n"
	      "  --no-fp8-wgmma       on sm_90a, fp8 gemms use mma.sync, "
	      "whose sums are exact\n"
	      "  --no-wgmma           on sm_90a, every gemm uses mma.sync\n"
	      "  --tma                on sm_90a, every pipelined tile copy that "
	      "fits goes by\n"
	      "                       TMA (default: those of loops of 3 or more "
	      "stages\n"
	      "                       for a wgmma gemm)\n"
	      "  --no-tma             on sm_90a, no tile copy goes by TMA\n"
	      "  --no-tma-store       on sm_90a, epilogue tiles are stored "
	      "from registers,\n"
	      "                       not by TMA through shared memory\n"
	      "  --half-pairs, --no-half-pairs\n"
	      "                       on CUDA, runs of 4- and 8-bit integers "
	      "into f16 or\n"
	      "                       bf16 converted two at a time in 16-bit "
	      "arithmetic\n"
	      "                       where that is exact (default), or one "
	      "at a time in f32\n"
	      "  --copy-plans, --no-copy-plans\n"
	      "                       on CUDA, a pipelined loop's copies set up "
	      "once before it\n"
	      "                       where they fit, or every iteration "
	      "(default: off)\n"
	      "  --warp-specialize    on sm_90a, a producer warpgroup issues the "
	      "TMA copies\n"
	      "                       of a pipelined loop for the program's "
	      "threads\n"
	      "  --no-warp-specialize on sm_90a, the program's threads issue "
	      "them (default)\n"
	      "  --persistent         --warp-specialize, and one wave of "
	      "blocks that walk\n"
	      "                       the output tiles, each block's next tile's "
	      "copies\n"
	      "                       issued while it stores this one\n"
	      "  --cpu-strip=N        on the CPU, one thread runs N blocks of "
	      "a grid row\n"
	      "                       together, copying what they share once "
	      "(0: one\n"
	      "                       block a call; default: 4 for gemm "
	      "loops)\n"
	      "  --list-kernels       print the program's kernel names\n"
	      "  --list-targets       print every target and arch with what "
	      "tilec assumes\n"
	      "                       of it (threads, shared memory, "
	      "instructions)\n"
	      "  --json               with --list-kernels: one JSON object "
	      "(kernels,\n"
	      "                       their lines, the tunables and their "
	      "choices)\n"
	      "  --explain            a note on where each buffer lives "
	      "(registers,\n"
	      "                       shared memory) and why, to stderr\n"
	      "  --time               print the translation's time (reading, "
	      "parsing,\n"
	      "                       passes, emitting) to stderr\n"
	      "  --help, --version\n"
	      "\n"
	      "stages for --dump-after:\n"
	      "  parse                the parser's output\n", f);
	for (int i = 0; i < tc_npasses; i++)
		fprintf(f, "  %-20s %s\n", tc_passes[i].name, tc_passes[i].what);
}

static int
usage_error(const char *fmt, const char *arg)
{
	fputs("tilec: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nTry 'tilec --help'.\n", stderr);
	return EXIT_USAGE;
}

/* The options, as ids for parse_args's switch. */
enum {
	OPT_HELP = 1, OPT_VERSION, OPT_VERIFY, OPT_LINE_DIRECTIVES,
	OPT_STANDALONE, OPT_LIST_KERNELS, OPT_TIME, OPT_TARGET, OPT_ARCH,
	OPT_OUT, OPT_KERNEL, OPT_DUMP_AFTER, OPT_EMIT, OPT_CONFIG, OPT_DEFINE,
	OPT_JSON, OPT_FROM_IR, OPT_PASSES,
	OPT_EXPLAIN, OPT_LIST_TARGETS, OPT_WGMMA, OPT_NO_WGMMA, OPT_NO_FP8_WGMMA, OPT_TMA, OPT_NO_TMA,
	OPT_WS, OPT_NO_WS, OPT_PERSISTENT, OPT_CPU_STRIP, OPT_NO_TMA_STORE,
	OPT_HALF_PAIRS, OPT_NO_HALF_PAIRS, OPT_COPY_PLANS, OPT_NO_COPY_PLANS,
};

static const TcOptSpec options[] = {
	{ "help", 'h', false, OPT_HELP },
	{ "version", 0, false, OPT_VERSION },
	{ "verify", 0, false, OPT_VERIFY },
	{ "line-directives", 0, false, OPT_LINE_DIRECTIVES },
	{ "standalone", 0, false, OPT_STANDALONE },
	{ "wgmma", 0, false, OPT_WGMMA },
	{ "no-wgmma", 0, false, OPT_NO_WGMMA },
	{ "no-fp8-wgmma", 0, false, OPT_NO_FP8_WGMMA },
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
	{ "list-kernels", 0, false, OPT_LIST_KERNELS },
	{ "list-targets", 0, false, OPT_LIST_TARGETS },
	{ "json", 0, false, OPT_JSON },
	{ "explain", 0, false, OPT_EXPLAIN },
	{ "time", 0, false, OPT_TIME },
	{ "target", 't', true, OPT_TARGET },
	{ "arch", 0, true, OPT_ARCH },
	{ NULL, 'o', true, OPT_OUT },
	{ "kernel", 0, true, OPT_KERNEL },
	{ "dump-after", 0, true, OPT_DUMP_AFTER },
	{ "from-ir", 0, false, OPT_FROM_IR },
	{ "passes", 0, true, OPT_PASSES },
	{ "emit", 0, true, OPT_EMIT },
	{ "config", 0, true, OPT_CONFIG },
	{ NULL, 'D', true, OPT_DEFINE },
	{ 0 },
};

/* Parse argv into cli; returns EXIT_OK, or the exit status to stop with
 * (after --help / --version, or on a usage error). */
static int
parse_args(Cli *cli, int argc, char **argv, bool *stop)
{
	*stop = false;
	TcOptParser p;
	tc_opt_init(&p, argc, argv);
	int id;
	while ((id = tc_opt_next(&p, options)) != TC_OPT_END) {
		const char *v = p.value;
		char *name;
		switch (id) {
		case TC_OPT_OPERAND:
			if (cli->file)
				return usage_error("more than one input file: "
						   "'%s'", v);
			cli->file = v;
			break;
		case TC_OPT_UNKNOWN: {
			char hint[96];
			fprintf(stderr, "tilec: unknown option '%s'%s\n", p.arg,
				tc_opt_suggest(p.arg, options, hint, sizeof hint));
			fputs("Try 'tilec --help'.\n", stderr);
			return EXIT_USAGE;
		}
		case TC_OPT_MISSING:
			return usage_error("option '%s' needs a value", p.arg);
		case OPT_HELP:
			usage(stdout);
			*stop = true;
			return EXIT_OK;
		case OPT_VERSION:
			printf("tilec %s\n", TILEC_VERSION);
			*stop = true;
			return EXIT_OK;
		case OPT_LIST_TARGETS: {
			TcBuf b;
			tc_buf_init(&b);
			for (int i = 0; i < tc_ntargets; i++) {
				if (i)
					tc_buf_puts(&b, "\n");
				tc_target_describe(&b, &tc_targets[i]);
			}
			fputs(b.data, stdout);
			tc_buf_free(&b);
			*stop = true;
			return EXIT_OK;
		}
		case OPT_VERIFY: cli->verify = true; break;
		case OPT_LINE_DIRECTIVES: cli->line_directives = true; break;
		case OPT_STANDALONE: cli->standalone = true; break;
		case OPT_WGMMA: cli->wgmma = TC_WGMMA_ON; break;
		case OPT_NO_FP8_WGMMA: cli->wgmma = TC_WGMMA_EXACT; break;
		case OPT_NO_WGMMA: cli->wgmma = TC_WGMMA_OFF; break;
		case OPT_TMA: cli->tma = TC_TMA_ALL; break;
		case OPT_NO_TMA: cli->tma = TC_TMA_OFF; break;
		case OPT_NO_TMA_STORE: cli->no_tma_store = true; break;
		case OPT_HALF_PAIRS: cli->no_half_pairs = false; break;
		case OPT_NO_HALF_PAIRS: cli->no_half_pairs = true; break;
		case OPT_COPY_PLANS: cli->copy_plans = 1; break;
		case OPT_NO_COPY_PLANS: cli->copy_plans = -1; break;
		case OPT_WS: cli->ws = TC_WS_ON; break;
		case OPT_NO_WS: cli->ws = TC_WS_OFF; break;
		case OPT_PERSISTENT: cli->ws = TC_WS_PERSISTENT; break;
		case OPT_LIST_KERNELS: cli->list_kernels = true; break;
		case OPT_JSON: cli->json = true; break;
		case OPT_EXPLAIN: cli->explain = true; break;
		case OPT_TIME: cli->time = true; break;
		case OPT_TARGET: cli->target = v; break;
		case OPT_ARCH: cli->arch = v; break;
		case OPT_OUT:
			if (!*v)
				return usage_error("%s", "-o wants a file name, "
						   "not an empty one");
			cli->out = v;
			break;
		case OPT_KERNEL: cli->kernel = v; break;
		case OPT_DUMP_AFTER: cli->dump_after = v; break;
		case OPT_FROM_IR: cli->from_ir = true; break;
		case OPT_PASSES: cli->passes = v; break;
		case OPT_CONFIG: cli->config = v; break;
		case OPT_CPU_STRIP:
			if (!tc_opt_cpu_strip(v, &cli->cpu_strip))
				return usage_error(TC_OPT_CPU_STRIP_WANTS
						   ", not '%s'", v);
			break;
		case OPT_EMIT:
			if (strcmp(v, "ir") == 0)
				cli->emit = EMIT_IR;
			else if (strcmp(v, "source") == 0)
				cli->emit = EMIT_SOURCE;
			else if (strcmp(v, "launch") == 0)
				cli->emit = EMIT_LAUNCH;
			else
				return usage_error("--emit takes ir, source or "
						   "launch, not '%s'", v);
			break;
		case OPT_DEFINE:
			if (cli->ndefines == TC_MAX_DEFINES ||
			    !tc_opt_define(v, &name,
					   &cli->define_value[cli->ndefines]))
				return usage_error("-D wants NAME=INTEGER "
						   "(at most 64), not '%s'", v);
			cli->define_name[cli->ndefines++] = name;
			break;
		}
	}
	if (!cli->file)
		return usage_error("%s", "no input file");
	if (cli->json && !cli->list_kernels)
		return usage_error("%s", "--json goes with --list-kernels");
	return EXIT_OK;
}

/* --list-kernels --json: the program's kernels and tunables, as bound. */
static void
list_json(const TcProgram *p, const char *file, TcBuf *out)
{
	json_t *o = json_object(), *ks = json_array(), *ts = json_array();
	json_object_set_new(o, "file", tc_json_text(file));
	for (int i = 0; i < p->kernels.len; i++) {
		const TcKernel *k = p->kernels.items[i];
		json_t *kj = json_object();
		json_object_set_new(kj, "name", json_string(k->name));
		json_object_set_new(kj, "line", json_integer(k->loc.line));
		json_array_append_new(ks, kj);
	}
	for (int i = 0; i < p->tunables.len; i++) {
		const TcVar *v = p->tunables.items[i];
		json_t *tj = json_object(), *cj = json_array();
		json_object_set_new(tj, "name", json_string(v->name));
		json_object_set_new(tj, "value", json_integer(v->value));
		json_object_set_new(tj, "default", json_integer(v->def_value));
		for (int c = 0; c < v->nchoices; c++)
			json_array_append_new(cj, json_integer(v->choices[c]));
		json_object_set_new(tj, "choices", cj);
		json_object_set_new(tj, "bound", json_boolean(v->bound));
		json_object_set_new(tj, "line", json_integer(v->loc.line));
		json_array_append_new(ts, tj);
	}
	json_object_set_new(o, "kernels", ks);
	json_object_set_new(o, "tunables", ts);
	char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (s) {
		tc_buf_printf(out, "%s\n", s);
		free(s);
	}
	json_decref(o);
}

/* Whether everything printed to stdout so far reached it; false
 * (reported) when some was lost (a full disk, a closed pipe).  A failed
 * write of a large text leaves the error flag (and errno) but may leave
 * nothing for fflush to fail on, so both are checked. */
static bool
stdout_flushed(void)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return true;
	fprintf(stderr, "tilec: error: cannot write the output: %s\n",
		strerror(errno ? errno : EIO));
	return false;
}

/* A subcommand's status, made 1 when what it printed was lost: a report
 * nobody can read is an error, as the translator's output is. */
static int
stdout_status(int status)
{
	return stdout_flushed() || status != EXIT_OK ? status : EXIT_ERROR;
}

/* Write the output where -o says; false (reported) on failure. */
static bool
write_output(const Cli *cli, const TcBuf *out)
{
	const char *text = out->data ? out->data : "";
	if (!cli->out) {
		fputs(text, stdout);
		return stdout_flushed();
	}
	/* Whole or not at all: a failure leaves the old file as it was. */
	if (!tc_write_file(cli->out, text, out->len)) {
		fprintf(stderr, "tilec: error: cannot write '%s': %s\n",
			cli->out, strerror(errno));
		return false;
	}
	return true;
}

/* Translate cli->file as the options say. */
static int
translate(const Cli *cli)
{
	TcOptions opt;
	const char *target = cli->target ? cli->target : "openmp";
	if (!tc_options_init(&opt, target, cli->arch)) {
		TcBuf why;
		tc_buf_init(&why);
		tc_target_explain(&why, target, cli->arch);
		fprintf(stderr, "tilec: %s\nTry 'tilec --help'.\n", why.data);
		tc_buf_free(&why);
		return EXIT_USAGE;
	}
	opt.kernel = cli->kernel;
	opt.dump_after = cli->dump_after;
	opt.verify = cli->verify;
	if (cli->from_ir)
		opt.passes = cli->passes ? cli->passes : "";
	opt.line_directives = cli->line_directives;
	opt.standalone = cli->standalone;
	opt.wgmma = cli->wgmma;
	opt.tma = cli->tma;
	opt.no_tma_store = cli->no_tma_store;
	opt.no_half_pairs = cli->no_half_pairs;
	opt.copy_plans = cli->copy_plans;
	opt.ws = cli->ws;
	opt.cpu_strip = cli->cpu_strip;
	opt.explain = cli->explain;
	opt.ndefines = cli->ndefines;
	for (int i = 0; i < cli->ndefines; i++) {
		opt.define_name[i] = cli->define_name[i];
		opt.define_value[i] = cli->define_value[i];
		opt.define_loc[i] = (TcLoc){ "<command line>", 0, 0 };
	}

	TcDiags d;
	tc_diags_init(&d, cli->file, NULL, 0);
	d.to_stderr = true;
	if (!tc_dump_name_check(&opt, &d) || !tc_pass_list_check(&opt, &d)) {
		tc_diags_free(&d);
		return EXIT_USAGE;
	}
	bool want_source = cli->emit == EMIT_SOURCE && !cli->dump_after &&
			   !cli->list_kernels;
	if (want_source && !tc_backend_find(opt.target.kind)) {
		fprintf(stderr, "tilec: the %s backend is not built yet\n",
			opt.target.name);
		tc_diags_free(&d);
		return EXIT_ERROR;
	}

	size_t len = 0;
	char *text = tc_read_file(cli->file, &len);
	if (!text) {
		fprintf(stderr, "tilec: error: cannot read '%s': %s\n",
			cli->file, strerror(errno));
		tc_diags_free(&d);
		return EXIT_ERROR;
	}
	d.src_text = text;
	d.src_len = len;

	TcArena *a = tc_arena_new();
	if (cli->config && !cli->from_ir && !tc_config_apply(cli->config, text, len, NULL, a,
					    &opt, &d)) {
		tc_arena_free(a);
		tc_diags_free(&d);
		free(text);
		return EXIT_ERROR;
	}
	TcBuf out, dump;
	tc_buf_init(&out);
	tc_buf_init(&dump);
	opt.dump = cli->dump_after ? &dump : NULL;
	TcProgram *p = NULL;
	bool ok;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (cli->from_ir) {
		/* Text as --emit=ir prints it: read, verified, then only the
		 * passes asked for. */
		p = tc_read_ir(a, cli->file, text, len, &d);
		ok = p && tc_verify_target(p, &opt.target, false, &d) &&
		     (!cli->verify || tc_verify(p, "read", &d) == 0);
		if (ok && want_source)
			ok = tc_compile_parsed(a, p, &opt, &d) &&
			     tc_verify_target(p, &opt.target, true, &d) &&
			     tc_emit_scheduled(p, &opt, &d, &out);
		else if (ok)
			ok = tc_compile_parsed(a, p, &opt, &d);
	} else if (want_source) {
		ok = tc_translate(a, cli->file, text, &opt, &d, &p, &out);
	} else {
		ok = tc_compile(a, cli->file, text, &opt, &d, &p);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ok = ok && d.errors == 0;
	if (cli->time)
		fprintf(stderr, "tilec: %s: translated in %.2f ms\n", cli->file,
			(double)(t1.tv_sec - t0.tv_sec) * 1e3 +
				(double)(t1.tv_nsec - t0.tv_nsec) / 1e6);

	if (cli->dump_after) {
		/* Whatever was dumped is worth seeing, even if a later pass
		 * failed. */
		if (!write_output(cli, &dump))
			ok = false;
	} else if (ok) {
		if (cli->list_kernels && cli->json) {
			list_json(p, cli->file, &out);
		} else if (cli->list_kernels) {
			for (int i = 0; i < p->kernels.len; i++)
				tc_buf_printf(&out, "%s\n",
					      ((TcKernel *)p->kernels.items[i])
						      ->name);
		} else if (cli->emit == EMIT_IR) {
			tc_print_program(&out, p);
		} else if (cli->emit == EMIT_LAUNCH) {
			tc_launch_document(p, NULL, &opt.target, NULL, &out);
		}
		ok = write_output(cli, &out);
	}

	tc_buf_free(&out);
	tc_buf_free(&dump);
	tc_arena_free(a);
	tc_diags_free(&d);
	free(text);
	return ok ? EXIT_OK : EXIT_ERROR;
}

int
main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "run") == 0)
		return stdout_status(tc_run_main(argc - 1, argv + 1));
	if (argc >= 2 && strcmp(argv[1], "tune") == 0)
		return tc_tune_main(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "export") == 0)
		return stdout_status(tc_export_main(argc - 1, argv + 1));

	Cli cli = { .emit = EMIT_SOURCE };
	bool stop;
	int status = parse_args(&cli, argc, argv, &stop);
	if (status == EXIT_OK && !stop && cli.passes && !cli.from_ir)
		status = usage_error("%s needs --from-ir (a program read from "
				     "IR text)", "--passes");
	if (status == EXIT_OK && !stop)
		status = translate(&cli);
	for (int i = 0; i < cli.ndefines; i++)
		free((char *)cli.define_name[i]);
	return status;
}
