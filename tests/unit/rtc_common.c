/*
 * rtc_common.c - the harness of the runtime-compiler tests (see
 * rtc_common.h): private caches, header tables, translating and compiling
 * a sample, and the tests every runtime-compiler target must pass, each
 * reading what it checks from the target rtc_main runs.
 */
#include "rtc_common.h"
#include "runtime_int.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char rtc_add_src[] =
	"extern \"C\" __global__ void add(float a, float b, float *out)\n"
	"{\n"
	"\tout[0] = a + b;\n"
	"}\n";

/* The target under test, set once by rtc_main before any test runs. */
static const RtcTarget *target;

/* The last private cache rtc_compile_only_context made. */
static char private_cache[4096];

tilec_context *
rtc_compile_only_context(const RtcTarget *t)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(private_cache, sizeof private_cache, "%s/tilec-%s-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp", t->name);
	ck_assert(mkdtemp(private_cache));
	tilec_init_error err;
	tilec_context *ctx = tilec_context_new(t->backend, TILEC_DEVICE_NONE,
					       &err);
	ck_assert_msg(ctx, "%s", err.message);
	ck_assert_int_eq(tilec_set_cache_dir(ctx, private_cache), TILEC_OK);
	return ctx;
}

void
rtc_remove_private_cache(void)
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

