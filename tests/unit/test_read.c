/*
 * test_read.c - the IR reader (src/ir/read.c).
 *
 * Round trips: every sample, the fusion, gpu_regress and tests/kernels
 * programs and the generator's fast_gemm ones (a file meson makes with
 * tests/gen/tilegen.py, the file TILEC_READ_GEN names), for every target and arch, and
 * on sm_90a with --warp-specialize (STAGES as written, and 3), compiled
 * once with an observer
 * that prints the IR after each stage (parse and every pass), reads the
 * text back, checks the verifier accepts it (from `check` on) and that it
 * prints as the same text; after the last pass the program read back must
 * emit the same target source as the program itself.  Then the reader's
 * errors: located at the offending token of the IR text, never a crash.
 */
#include "unit.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One compilation's round trips. */
typedef struct Trip {
	const char *what;   /* "samples/gemm.c for cuda sm_80" */
	TcBuf *report;      /* the failures found */
	bool checked;       /* check has run: what is read must verify */
	TcArena *last_a;    /* the last stage read back, in its arena */
	TcProgram *last;
} Trip;

/* The first line where two texts differ, for the report. */
static void
first_difference(TcBuf *out, const char *x, const char *y)
{
	int line = 1;
	const char *lx = x, *ly = y;
	while (*x && *x == *y) {
		if (*x == '\n') {
			line++;
			lx = x + 1;
			ly = y + 1;
		}
		x++;
		y++;
	}
	tc_buf_printf(out, "  line %d:\n    %.*s\n    %.*s\n", line,
		      (int)strcspn(lx, "\n"), lx, (int)strcspn(ly, "\n"), ly);
}

static void
observe(void *ctx, const char *stage, const TcProgram *p)
{
	Trip *t = ctx;
	t->checked = t->checked || strcmp(stage, "check") == 0;
	TcBuf one, two;
	tc_buf_init(&one);
	tc_buf_init(&two);
	tc_print_program(&one, p);
	TcArena *a = tc_arena_new();
	TcDiags d;
	tc_diags_init(&d, "stage.ir", one.data, one.len);
	TcProgram *q = tc_read_ir(a, "stage.ir", one.data, one.len, &d);
	if (!q) {
		tc_buf_printf(t->report, "%s, after %s: not read back:\n%s",
			      t->what, stage, d.text.data);
	} else if (t->checked && tc_verify(q, "read", &d) > 0) {
		tc_buf_printf(t->report, "%s, after %s: what is read does not "
			      "verify:\n%s", t->what, stage, d.text.data);
	} else {
		tc_print_program(&two, q);
		if (strcmp(one.data, two.data) != 0) {
			tc_buf_printf(t->report, "%s, after %s: printed "
				      "otherwise once read:\n", t->what, stage);
			first_difference(t->report, one.data, two.data);
		}
	}
	if (t->last_a)
		tc_arena_free(t->last_a);
	t->last_a = a;
	t->last = q;
	tc_diags_free(&d);
	tc_buf_free(&one);
	tc_buf_free(&two);
}

/* The target source of every kernel of p. */
static bool
emit(const TcProgram *p, const TcOptions *opt, TcBuf *src, TcDiags *d)
{
	const TcBackend *be = tc_backend_find(opt->target.kind);
	for (int i = 0; i < p->kernels.len; i++)
		if (!be->emit(p, p->kernels.items[i], &opt->target, opt, src, d))
			return false;
	return true;
}

/* Compile path for target/arch (warp-specialized when ws; -D STAGES=
 * stages when not 0) with the round trips; a program the target rejects
 * (a located error) has nothing to round-trip after it. */
