/*
 * test_harness.c - cmd/harness.c, the steps `tilec run` and `tilec tune`
 * share, and the program copy (ir/clone.c) and tolerance table
 * (ir/tolerance.c) under them.
 *
 * Each failure comes back as its kind with the numbers in structs: a
 * float output outside a tight tolerance is a mismatch with its relative
 * error, generated code the compiler rejects is a compile failure with
 * the compiler's log, an index out of bounds in the reference is a
 * reference failure, a missing scalar value a setup failure.  A copy of
 * a parsed program specializes independently of the original.  The
 * kernels run on the CPU (openmp), through the JIT cache in the build
 * tree.
 */
#include "unit.h"
#include "cmd/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *
source_path(const char *rel)
{
	const char *root = getenv("TILEC_SOURCE_ROOT");
	static char buf[4][4096];
	static int n;
	char *b = buf[n++ % 4];
	snprintf(b, sizeof buf[0], "%s/%s", root ? root : ".", rel);
	return b;
}

/* A harness for kernel `kernel` of `rel` on the CPU, loaded. */
static void
load(TcHarness *h, const char *rel, const char *source)
{
	TcHarnessSpec spec = {
		.file = source_path(rel),
		.target = "openmp",
		.source = source,
		.quiet = true,
	};
	ck_assert_msg(tc_harness_load(h, &spec), "%s",
		      h->message ? h->message : h->log ? h->log : "load");
}

static TcHarnessShape
shape(const char *a, const char *b, const char *c, double tol)
{
	TcHarnessShape s = { .tol = tol };
	const char *pairs[] = { a, b, c };
	for (int i = 0; i < 3 && pairs[i]; i++) {
		const char *eq = strchr(pairs[i], '=');
		s.shape_name[s.nshapes] = strndup(pairs[i],
						  (size_t)(eq - pairs[i]));
		s.shape_value[s.nshapes++] = eq + 1;
	}
	return s;
}

static void
shape_free(TcHarnessShape *s)
{
	for (int i = 0; i < s->nshapes; i++)
		free((char *)s->shape_name[i]);
}

/* An f16 gemm is within the table's 1e-2 of the reference but not within
 * 1e-9: the same harness, bound again, says so as a mismatch. */
START_TEST(test_tolerance_mismatch)
{
	TcHarness h;
	load(&h, "samples/gemm.c", NULL);
	ck_assert(tc_harness_compile(&h));
	TcHarnessShape s = shape("M=100", "N=130", "K=70", -1);
	ck_assert(tc_harness_bind(&h, &s));
	ck_assert(h.tol == tc_tolerance(TC_DT_F16, TC_TOL_INTERP));
	ck_assert_msg(tc_harness_check(&h, 1, true), "%s", h.message);
	ck_assert_int_eq(h.nout, 1);
	ck_assert(h.out[0].ok);
	double err = h.out[0].rel_err;
	ck_assert(err > 0 && err <= 1e-2);

	s.tol = err / 2;
	ck_assert(tc_harness_bind(&h, &s));
	ck_assert(!tc_harness_check(&h, 1, true));
	ck_assert_int_eq(h.fail, TC_HARNESS_MISMATCH);
	ck_assert_int_eq(h.nout, 1);
	ck_assert(!h.out[0].ok);
	ck_assert(h.out[0].rel_err == err); /* the same inputs: same error */
	ck_assert_str_eq(h.out[0].param->var->name, "C");
	ck_assert_uint_eq(h.out[0].unwritten, 0);
	shape_free(&s);
	tc_harness_free(&h);
}
END_TEST

/* Generated code the compiler rejects: a compile failure with its log. */
START_TEST(test_compile_failure)
{
	char path[] = "/tmp/tilec-harness-XXXXXX.c";
	int fd = mkstemps(path, 2);
	ck_assert(fd >= 0);
	const char bad[] = "void tilec_entry_gemm(void **args) { syntax error }\n";
	ck_assert(write(fd, bad, sizeof bad - 1) == (ssize_t)(sizeof bad - 1));
	close(fd);
	TcHarness h;
	load(&h, "samples/gemm.c", path);
	ck_assert(!tc_harness_compile(&h));
	ck_assert_int_eq(h.fail, TC_HARNESS_COMPILE);
	ck_assert_str_eq(tc_harness_fail_name(h.fail), "compile");
	ck_assert(h.message && h.log);
	tc_harness_free(&h);
	unlink(path);
}
END_TEST