/* A whole file, NUL-terminated (binary safe), or NULL. */
static char *
read_all(const char *path, size_t *len)
{
	char *data;
	return tilec_rt_read_file(path, &data, len) == TILEC_OK ? data : NULL;
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

/* Whether the NULL-terminated list holds s. */
static bool
listed(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (strcmp(*list, s) == 0)
			return true;
	return false;
}

static void
headers_init(RtcHeaders *hs)
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

/* --- Sessions: translating and compiling samples ------------------------- */

void
rtc_session_open(RtcSession *s, const RtcTarget *t)
{
	memset(s, 0, sizeof *s);
	s->t = t;
	s->root = getenv("TILEC_SOURCE_ROOT");
	ck_assert_msg(s->root, "TILEC_SOURCE_ROOT is not set");
	const char *cache = getenv("TILEC_CACHE_DIR");
	s->private_cache = !cache || !*cache;
	if (s->private_cache) {
		s->ctx = rtc_compile_only_context(t);
	} else {
		tilec_init_error err;
		s->ctx = tilec_context_new(t->backend, TILEC_DEVICE_NONE, &err);
		ck_assert_msg(s->ctx, "%s", err.message);
	}
	headers_init(&s->hs);
}

void
rtc_session_close(RtcSession *s)
{
	tilec_context_free(s->ctx);
	if (s->private_cache)
		rtc_remove_private_cache();
}

RtcResult
rtc_compile(RtcSession *s, const char *dir, const RtcCase *c,
	    const char *arch, bool must_translate, tilec_module_info *info)
{
	const RtcTarget *t = s->t;
	char path[8192];
	snprintf(path, sizeof path, "%s/%s", dir, c->file);
	size_t len;
	char *text = read_all(path, &len);
	ck_assert_msg(text, "cannot read %s", path);
	TcOptions opt;
	ck_assert(tc_options_init(&opt, t->lang, arch));
	if (c->define) {
		opt.ndefines = 1;
		opt.define_name[0] = c->define;
		opt.define_value[0] = c->value;
		opt.define_loc[0] = (TcLoc){ "<command line>", 0, 0 };
	}
	opt.verify = true;
	TcDiags d;
	tc_diags_init(&d, path, text, len);
	TcArena *a = tc_arena_new();
	TcProgram *prog = NULL;
	TcBuf src;
	tc_buf_init(&src);
	bool translated = tc_translate(a, path, text, &opt, &d, &prog, &src) &&
			  d.errors == 0;
	const char *msg = d.text.data ? d.text.data : "";
	ck_assert_msg(translated || !must_translate,
		      "%s does not translate for %s %s: %s", c->file, t->lang,
		      arch, msg);
	RtcResult r = RTC_UNTRANSLATED;
	if (!translated) {
		printf("note: %s is not translated for %s %s: %.*s\n", c->file,
		       t->lang, arch, (int)strcspn(msg, "\n"), msg);
	} else {
		char name[1024]; /* gemm.c -> gemm.cu */
		snprintf(name, sizeof name, "%.*s%s", (int)strlen(c->file) - 2,
			 c->file, t->source_ext);
		tilec_compile_options o;
		tilec_compile_options_init(&o);
		o.name = name;
		o.arch = arch;
		o.headers = s->hs.h;
		o.nheaders = s->hs.n;
		tilec_module *m = tilec_compile(s->ctx, src.data, src.len, &o);
		bool unknown = !m &&
			       strstr(tilec_error(s->ctx), "does not know");
		ck_assert_msg(m || unknown, "%s for %s: %s", c->file, arch,
			      tilec_error(s->ctx));
		r = m ? RTC_COMPILED : RTC_UNKNOWN_ARCH;
		if (m) {
			ck_assert_int_eq(tilec_module_get_info(m, info),
					 TILEC_OK);
			/* The module's file: an ELF file naming every
			 * kernel. */
			size_t clen;
			char *bin = read_all(info->path, &clen);
			ck_assert_msg(bin, "no %s at '%s'", t->binary,
				      info->path);
			ck_assert(clen > 4 && memcmp(bin, "\177ELF", 4) == 0);
			for (int i = 0; i < prog->kernels.len; i++) {
				const TcKernel *k = prog->kernels.items[i];
				ck_assert_msg(contains(bin, clen, k->name),
					      "%s: kernel %s not in the %s",
					      c->file, k->name, t->binary);
			}
			free(bin);
			tilec_module_free(m);
		}
	}
	tc_buf_free(&src);
	tc_arena_free(a);
	tc_diags_free(&d);
	free(text);
	return r;
}

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Compile c for each arch of s->t not dropped, dropping those after the
 * first known_archs that the compiler does not know. */
static void
compile_for_each_arch(RtcSession *s, const char *dir, const RtcCase *c,
		      bool must_translate, RtcCheck *check, void *arg)
{
	const RtcTarget *t = s->t;
	for (int j = 0; j < RTC_MAX_ARCHS && t->archs[j]; j++) {
		if (s->dropped[j])
			continue;
		tilec_module_info info;
		RtcResult r = rtc_compile(s, dir, c, t->archs[j],
					  must_translate, &info);
		if (r == RTC_UNTRANSLATED)
			continue;
		if (r == RTC_UNKNOWN_ARCH) {
			ck_assert_msg(j >= t->known_archs, "%s for %s: %s",
				      c->file, t->archs[j],
				      tilec_error(s->ctx));
			printf("note: %s\n", tilec_error(s->ctx));
			s->dropped[j] = true;
			continue;
		}
		char define[64] = "";
		if (c->define)
			snprintf(define, sizeof define, "%s=%lld", c->define,
				 c->value);
		printf("%-20s %-9s %-7s %-6s %8.1f ms", c->file, define,
		       t->archs[j], info.from_cache ? "cached" : t->compiler,
		       info.total_seconds * 1e3);
		if (check)
			check(arg, c, t->archs[j], &info);
		printf("\n");
	}
}

static void
compile_dir(RtcSession *s, const char *subdir, bool all_must, RtcCheck *check,
	    void *arg)
{
	const RtcTarget *t = s->t;
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/%s", s->root, subdir);
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
	for (int i = 0; i < n; i++) {
		bool must = all_must || !t->core || listed(t->core, files[i]);
		const RtcCase defaults = { files[i], NULL, 0 };
		compile_for_each_arch(s, dir, &defaults, must, check, arg);
		for (const RtcCase *v = t->variants; v && v->file; v++)
			if (strcmp(v->file, files[i]) == 0)
				compile_for_each_arch(s, dir, v, must, check,
						      arg);
		free(files[i]);
	}
}

void
rtc_compile_samples(RtcSession *s, RtcCheck *check, void *arg)
{
	compile_dir(s, "samples", false, check, arg);
}

void
rtc_compile_dir(RtcSession *s, const char *subdir, RtcCheck *check, void *arg)
{
	compile_dir(s, subdir, true, check, arg);
}

/* --- The tests every target runs --------------------------------------- */

START_TEST(the_cache_is_keyed_by_arch)
{
	const RtcTarget *t = target;
	tilec_context *ctx = rtc_compile_only_context(t);
	char name[64];
	snprintf(name, sizeof name, "add%s", t->source_ext);
	const char *src = rtc_add_src;
	tilec_compile_options o;
	tilec_compile_options_init(&o);
	o.name = name;
	o.arch = t->arch;
	tilec_module_info a, b, c;
	tilec_module *m = tilec_compile(ctx, src, strlen(src), &o);
	ck_assert_msg(m, "%s", tilec_error(ctx));
	tilec_module_get_info(m, &a);
	tilec_module_free(m);
	ck_assert(!a.from_cache);
	ck_assert(a.compile_seconds > 0);
	ck_assert_msg(strstr(a.path, t->binary_ext), "%s", a.path);
	m = tilec_compile(ctx, src, strlen(src), &o);
	ck_assert_msg(m, "%s", tilec_error(ctx));
	tilec_module_get_info(m, &b);
	tilec_module_free(m);
	ck_assert(b.from_cache);
	ck_assert_str_eq(a.key, b.key);
	ck_assert(b.compile_seconds == 0);
	o.arch = t->other_arch;
	m = tilec_compile(ctx, src, strlen(src), &o);
	ck_assert_msg(m, "%s", tilec_error(ctx));
	tilec_module_get_info(m, &c);
	tilec_module_free(m);
	ck_assert(!c.from_cache);
	ck_assert_str_ne(a.key, c.key);
	tilec_context_free(ctx);
	rtc_remove_private_cache();
}
END_TEST

START_TEST(compile_errors_carry_the_log)
{
	const RtcTarget *t = target;
	tilec_context *ctx = rtc_compile_only_context(t);
	static const char bad[] =
		"extern \"C\" __global__ void k(float *x)\n"
		"{\n"
		"\tx[0] = undeclared_name;\n"
		"}\n";
	char name[64];
	snprintf(name, sizeof name, "bad%s", t->source_ext);
	tilec_compile_options o;
	tilec_compile_options_init(&o);
	o.name = name;
	o.arch = t->arch;
	ck_assert(!tilec_compile(ctx, bad, strlen(bad), &o));
	const char *msg = tilec_error(ctx);
	ck_assert_msg(strstr(msg, t->compiler) && strstr(msg, name) &&
			      strstr(msg, t->arch) &&
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
	/* Flags reach the compiler: an unknown one is its error. */
	char flag[64];
	snprintf(flag, sizeof flag, "--no-such-%s-flag", t->name);
	o.flags = flag;
	ck_assert(!tilec_compile(ctx, rtc_add_src, strlen(rtc_add_src), &o));
	ck_assert_msg(strstr(tilec_error(ctx), flag + 2), "%s",
		      tilec_error(ctx));
	tilec_context_free(ctx);
	rtc_remove_private_cache();
}
END_TEST

START_TEST(compile_only_contexts_compile_and_nothing_else)
{
	const RtcTarget *t = target;
	const char *src = rtc_add_src;
	tilec_context *ctx = rtc_compile_only_context(t);
	tilec_device_info info;
	ck_assert_int_eq(tilec_device_get_info(ctx, &info), TILEC_OK);
	ck_assert_int_eq(info.compile_only, 1);
	ck_assert_str_eq(info.arch, "");

	tilec_compile_options o;
	tilec_compile_options_init(&o);
	/* No arch: there is no device to take it from. */
	ck_assert(!tilec_compile(ctx, src, strlen(src), &o));
	ck_assert_msg(strstr(tilec_error(ctx), "tilec_compile_options.arch"),
		      "%s", tilec_error(ctx));
	for (const char *const *arch = t->not_archs; *arch; arch++) {
		o.arch = *arch;
		ck_assert(!tilec_compile(ctx, src, strlen(src), &o));
		ck_assert_msg(strstr(tilec_error(ctx), t->not_arch_message),
			      "%s: %s", *arch, tilec_error(ctx));
	}
	o.arch = t->arch;
	tilec_module *m = tilec_compile(ctx, src, strlen(src), &o);
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
	ck_assert_int_eq(tilec_set_compiler(ctx, t->aot_compiler),
			 TILEC_ERR_INVALID);
	ck_assert_msg(strstr(tilec_error(ctx), t->compiler_env), "%s",
		      tilec_error(ctx));
	tilec_context_free(ctx);
	rtc_remove_private_cache();

	tilec_init_error err;
	ck_assert(!tilec_context_new(t->backend, -2, &err));
	ck_assert_int_eq(err.status, TILEC_ERR_INVALID);
	ck_assert(strstr(err.message, "TILEC_DEVICE_NONE"));
}
END_TEST

/* Device 0: a clear refusal without a GPU, a real run with one. */
START_TEST(device_zero_fails_clearly_or_runs)
{
	const RtcTarget *t = target;
	tilec_init_error err;
	tilec_context *ctx = tilec_context_new(t->backend, 0, &err);
	if (!ctx) {
		ck_assert_int_eq(err.status, TILEC_ERR_UNAVAILABLE);
		bool named = false;
		for (const char *const *why = t->no_device; *why; why++)
			named = named || strstr(err.message, *why);
		ck_assert_msg(named, "%s", err.message);
		if (t->no_device_hint)
			ck_assert_msg(strstr(err.message, t->no_device_hint),
				      "%s", err.message);
		printf("device 0: %s\n", err.message);
		return;
	}
	tilec_device_info info;
	ck_assert_int_eq(tilec_device_get_info(ctx, &info), TILEC_OK);
	ck_assert(!info.compile_only);
	ck_assert_msg(strncmp(info.arch, t->arch_prefix,
			      strlen(t->arch_prefix)) == 0,
		      "%s", info.arch);
	ck_assert(info.name[0]);
	printf("device 0: %s (%s)\n", info.name, info.arch);
	tilec_compile_options o;
	tilec_compile_options_init(&o);
	o.no_cache = 1;
	tilec_module *m = tilec_compile(ctx, rtc_add_src, strlen(rtc_add_src),
					&o);
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

int
rtc_main(const RtcTarget *t)
{
	tilec_init_error err;
	tilec_context *probe = tilec_context_new(t->backend,
						 TILEC_DEVICE_NONE, &err);
	if (!probe) {
		printf("skipped: %s\n", err.message);
		return 77;
	}
	tilec_context_free(probe);
	target = t;
	Suite *s = suite_create(t->name);
	TCase *tc = tcase_create(t->name);
	/* Cold compiles take a second or more each. */
	tcase_set_timeout(tc, 900);
	tcase_add_test(tc, the_cache_is_keyed_by_arch);
	tcase_add_test(tc, compile_errors_carry_the_log);
	tcase_add_test(tc, compile_only_contexts_compile_and_nothing_else);
	tcase_add_test(tc, device_zero_fails_clearly_or_runs);
	t->add_tests(tc);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