static void
round_trip(const char *path, const char *target, const char *arch,
	   bool ws, int stages, TcBuf *report, int *count)
{
	TcOptions opt;
	ck_assert(tc_options_init(&opt, target, arch));
	opt.verify = true;
	if (ws)
		opt.ws = TC_WS_ON;
	if (stages) {
		opt.define_name[0] = "STAGES";
		opt.define_value[0] = stages;
		opt.define_loc[0] = (TcLoc){ "<command line>", 0, 0 };
		opt.ndefines = 1;
	}
	char what[512], define[32] = "";
	if (stages)
		snprintf(define, sizeof define, " -D STAGES=%d", stages);
	snprintf(what, sizeof what, "%s for %s %s%s%s", path, target, arch,
		 ws ? " --warp-specialize" : "", define);
	Trip t = { .what = what, .report = report };
	opt.observe = observe;
	opt.observe_ctx = &t;
	size_t len;
	char *text = tc_read_file(path, &len);
	ck_assert_msg(text, "cannot read %s", path);
	TcDiags d;
	tc_diags_init(&d, path, text, len);
	TcArena *a = tc_arena_new();
	TcProgram *p = NULL;
	if (tc_compile(a, path, text, &opt, &d, &p) && t.last) {
		/* The program read back emits what the program does. */
		TcBuf want, got;
		tc_buf_init(&want);
		tc_buf_init(&got);
		t.last->text = p->text;
		t.last->path = p->path;
		TcDiags d2;
		tc_diags_init(&d2, path, NULL, 0);
		if (emit(p, &opt, &want, &d) && !emit(t.last, &opt, &got, &d2))
			tc_buf_printf(report, "%s: the program read back does "
				      "not emit:\n%s", what, d2.text.data);
		else if (want.data && strcmp(want.data, got.data ? got.data : ""))
		{
			tc_buf_printf(report, "%s: the program read back emits "
				      "otherwise:\n", what);
			first_difference(report, want.data, got.data ? got.data : "");
		}
		tc_diags_free(&d2);
		tc_buf_free(&want);
		tc_buf_free(&got);
		(*count)++;
	}
	if (t.last_a)
		tc_arena_free(t.last_a);
	tc_arena_free(a);
	tc_diags_free(&d);
	free(text);
}

/* Every .c file of dir (relative to the source root), sorted. */
static int
programs(const char *dir, char ***out)
{
	DIR *dp = opendir(dir);
	ck_assert_msg(dp, "cannot open %s", dir);
	char **names = NULL;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(dp))) {
		size_t len = strlen(e->d_name);
		if (len < 3 || strcmp(e->d_name + len - 2, ".c") != 0)
			continue;
		names = realloc(names, (size_t)(n + 1) * sizeof *names);
		names[n] = malloc(strlen(dir) + len + 2);
		sprintf(names[n], "%s/%s", dir, e->d_name);
		n++;
	}
	closedir(dp);
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			if (strcmp(names[j], names[i]) < 0) {
				char *x = names[i];
				names[i] = names[j];
				names[j] = x;
			}
	*out = names;
	return n;
}

static void
chdir_root(void)
{
	const char *root = getenv("TILEC_SOURCE_ROOT");
	ck_assert_msg(root, "TILEC_SOURCE_ROOT is not set");
	ck_assert_int_eq(chdir(root), 0);
}

static const struct {
	const char *target, *arch;
} targets[] = {
	{ "openmp", "avx512" }, { "openmp", "avx2" }, { "openmp", "generic" },
	{ "cuda", "sm_80" }, { "cuda", "sm_90a" }, { "hip", "gfx90a" },
};

/* Round-trip every program of the directories for target/arch. */
static void
round_trips(const char *target, const char *arch, bool ws, int stages,
	    TcBuf *report, int *count)
{
	static const char *const dirs[] = { "samples", "tests/fusion",
					    "tests/gpu_regress",
					    "tests/kernels" };
	for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
		char **files;
		int n = programs(dirs[i], &files);
		for (int f = 0; f < n; f++) {
			round_trip(files[f], target, arch, ws, stages, report,
				   count);
			free(files[f]);
		}
		free(files);
	}
	const char *gen = getenv("TILEC_READ_GEN");
	if (gen && *gen)
		round_trip(gen, target, arch, ws, stages, report, count);
}

START_TEST(test_round_trip)
{
	chdir_root();
	TcBuf report;
	tc_buf_init(&report);
	int count = 0;
	round_trips(targets[_i].target, targets[_i].arch, false, 0, &report,
		    &count);
	if (report.len)
		fputs(report.data, stderr);
	ck_assert_msg(report.len == 0, "round trips failed (above)");
	ck_assert_int_gt(count, 20);
	tc_buf_free(&report);
}
END_TEST