/* Indices from random inputs out of range: the reference stops, as a
 * reference failure; without the value of every integer scalar, the bind
 * stops as a setup failure. */
START_TEST(test_reference_and_setup_failures)
{
	TcHarness h;
	load(&h, "tests/run/embedding.c", NULL);
	TcHarnessShape s = shape("N=37", "V=50", "D=100", -1);
	ck_assert(tc_harness_compile(&h));
	ck_assert(tc_harness_bind(&h, &s));
	ck_assert(!tc_harness_check(&h, 1, true));
	ck_assert_int_eq(h.fail, TC_HARNESS_REFERENCE);
	ck_assert(strstr(h.message, "--range"));
	shape_free(&s);

	TcHarnessShape missing = shape("N=37", "V=50", NULL, -1);
	ck_assert(!tc_harness_bind(&h, &missing));
	ck_assert_int_eq(h.fail, TC_HARNESS_SETUP);
	ck_assert(strstr(h.message, "no value for D"));
	shape_free(&missing);
	tc_harness_free(&h);
}
END_TEST

/* A copy of a parse specializes on its own: the original keeps its
 * unbound tunables, and a copy bound like a fresh parse prints the same
 * IR. */
START_TEST(test_clone_independent)
{
	size_t len;
	const char *path = source_path("samples/gemm.c");
	char *text = tc_read_file(path, &len);
	ck_assert(text);
	TcOptions opt;
	ck_assert(tc_options_init(&opt, "openmp", NULL));
	opt.ndefines = 1;
	opt.define_name[0] = "BLOCK_M";
	opt.define_value[0] = 32;
	TcDiags d;
	tc_diags_init(&d, path, text, len);
	TcArena *a = tc_arena_new();
	TcProgram *parsed = tc_parse(a, path, text, &opt, &d);
	ck_assert(parsed);
	TcProgram *copy = tc_program_clone(a, parsed);
	ck_assert(tc_specialize(a, copy, &opt, &d) && tc_check(a, copy, &opt, &d));
	TcProgram *fresh = tc_parse(a, path, text, &opt, &d);
	ck_assert(tc_specialize(a, fresh, &opt, &d) &&
		  tc_check(a, fresh, &opt, &d));
	TcBuf x, y;
	tc_buf_init(&x);
	tc_buf_init(&y);
	tc_print_program(&x, copy);
	tc_print_program(&y, fresh);
	ck_assert_str_eq(x.data, y.data);
	ck_assert(strstr(x.data, "32"));
	const TcVar *orig = parsed->tunables.items[0];
	ck_assert(!orig->bound);
	ck_assert(parsed->kernels.items[0] != copy->kernels.items[0]);
	tc_buf_free(&x);
	tc_buf_free(&y);
	tc_diags_free(&d);
	tc_arena_free(a);
	free(text);
}
END_TEST

/* The table: integers exact, the library class never tighter. */
START_TEST(test_tolerance_table)
{
	ck_assert(tc_tolerance(TC_DT_I32, TC_TOL_INTERP) == 0);
	ck_assert(tc_tolerance(TC_DT_F32, TC_TOL_INTERP) == 1e-5);
	const TcDtype floats[] = { TC_DT_F64, TC_DT_F32, TC_DT_F16, TC_DT_BF16,
				   TC_DT_FP8E4M3, TC_DT_FP8E5M2 };
	for (size_t i = 0; i < sizeof floats / sizeof floats[0]; i++)
		ck_assert(tc_tolerance(floats[i], TC_TOL_LIBRARY) >=
			  tc_tolerance(floats[i], TC_TOL_INTERP) &&
			  tc_tolerance(floats[i], TC_TOL_INTERP) > 0);
}
END_TEST

Suite *
unit_suite_harness(void)
{
	Suite *s = suite_create("harness");
	TCase *tc = tcase_create("harness");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_tolerance_mismatch);
	tcase_add_test(tc, test_compile_failure);
	tcase_add_test(tc, test_reference_and_setup_failures);
	tcase_add_test(tc, test_clone_independent);
	tcase_add_test(tc, test_tolerance_table);
	suite_add_tcase(s, tc);
	return s;
}
