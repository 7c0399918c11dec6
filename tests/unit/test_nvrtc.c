/*
 * test_nvrtc.c - the runtime's cuda backend (jit_nvrtc.c, cuda_driver.c)
 * on any machine: every sample's CUDA output compiled through NVRTC for
 * sm_80 and sm_90a by a compile-only context; the cache keyed by arch;
 * compile errors carrying NVRTC's log; what a compile-only context
 * refuses; and a context on device 0, which on a machine without a GPU
 * must fail with a sentence naming the missing driver or device (and on a
 * machine with one must run a kernel).
 *
 * Its own program, not a suite of `unit`: without NVRTC it exits 77, which
 * meson reports as skipped.  Samples come from $TILEC_SOURCE_ROOT/samples
 * and are translated here with the translator library; compiles use
 * $TILEC_CACHE_DIR when set (meson points it into the build tree, so
 * reruns are cache hits), other tests a private cache under $TMPDIR.
 */
#include <check.h>

#include "tilec_int.h"
#include "tilec_runtime.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* out[0] = a + b: one thread of one block. */
static const char add_src[] =
	"extern \"C\" __global__ void add(float a, float b, float *out)\n"
	"{\n"
	"\tout[0] = a + b;\n"
	"}\n";

static char private_cache[4096];

/* A compile-only context with a fresh private cache. */
static tilec_context *
compile_only_context(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(private_cache, sizeof private_cache, "%s/tilec-nvrtc-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	ck_assert(mkdtemp(private_cache));
	tilec_init_error err;
	tilec_context *ctx = tilec_context_new(TILEC_BACKEND_CUDA,
					       TILEC_DEVICE_NONE, &err);
	ck_assert_msg(ctx, "%s", err.message);
	ck_assert_int_eq(tilec_set_cache_dir(ctx, private_cache), TILEC_OK);
	return ctx;
}

static void
remove_private_cache(void)
{
	DIR *d = opendir(private_cache);
	ck_assert(d);
	struct dirent *e;
	while ((e = readdir(d))) {
		char path[8192];
		snprintf(path, sizeof path, "%s/%s", private_cache, e->d_name);
		if (e->d_name[0] != '.')
			ck_assert_int_eq(unlink(path), 0);
	}
	closedir(d);
	ck_assert_int_eq(rmdir(private_cache), 0);
}

/* A whole file, NUL-terminated (binary safe). */
static char *
read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0, got;
	char *buf = malloc(cap + 1);
	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap)
			buf = realloc(buf, (cap *= 2) + 1);
	}
	fclose(f);
	if (buf)
		buf[n] = '\0';
	*len = n;
	return buf;
}

static bool contains(const char *hay, size_t n, const char *needle);

/* The embedded helpers as NVRTC headers, named "tilec/<path>" as the
 * generated code includes them (as tilec run passes them). */
typedef struct Headers {
	tilec_header h[16]; /* the headers */
	char names[16][256]; /* their names */
	int n;              /* entries used */
} Headers;

static void
headers_init(Headers *hs)
{
	memset(hs, 0, sizeof *hs);
	for (int i = 0; tc_embedded[i].path; i++) {
		ck_assert_int_lt(hs->n, 16);
		snprintf(hs->names[hs->n], sizeof hs->names[0], "tilec/%s",
			 tc_embedded[i].path);
		hs->h[hs->n].name = hs->names[hs->n];
		hs->h[hs->n].text = tc_embedded[i].text;
		hs->h[hs->n].len = tc_embedded[i].len;
		hs->n++;
	}
}

/* Translate sample `file` for cuda `arch` and compile it with ctx.
 * Returns false (with a note on stdout) if the translator rejects the
 * sample for this target; a failing NVRTC compile fails the test. */