/* With --warp-specialize: gemm.c takes it at STAGES=3 (a roles
 * statement, stage barriers of TMA's arrivals, barriers of the
 * consumers' threads), others as written. */
START_TEST(test_round_trip_ws)
{
	chdir_root();
	TcBuf report;
	tc_buf_init(&report);
	int count = 0;
	round_trips("cuda", "sm_90a", true, _i ? 3 : 0, &report, &count);
	if (report.len)
		fputs(report.data, stderr);
	ck_assert_msg(report.len == 0, "round trips failed (above)");
	/* -D STAGES=3: only the programs with that tunable. */
	ck_assert_int_gt(count, _i ? 5 : 20);
	tc_buf_free(&report);
}
END_TEST

/* What reading text gives: NULL and the first diagnostic's first line. */
static const char *
read_error(TcArena *a, const char *text)
{
	TcDiags d;
	tc_diags_init(&d, "bad.ir", text, strlen(text));
	TcProgram *p = tc_read_ir(a, "bad.ir", text, strlen(text), &d);
	const char *msg = p ? "read" :
			  tc_strndup(a, d.text.data, strcspn(d.text.data, "\n"));
	tc_diags_free(&d);
	return msg;
}

START_TEST(test_errors)
{
	TcArena *a = tc_arena_new();
	static const char head[] = "kernel k(N: i32, X: f32[N])  // k.c:1\n{\n";
	ck_assert_str_eq(read_error(a, ""), "bad.ir:1:1: error: no kernel in "
			 "this IR");
	ck_assert_str_eq(read_error(a, "kernel k(\n"),
			 "bad.ir:1:10: error: expected a name, found the end of "
			 "the line");
	ck_assert_str_eq(read_error(a, tc_fmt(a, "%s\tf32 x = y  // 3:2\n}\n",
					      head)),
			 "bad.ir:3:10: error: 'y' is not declared here");
	ck_assert_str_eq(read_error(a, tc_fmt(a, "%s\tfrob X  // 3:2\n}\n",
					      head)),
			 "bad.ir:3:2: error: unknown statement 'frob'");
	ck_assert_str_eq(read_error(a, tc_fmt(a, "%s\tcopy X <- X\n}\n", head)),
			 "bad.ir:3:7: error: a tensor operand needs its origin");
	ck_assert_str_eq(read_error(a, tc_fmt(a, "%s\tX[0] = 1.0f  // x\n}\n",
					      head)),
			 "bad.ir:3:15: error: expected a position 'LINE:COL' in "
			 "this comment");
	ck_assert_str_eq(read_error(a, tc_fmt(a, "%s\tparallel i in 0 .. N {\n",
					      head)),
			 "bad.ir:4:1: error: a block without its '}'");
	ck_assert_str_eq(read_error(a, tc_fmt(a, "%s\tX[0] = 1.0f @\n}\n", head)),
			 "bad.ir:3:14: error: unexpected character '@'");
	ck_assert_str_eq(read_error(a, tc_fmt(a, "%s\tX[0] = 99999999999999999999"
					      "\n}\n", head)),
			 "bad.ir:3:9: error: number out of range");
	ck_assert_str_eq(read_error(a, tc_fmt(a, "%s\troles producer threads 128 "
					      ".. 256 (one thread, 40 registers) {"
					      "  // 3:2\n\t} consumer threads 0 .. "
					      "64 (232 registers, 1 block per SM) "
					      "{\n\t}\n}\n", head)),
			 "bad.ir:4:26: error: the consumer threads end where "
			 "the producer's start");
	/* A good one, for contrast. */
	ck_assert_str_eq(read_error(a, tc_fmt(a, "%s\tX[0] = 1.0f  // 3:2\n}\n",
					      head)), "read");
	tc_arena_free(a);
}
END_TEST

Suite *
unit_suite_read(void)
{
	Suite *s = suite_create("read");
	TCase *tc = tcase_create("read");
	tcase_set_timeout(tc, 600);
	tcase_add_loop_test(tc, test_round_trip, 0,
			    (int)(sizeof targets / sizeof *targets));
	tcase_add_loop_test(tc, test_round_trip_ws, 0, 2);
	tcase_add_test(tc, test_errors);
	suite_add_tcase(s, tc);
	return s;
}