static bool
compile_sample(tilec_context *ctx, const Headers *hs, const char *dir,
	       const char *file, const char *arch)
{
	char path[8192];
	snprintf(path, sizeof path, "%s/%s", dir, file);
	size_t len;
	char *text = read_all(path, &len);
	ck_assert_msg(text, "cannot read %s", path);
	TcOptions opt;
	ck_assert(tc_options_init(&opt, "cuda", arch));
	TcDiags d;
	tc_diags_init(&d, path, text, len);
	TcArena *a = tc_arena_new();
	TcProgram *prog = NULL;
	TcBuf src;
	tc_buf_init(&src);
	bool translated = tc_translate(a, path, text, &opt, &d, &prog, &src) &&
			  d.errors == 0;
	if (!translated) {
		const char *msg = d.text.data ? d.text.data : "";
		printf("note: %s is not translated for cuda %s: %.*s\n", file,
		       arch, (int)strcspn(msg, "\n"), msg);
	} else {
		char name[1024]; /* gemm.c -> gemm.cu */
		snprintf(name, sizeof name, "%s", file);
		snprintf(name + strlen(name) - 2, 4, ".cu");
		tilec_compile_options o;
		tilec_compile_options_init(&o);
		o.name = name;
		o.arch = arch;
		o.headers = hs->h;
		o.nheaders = hs->n;
		tilec_module *m = tilec_compile(ctx, src.data, src.len, &o);
		ck_assert_msg(m, "%s for %s: %s", file, arch, tilec_error(ctx));
		tilec_module_info info;
		ck_assert_int_eq(tilec_module_get_info(m, &info), TILEC_OK);
		/* The cubin: an ELF file naming every kernel. */
		size_t clen;
		char *cubin = read_all(info.path, &clen);
		ck_assert_msg(cubin, "no cubin at '%s'", info.path);
		ck_assert(clen > 4 && memcmp(cubin, "\177ELF", 4) == 0);
		for (int i = 0; i < prog->kernels.len; i++) {
			const TcKernel *k = prog->kernels.items[i];
			ck_assert_msg(contains(cubin, clen, k->name),
				      "%s: kernel %s not in the cubin", file,
				      k->name);
		}
		printf("%-24s %-7s %s %8.1f ms\n", file, arch,
		       info.from_cache ? "cached" : "NVRTC ",
		       info.total_seconds * 1e3);
		free(cubin);
		tilec_module_free(m);
	}
	tc_buf_free(&src);
	tc_arena_free(a);
	tc_diags_free(&d);
	free(text);
	return translated;
}

/* Whether the n bytes at hay contain the string needle. */
static bool
contains(const char *hay, size_t n, const char *needle)
{
	size_t m = strlen(needle);
	for (size_t i = 0; m <= n && i <= n - m; i++)
		if (memcmp(hay + i, needle, m) == 0)
			return true;
	return false;
}

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

START_TEST(every_sample_compiles_for_sm80_and_sm90a)
{
	const char *root = getenv("TILEC_SOURCE_ROOT");
	ck_assert_msg(root, "TILEC_SOURCE_ROOT is not set");
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/samples", root);
	DIR *d = opendir(dir);
	ck_assert_msg(d, "cannot open %s", dir);
	char *files[256];
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < 256) {
		size_t len = strlen(e->d_name);
		if (len > 2 && strcmp(e->d_name + len - 2, ".c") == 0)
			files[n++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(files, (size_t)n, sizeof *files, cmp_names);
	ck_assert_int_gt(n, 0);

	tilec_init_error err;
	tilec_context *ctx = tilec_context_new(TILEC_BACKEND_CUDA,
					       TILEC_DEVICE_NONE, &err);
	ck_assert_msg(ctx, "%s", err.message);
	const char *cache = getenv("TILEC_CACHE_DIR");
	bool private = !cache || !*cache;
	if (private) {
		tilec_context_free(ctx);
		ctx = compile_only_context();
	}
	Headers hs;
	headers_init(&hs);
	static const char *const archs[] = { "sm_80", "sm_90a" };
	for (int i = 0; i < n; i++) {
		bool core = strcmp(files[i], "gemm.c") == 0 ||
			    strcmp(files[i], "flash_attention.c") == 0 ||
			    strcmp(files[i], "softmax.c") == 0;
		for (int j = 0; j < 2; j++) {
			bool ok = compile_sample(ctx, &hs, dir, files[i],
						 archs[j]);
			ck_assert_msg(ok || !core,
				      "%s must translate for cuda %s", files[i],
				      archs[j]);
		}
		free(files[i]);
	}
	tilec_context_free(ctx);
	if (private)
		remove_private_cache();
}
END_TEST

START_TEST(the_cache_is_keyed_by_arch)
{
	tilec_context *ctx = compile_only_context();
	tilec_compile_options o;
	tilec_compile_options_init(&o);
	o.name = "add.cu";
	o.arch = "sm_80";
	tilec_module_info a, b, c;
	tilec_module *m = tilec_compile(ctx, add_src, strlen(add_src), &o);
	ck_assert_msg(m, "%s", tilec_error(ctx));
	tilec_module_get_info(m, &a);
	tilec_module_free(m);
	ck_assert(!a.from_cache);
	ck_assert(a.compile_seconds > 0);
	ck_assert(strstr(a.path, ".cubin"));
	m = tilec_compile(ctx, add_src, strlen(add_src), &o);
	ck_assert_msg(m, "%s", tilec_error(ctx));
	tilec_module_get_info(m, &b);
	tilec_module_free(m);
	ck_assert(b.from_cache);
	ck_assert_str_eq(a.key, b.key);
	ck_assert(b.compile_seconds == 0);
	o.arch = "sm_90a";
	m = tilec_compile(ctx, add_src, strlen(add_src), &o);
	ck_assert_msg(m, "%s", tilec_error(ctx));
	tilec_module_get_info(m, &c);
	tilec_module_free(m);
	ck_assert(!c.from_cache);
	ck_assert_str_ne(a.key, c.key);
	tilec_context_free(ctx);
	remove_private_cache();
}
END_TEST

START_TEST(compile_errors_carry_the_log)
{
	tilec_context *ctx = compile_only_context();
	static const char bad[] =
		"extern \"C\" __global__ void k(float *x)\n"
		"{\n"
		"\tx[0] = undeclared_name;\n"
		"}\n";
	tilec_compile_options o;
	tilec_compile_options_init(&o);
	o.name = "bad.cu";
	o.arch = "sm_90a";
	ck_assert(!tilec_compile(ctx, bad, strlen(bad), &o));
	const char *msg = tilec_error(ctx);
	ck_assert_msg(strstr(msg, "NVRTC") && strstr(msg, "bad.cu") &&
			      strstr(msg, "sm_90a") &&
			      strstr(msg, "undeclared_name"),
		      "%s", msg);
	/* Nothing of a failed compile is cached. */
	DIR *d = opendir(private_cache);
	struct dirent *e;
	int files = 0;
	while ((e = readdir(d)))
		files += e->d_name[0] != '.';
	closedir(d);
	ck_assert_int_eq(files, 0);
	/* Flags reach NVRTC: an unknown one is its error. */
	o.flags = "--no-such-nvrtc-flag";
	ck_assert(!tilec_compile(ctx, add_src, strlen(add_src), &o));
	ck_assert_msg(strstr(tilec_error(ctx), "no-such-nvrtc-flag"), "%s",
		      tilec_error(ctx));
	tilec_context_free(ctx);
	remove_private_cache();
}
END_TEST

START_TEST(compile_only_contexts_compile_and_nothing_else)
{
	tilec_context *ctx = compile_only_context();
	tilec_device_info info;
	ck_assert_int_eq(tilec_device_get_info(ctx, &info), TILEC_OK);
	ck_assert_int_eq(info.compile_only, 1);
	ck_assert_str_eq(info.arch, "");

	tilec_compile_options o;
	tilec_compile_options_init(&o);
	/* No arch: there is no device to take it from. */
	ck_assert(!tilec_compile(ctx, add_src, strlen(add_src), &o));
	ck_assert_msg(strstr(tilec_error(ctx), "tilec_compile_options.arch"),
		      "%s", tilec_error(ctx));
	o.arch = "compute_90";
	ck_assert(!tilec_compile(ctx, add_src, strlen(add_src), &o));
	ck_assert_msg(strstr(tilec_error(ctx), "not a CUDA architecture"), "%s",
		      tilec_error(ctx));
	o.arch = "sm_90a";
	tilec_module *m = tilec_compile(ctx, add_src, strlen(add_src), &o);
	ck_assert_msg(m, "%s", tilec_error(ctx));
	ck_assert(!tilec_module_kernel(m, "add"));
	ck_assert_msg(strstr(tilec_error(ctx), "compile-only"), "%s",
		      tilec_error(ctx));
	tilec_module_free(m);

	void *p = NULL;
	ck_assert_int_eq(tilec_alloc(ctx, 16, &p), TILEC_ERR_UNAVAILABLE);
	ck_assert_msg(strstr(tilec_error(ctx), "compile-only"), "%s",
		      tilec_error(ctx));
	ck_assert_int_eq(tilec_free(ctx, NULL), TILEC_OK);
	ck_assert_int_eq(tilec_synchronize(ctx), TILEC_OK);
	ck_assert_int_eq(tilec_set_compiler(ctx, "nvcc"), TILEC_ERR_INVALID);
	ck_assert(strstr(tilec_error(ctx), "TILEC_NVRTC"));
	tilec_context_free(ctx);
	remove_private_cache();

	tilec_init_error err;
	ck_assert(!tilec_context_new(TILEC_BACKEND_CUDA, -2, &err));
	ck_assert_int_eq(err.status, TILEC_ERR_INVALID);
	ck_assert(strstr(err.message, "TILEC_DEVICE_NONE"));
}
END_TEST

/* Device 0: a clear refusal without a GPU, a real run with one. */
START_TEST(device_zero_fails_clearly_or_runs)
{
	tilec_init_error err;
	tilec_context *ctx = tilec_context_new(TILEC_BACKEND_CUDA, 0, &err);
	if (!ctx) {
		ck_assert_int_eq(err.status, TILEC_ERR_UNAVAILABLE);
		ck_assert_msg(strstr(err.message, "libcuda.so.1") ||
				      strstr(err.message, "cuInit") ||
				      strstr(err.message, "no CUDA device"),
			      "%s", err.message);
		printf("device 0: %s\n", err.message);
		return;
	}
	tilec_device_info info;
	ck_assert_int_eq(tilec_device_get_info(ctx, &info), TILEC_OK);
	ck_assert(!info.compile_only);
	ck_assert(strncmp(info.arch, "sm_", 3) == 0);
	ck_assert(info.name[0]);
	printf("device 0: %s (%s)\n", info.name, info.arch);
	tilec_compile_options o;
	tilec_compile_options_init(&o);
	o.no_cache = 1;
	tilec_module *m = tilec_compile(ctx, add_src, strlen(add_src), &o);
	ck_assert_msg(m, "%s", tilec_error(ctx));
	tilec_kernel *k = tilec_module_kernel(m, "add");
	ck_assert_msg(k, "%s", tilec_error(ctx));
	ck_assert(!tilec_module_kernel(m, "sub"));
	ck_assert(strstr(tilec_error(ctx), "no kernel 'sub'"));
	void *out = NULL;
	ck_assert_int_eq(tilec_alloc(ctx, sizeof(float), &out), TILEC_OK);
	float a = 1.5f, b = 2.25f, got = 0;
	void *args[] = { &a, &b, &out };
	tilec_launch_config cfg = { { 1, 1, 1 }, { 1, 1, 1 }, 0, NULL };
	ck_assert_int_eq(tilec_launch(k, args, NULL), TILEC_ERR_INVALID);
	ck_assert_int_eq(tilec_launch(k, args, &cfg), TILEC_OK);
	ck_assert_int_eq(tilec_synchronize(ctx), TILEC_OK);
	ck_assert_int_eq(tilec_memcpy_d2h(ctx, &got, out, sizeof got),
			 TILEC_OK);
	ck_assert(got == 3.75f);
	tilec_bench_result res;
	void **sets[] = { args };
	ck_assert_int_eq(tilec_bench(k, sets, 1, &cfg, 1, 3, &res), TILEC_OK);
	ck_assert(res.median_s > 0);
	ck_assert_int_eq(tilec_free(ctx, out), TILEC_OK);
	tilec_module_free(m);
	tilec_context_free(ctx);
}
END_TEST

static Suite *
nvrtc_suite(void)
{
	Suite *s = suite_create("nvrtc");
	TCase *t = tcase_create("nvrtc");
	/* Cold NVRTC compiles take seconds each. */
	tcase_set_timeout(t, 900);
	tcase_add_test(t, the_cache_is_keyed_by_arch);
	tcase_add_test(t, compile_errors_carry_the_log);
	tcase_add_test(t, compile_only_contexts_compile_and_nothing_else);
	tcase_add_test(t, device_zero_fails_clearly_or_runs);
	tcase_add_test(t, every_sample_compiles_for_sm80_and_sm90a);
	suite_add_tcase(s, t);
	return s;
}

int
main(void)
{
	tilec_init_error err;
	tilec_context *probe = tilec_context_new(TILEC_BACKEND_CUDA,
						 TILEC_DEVICE_NONE, &err);
	if (!probe) {
		printf("skipped: %s\n", err.message);
		return 77;
	}
	tilec_context_free(probe);
	SRunner *sr = srunner_create(nvrtc_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
