/*
 * test_runtime.c - the runtime API (runtime.c) and the system-compiler
 * backend (jit_cc.c): compile, look up, launch, time; and every failure a
 * caller can meet returned as a status with a readable message: compile
 * errors carrying the compiler's log, a missing compiler, unknown kernels,
 * bad options, backends that are not available; a hung compiler killed
 * with its children after the timeout; a flood of compiler output kept
 * bounded; misuse of handles (a context freed before its modules, a
 * double free, a kernel used after its module) defined or caught; no
 * failing call leaving an earlier call's message in place; and host
 * buffers for CPU kernels first touched by the runtime (cpu_place.c).
 *
 * Each test uses a private cache directory under $TMPDIR, removed after.
 */
#include "unit.h"
#include "runtime_int.h"

#include <dirent.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* out[0] = a + b for float a, b and out: the entry-point convention. */
static const char add_src[] =
	"void tilec_entry_add(void **args)\n"
	"{\n"
	"\tfloat a = *(float *)args[0], b = *(float *)args[1];\n"
	"\tfloat *out = *(float **)args[2];\n"
	"\tout[0] = a + b;\n"
	"}\n";

static char cache_dir[4096];

static tilec_context *
new_context(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(cache_dir, sizeof cache_dir, "%s/tilec-test-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	ck_assert(mkdtemp(cache_dir));
	tilec_init_error err;
	tilec_context *ctx = tilec_context_new(TILEC_BACKEND_OPENMP, 0, &err);
	ck_assert_msg(ctx, "%s", err.message);
	ck_assert_int_eq(err.status, TILEC_OK);
	ck_assert_int_eq(tilec_set_cache_dir(ctx, cache_dir), TILEC_OK);
	ck_assert_str_eq(tilec_cache_dir(ctx), cache_dir);
	return ctx;
}

static void
free_context(tilec_context *ctx)
{
	tilec_context_free(ctx);
	tilec_rt_remove_tree(cache_dir);
}

/* Files in the cache directory whose names start with prefix. */
static int
count_files(const char *prefix)
{
	DIR *d = opendir(cache_dir);
	ck_assert(d);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
	closedir(d);
	return n;
}

START_TEST(compile_launch_and_hit_the_cache)
{
	tilec_context *ctx = new_context();
	tilec_compile_options o;
	tilec_compile_options_init(&o);
	o.name = "add.c";
	tilec_module *m = tilec_compile(ctx, add_src, strlen(add_src), &o);
	ck_assert_msg(m, "%s", tilec_error(ctx));
	tilec_module_info info;
	ck_assert_int_eq(tilec_module_get_info(m, &info), TILEC_OK);
	ck_assert(!info.from_cache);
	ck_assert(info.compile_seconds > 0);
	ck_assert_int_eq((int)strlen(info.key), 64);
	tilec_kernel *k = tilec_module_kernel(m, "add");
	ck_assert_msg(k, "%s", tilec_error(ctx));
	ck_assert_ptr_eq(tilec_module_kernel(m, "add"), k);
	float a = 1.5f, b = 2.25f, out = 0;
	void *pout = &out;
	void *args[] = { &a, &b, &pout };
	ck_assert_int_eq(tilec_launch(k, args, NULL), TILEC_OK);
	ck_assert(out == 3.75f);

	/* Same source and options: a cache hit, same key. */
	tilec_module *m2 = tilec_compile(ctx, add_src, strlen(add_src), &o);
	ck_assert_msg(m2, "%s", tilec_error(ctx));
	tilec_module_info info2;
	tilec_module_get_info(m2, &info2);
	ck_assert(info2.from_cache);
	ck_assert(info2.compile_seconds == 0);
	ck_assert_str_eq(info2.key, info.key);
	ck_assert_int_eq(count_files("tmp-"), 0);
	ck_assert_int_eq(count_files(info.key), 1);

	/* Different flags: a different key. */
	o.flags = "-DUNUSED=1";
	tilec_module *m3 = tilec_compile(ctx, add_src, strlen(add_src), &o);
	ck_assert_msg(m3, "%s", tilec_error(ctx));
	tilec_module_info info3;
	tilec_module_get_info(m3, &info3);
	ck_assert(!info3.from_cache);
	ck_assert_str_ne(info3.key, info.key);

	tilec_module_free(m);
	tilec_module_free(m2);
	tilec_module_free(m3);
	free_context(ctx);
}
END_TEST

START_TEST(headers_are_visible_to_the_source)
{
	tilec_context *ctx = new_context();
	static const char src[] =
		"#include \"tilec/cpu/twice.h\"\n"
		"void tilec_entry_tw(void **args)\n"
		"{ **(int **)args[0] = TWICE(21); }\n";
	static const char hdr[] = "#define TWICE(x) ((x) * 2)\n";
	tilec_header h = { "tilec/cpu/twice.h", hdr, sizeof hdr - 1 };
	tilec_compile_options o;
	tilec_compile_options_init(&o);
	o.headers = &h;
	o.nheaders = 1;
	o.no_cache = 1;
	tilec_module *m = tilec_compile(ctx, src, strlen(src), &o);
	ck_assert_msg(m, "%s", tilec_error(ctx));
	int out = 0;
	void *pout = &out;
	void *args[] = { &pout };
	ck_assert_int_eq(tilec_launch(tilec_module_kernel(m, "tw"), args, NULL),
			 TILEC_OK);
	ck_assert_int_eq(out, 42);
	/* no_cache: nothing was written to the cache directory. */
	ck_assert_int_eq(count_files("") - 2, 0);
	tilec_module_free(m);

	h.name = "../escape.h";
	ck_assert(!tilec_compile(ctx, src, strlen(src), &o));
	ck_assert(strstr(tilec_error(ctx), "bad header name '../escape.h'"));
	free_context(ctx);
}
END_TEST

START_TEST(compile_error_carries_the_log)
{
	tilec_context *ctx = new_context();
	static const char bad[] = "void tilec_entry_x(void **args)\n"
				  "{\n"
				  "\tint y = undeclared_name;\n"
				  "}\n";
	tilec_compile_options o;
	tilec_compile_options_init(&o);
	o.name = "samples/broken.openmp.c";
	ck_assert(!tilec_compile(ctx, bad, strlen(bad), &o));
	const char *e = tilec_error(ctx);
	ck_assert_msg(strstr(e, "failed (exit status 1) compiling "
				"broken.openmp.c:\n"), "%s", e);
	ck_assert_msg(strstr(e, "broken.openmp.c:3:"), "%s", e);
	ck_assert_msg(strstr(e, "undeclared_name"), "%s", e);
	/* Nothing half-built is left behind or cached. */
	ck_assert_int_eq(count_files("tmp-"), 0);
	ck_assert_int_eq(count_files("") - 2, 0);
	free_context(ctx);
}
END_TEST

START_TEST(missing_compiler_is_a_clear_error)
{
	tilec_context *ctx = new_context();
	ck_assert_int_eq(tilec_set_compiler(ctx, "/nonexistent/tilec-cc"),
			 TILEC_OK);
	ck_assert(!tilec_compile(ctx, add_src, strlen(add_src), NULL));
	const char *e = tilec_error(ctx);
	ck_assert_msg(strstr(e, "cannot run the C compiler "
				"'/nonexistent/tilec-cc'"), "%s", e);
	ck_assert_msg(strstr(e, "TILEC_CC"), "%s", e);
	ck_assert_int_eq(count_files("") - 2, 0);

	/* A compiler that runs but fails. */
	ck_assert_int_eq(tilec_set_compiler(ctx, "false"), TILEC_OK);
	ck_assert(!tilec_compile(ctx, add_src, strlen(add_src), NULL));
	ck_assert_msg(strstr(tilec_error(ctx), "failed to report its version"),
		      "%s", tilec_error(ctx));

	/* Back to the default works again. */
	ck_assert_int_eq(tilec_set_compiler(ctx, NULL), TILEC_OK);
	tilec_module *m = tilec_compile(ctx, add_src, strlen(add_src), NULL);
	ck_assert_msg(m, "%s", tilec_error(ctx));
	tilec_module_free(m);
	free_context(ctx);
}
END_TEST

/* A compiler command the backend refuses, or a timeout out of range,
 * changes nothing: the context compiles as before. */
START_TEST(refused_settings_leave_the_context_as_it_was)
{
	tilec_context *ctx = new_context();
	ck_assert_int_eq(tilec_set_compiler(ctx, "   "), TILEC_ERR_INVALID);
	ck_assert_msg(strstr(tilec_error(ctx), "empty compiler command"), "%s",
		      tilec_error(ctx));
	ck_assert_int_eq(tilec_set_compile_timeout(ctx, -1), TILEC_ERR_INVALID);
	tilec_module *m = tilec_compile(ctx, add_src, strlen(add_src), NULL);
	ck_assert_msg(m, "%s", tilec_error(ctx));
	tilec_module_free(m);
	/* The previous command, not the default, is the one kept. */
	ck_assert_int_eq(tilec_set_compiler(ctx, "/nonexistent/tilec-cc"),
			 TILEC_OK);
	ck_assert_int_eq(tilec_set_compiler(ctx, " "), TILEC_ERR_INVALID);
	ck_assert(!tilec_compile(ctx, add_src, strlen(add_src), NULL));
	ck_assert_msg(strstr(tilec_error(ctx), "'/nonexistent/tilec-cc'"), "%s",
		      tilec_error(ctx));
	free_context(ctx);
}
END_TEST

START_TEST(unknown_kernel_and_bad_arguments)
{
	tilec_context *ctx = new_context();
	tilec_module *m = tilec_compile(ctx, add_src, strlen(add_src), NULL);
	ck_assert_msg(m, "%s", tilec_error(ctx));
	ck_assert(!tilec_module_kernel(m, "sub"));
	ck_assert(strstr(tilec_error(ctx), "no kernel 'sub'"));
	ck_assert(!tilec_module_kernel(m, "a-b"));
	ck_assert(strstr(tilec_error(ctx), "not a C identifier"));
	ck_assert_int_eq(tilec_launch(NULL, NULL, NULL), TILEC_ERR_INVALID);
	ck_assert_int_eq(tilec_launch(tilec_module_kernel(m, "add"), NULL, NULL),
			 TILEC_ERR_INVALID);
	ck_assert(!tilec_compile(ctx, NULL, 0, NULL));
	ck_assert_int_eq(tilec_module_get_info(NULL, NULL), TILEC_ERR_INVALID);
	tilec_module_free(m);
	tilec_module_free(NULL);
	free_context(ctx);
}
END_TEST

START_TEST(backend_names_and_bad_contexts)
{
	/* cuda is tested in test_nvrtc.c, hip in test_hiprtc.c. */
	tilec_init_error err;
	ck_assert(!tilec_context_new(TILEC_BACKEND_OPENMP, 1, &err));
	ck_assert_int_eq(err.status, TILEC_ERR_INVALID);
	ck_assert(!tilec_context_new((tilec_backend)99, 0, NULL));
	ck_assert_int_eq(tilec_backend_from_name("hip"), TILEC_BACKEND_HIP);
	ck_assert_int_eq(tilec_backend_from_name("metal"), -1);
	ck_assert_str_eq(tilec_status_string(TILEC_ERR_COMPILE), "compile error");
}
END_TEST

START_TEST(bench_rotates_argument_sets)
{
	tilec_context *ctx = new_context();
	static const char src[] = "void tilec_entry_inc(void **args)\n"
				  "{ (**(int **)args[0])++; }\n";
	tilec_module *m = tilec_compile(ctx, src, strlen(src), NULL);
	ck_assert_msg(m, "%s", tilec_error(ctx));
	tilec_kernel *k = tilec_module_kernel(m, "inc");
	int count[3] = { 0, 0, 0 };
	void *p[3] = { &count[0], &count[1], &count[2] };
	void *a0[] = { &p[0] }, *a1[] = { &p[1] }, *a2[] = { &p[2] };
	void **sets[] = { a0, a1, a2 };
	tilec_bench_result r;
	ck_assert_int_eq(tilec_bench(k, (void **const *)sets, 3, NULL, 2, 7, &r),
			 TILEC_OK);
	ck_assert_int_eq(r.runs, 7);
	ck_assert(r.min_s <= r.median_s && r.median_s >= 0 && r.mean_s >= 0);
	/* 9 launches over 3 sets, in turn. */
	ck_assert_int_eq(count[0], 3);
	ck_assert_int_eq(count[1], 3);
	ck_assert_int_eq(count[2], 3);
	ck_assert_int_eq(tilec_bench(k, (void **const *)sets, 0, NULL, 0, 1, &r),
			 TILEC_ERR_INVALID);
	tilec_module_free(m);
	free_context(ctx);
}
END_TEST

/* --- The compiler process: timeouts, bounded logs -------------------------------- */

/* An executable script in the cache directory; its path in path[]. */
static void
fake_compiler(const char *name, const char *body, char *path, size_t n)
{
	snprintf(path, n, "%s/%s", cache_dir, name);
	FILE *f = fopen(path, "w");
	ck_assert(f);
	fprintf(f, "#!/bin/sh\n"
		   "if [ \"$1\" = --version ]; then echo 'fake cc 1.0'; "
		   "exit 0; fi\n"
		   "%s",
		body);
	fclose(f);
	ck_assert(chmod(path, 0755) == 0);
}

/* Whether process pid is gone (or a zombie nobody has reaped yet). */
static bool
process_gone(long pid)
{
	char path[64], stat[512];
	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return true;
	size_t n = fread(stat, 1, sizeof stat - 1, f);
	fclose(f);
	stat[n] = '\0';
	const char *paren = strrchr(stat, ')');
	return paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X');
}

START_TEST(a_hung_compiler_is_killed_with_its_children)
{
	tilec_context *ctx = new_context();
	char cc[4200], pidfile[4200], body[9000];
	snprintf(pidfile, sizeof pidfile, "%s/sleeper.pid", cache_dir);
	/* The child keeps the output pipe open: killing the shell alone
	 * would leave the read waiting for it. */
	snprintf(body, sizeof body, "sleep 600 &\necho $! > '%s'\nwait\n",
		 pidfile);
	fake_compiler("cc-hang", body, cc, sizeof cc);
	ck_assert_int_eq(tilec_set_compiler(ctx, cc), TILEC_OK);
	ck_assert_int_eq(tilec_set_compile_timeout(ctx, 1), TILEC_OK);
	double t0 = tilec_now();
	ck_assert(!tilec_compile(ctx, add_src, strlen(add_src), NULL));
	double took = tilec_now() - t0;
	const char *e = tilec_error(ctx);
	ck_assert_msg(strstr(e, "did not finish within 1 s") &&
			      strstr(e, "TILEC_COMPILE_TIMEOUT"),
		      "%s", e);
	ck_assert_msg(took < 60, "took %.1f s", took);
	FILE *f = fopen(pidfile, "r");
	ck_assert(f);
	long pid = 0;
	ck_assert(fscanf(f, "%ld", &pid) == 1);
	fclose(f);
	for (int i = 0; i < 500 && !process_gone(pid); i++)
		usleep(10000);
	ck_assert_msg(process_gone(pid), "the compiler's child %ld lives", pid);
	ck_assert_int_eq(count_files(".entry") + count_files("tmp-"), 0);

	/* Bad limits are refused, with a message. */
	ck_assert_int_eq(tilec_set_compile_timeout(ctx, -1), TILEC_ERR_INVALID);
	ck_assert(strstr(tilec_error(ctx), "compile timeout"));
	free_context(ctx);

	setenv("TILEC_COMPILE_TIMEOUT", "soon", 1);
	tilec_init_error err;
	ck_assert(!tilec_context_new(TILEC_BACKEND_OPENMP, 0, &err));
	ck_assert(strstr(err.message, "TILEC_COMPILE_TIMEOUT"));
	unsetenv("TILEC_COMPILE_TIMEOUT");
}
END_TEST

START_TEST(a_flood_of_compiler_output_is_bounded)
{
	tilec_context *ctx = new_context();
	char cc[4200];
	/* 16 MiB of messages, then failure. */
	fake_compiler("cc-flood",
		      "yes 'error: the same thing again and again' | "
		      "head -c 16777216\nexit 1\n",
		      cc, sizeof cc);
	ck_assert_int_eq(tilec_set_compiler(ctx, cc), TILEC_OK);
	ck_assert(!tilec_compile(ctx, add_src, strlen(add_src), NULL));
	const char *e = tilec_error(ctx);
	ck_assert_msg(strstr(e, "failed (exit status 1)"), "%.200s", e);
	ck_assert_msg(strstr(e, "more bytes of output were not kept"), "%.200s",
		      e + strlen(e) - 100);
	ck_assert_uint_lt(strlen(e), (size_t)2 << 20);
	free_context(ctx);
}
END_TEST

/* --- Misuse of the API ------------------------------------------------------------- */

START_TEST(a_context_freed_before_its_modules_lives_on_for_them)
{
	tilec_context *ctx = new_context();
	tilec_module *m = tilec_compile(ctx, add_src, strlen(add_src), NULL);
	ck_assert_msg(m, "%s", tilec_error(ctx));
	tilec_kernel *k = tilec_module_kernel(m, "add");
	ck_assert(k);
	tilec_context_free(ctx);
	/* The module and its kernels still work; the last module free
	 * releases the context. */
	float a = 2, b = 5, out = 0;
	void *pout = &out;
	void *args[] = { &a, &b, &pout };
	ck_assert_int_eq(tilec_launch(k, args, NULL), TILEC_OK);
	ck_assert(out == 7.0f);
	tilec_module_free(m);
	tilec_rt_remove_tree(cache_dir);
}
END_TEST

/* Run fn in a child with stderr captured: it must abort, saying `want`. */
static void
expect_abort(void (*fn)(void), const char *want)
{
	int fds[2];
	ck_assert(pipe(fds) == 0);
	pid_t pid = fork();
	ck_assert(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		dup2(fds[1], 2);
		fn();
		_exit(0);
	}
	close(fds[1]);
	char msg[2048];
	size_t n = 0;
	ssize_t r;
	while (n < sizeof msg - 1 &&
	       (r = read(fds[0], msg + n, sizeof msg - 1 - n)) > 0)
		n += (size_t)r;
	msg[n] = '\0';
	close(fds[0]);
	int status;
	ck_assert(waitpid(pid, &status, 0) == pid);
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
		      "status %d, stderr '%s'", status, msg);
	ck_assert_msg(strstr(msg, want), "stderr '%s'", msg);
}

static tilec_module *
compiled_add(tilec_context **ctxp)
{
	tilec_context *ctx = new_context();
	tilec_module *m = tilec_compile(ctx, add_src, strlen(add_src), NULL);
	ck_assert_msg(m, "%s", tilec_error(ctx));
	*ctxp = ctx;
	return m;
}

static void
double_module_free(void)
{
	tilec_context *ctx;
	tilec_module *m = compiled_add(&ctx);
	tilec_module_free(m);
	tilec_module_free(m);
}

static void
kernel_after_module_free(void)
{
	tilec_context *ctx;
	tilec_module *m = compiled_add(&ctx);
	tilec_kernel *k = tilec_module_kernel(m, "add");
	tilec_module_free(m);
	float a = 1, b = 2, out;
	void *pout = &out;
	void *args[] = { &a, &b, &pout };
	tilec_launch(k, args, NULL);
}

static void
module_after_free(void)
{
	tilec_context *ctx;
	tilec_module *m = compiled_add(&ctx);
	tilec_module_free(m);
	tilec_module_kernel(m, "add");
}

static void
context_after_free(void)
{
	tilec_context *ctx;
	tilec_module *m = compiled_add(&ctx);
	tilec_context_free(ctx); /* kept for m */
	tilec_compile(ctx, add_src, strlen(add_src), NULL);
	tilec_module_free(m);
}

START_TEST(use_after_free_is_caught)
{
#ifdef NDEBUG
	/* A precondition these builds do not check. */
	return;
#endif
	expect_abort(double_module_free, "tilec_module_free: module freed twice");
	expect_abort(kernel_after_module_free,
		     "tilec_launch: kernel used after its module was freed");
	expect_abort(module_after_free,
		     "tilec_module_kernel: module used after tilec_module_free");
	expect_abort(context_after_free,
		     "tilec_compile: context used after tilec_context_free");
	tilec_rt_remove_tree(cache_dir);
}
END_TEST

START_TEST(every_error_has_its_own_message)
{
	tilec_context *ctx = new_context();
	/* Leave a message behind: a failed compile. */
	ck_assert(!tilec_compile(ctx, "syntax error", 12, NULL));
	ck_assert(strstr(tilec_error(ctx), "failed"));
	/* A call that succeeds clears it ... */
	ck_assert_int_eq(tilec_set_flags(ctx, NULL), TILEC_OK);
	ck_assert_str_eq(tilec_error(ctx), "");
	/* ... and each failing call says why, itself. */
	ck_assert(!tilec_compile(ctx, "syntax error", 12, NULL));
	ck_assert_int_eq(tilec_alloc(ctx, 16, NULL), TILEC_ERR_INVALID);
	ck_assert_msg(strstr(tilec_error(ctx), "tilec_alloc"), "%s",
		      tilec_error(ctx));
	ck_assert(!tilec_compile(ctx, "syntax error", 12, NULL));
	char buf[4];
	ck_assert_int_eq(tilec_memcpy_h2d(ctx, NULL, buf, 4), TILEC_ERR_INVALID);
	ck_assert_msg(strstr(tilec_error(ctx), "tilec_memcpy_h2d"), "%s",
		      tilec_error(ctx));
	ck_assert(!tilec_compile(ctx, "syntax error", 12, NULL));
	ck_assert_int_eq(tilec_device_get_info(ctx, NULL), TILEC_ERR_INVALID);
	ck_assert_msg(strstr(tilec_error(ctx), "tilec_device_get_info"), "%s",
		      tilec_error(ctx));
	ck_assert_int_eq(tilec_set_compile_timeout(ctx, -2), TILEC_ERR_INVALID);
	ck_assert_msg(strstr(tilec_error(ctx), "compile timeout"), "%s",
		      tilec_error(ctx));

	tilec_module *m = tilec_compile(ctx, add_src, strlen(add_src), NULL);
	ck_assert_msg(m, "%s", tilec_error(ctx));
	tilec_kernel *k = tilec_module_kernel(m, "add");
	ck_assert(!tilec_compile(ctx, "syntax error", 12, NULL));
	tilec_bench_result r;
	ck_assert_int_eq(tilec_bench(k, NULL, 0, NULL, 0, 1, &r),
			 TILEC_ERR_INVALID);
	ck_assert_msg(strstr(tilec_error(ctx), "tilec_bench of add"), "%s",
		      tilec_error(ctx));
	ck_assert(!tilec_compile(ctx, "syntax error", 12, NULL));
	ck_assert_int_eq(tilec_launch(k, NULL, NULL), TILEC_ERR_INVALID);
	ck_assert_msg(strstr(tilec_error(ctx), "without arguments"), "%s",
		      tilec_error(ctx));
	ck_assert(!tilec_compile(ctx, "syntax error", 12, NULL));
	ck_assert(!tilec_module_kernel(m, "nothing_here"));
	ck_assert_msg(strstr(tilec_error(ctx), "no kernel 'nothing_here'"), "%s",
		      tilec_error(ctx));
	ck_assert(!tilec_compile(ctx, "syntax error", 12, NULL));
	ck_assert_int_eq(tilec_module_get_info(m, NULL), TILEC_ERR_INVALID);
	ck_assert_msg(strstr(tilec_error(ctx), "tilec_module_get_info"), "%s",
		      tilec_error(ctx));
	ck_assert(!tilec_compile(ctx, "syntax error", 12, NULL));
	ck_assert_int_eq(tilec_synchronize(ctx), TILEC_OK);
	ck_assert_str_eq(tilec_error(ctx), "");
	tilec_module_free(m);
	free_context(ctx);
}
END_TEST

/* Pages holding any of the n bytes at p that are in memory; with all,
 * how many there are. */
static size_t
resident_pages(void *p, size_t n, size_t *all)
{
	long page = sysconf(_SC_PAGESIZE);
	ck_assert(page > 0);
	char *first = (char *)((uintptr_t)p / (uintptr_t)page * (uintptr_t)page);
	size_t len = (size_t)((char *)p + n - first);
	size_t npages = (len + (size_t)page - 1) / (size_t)page, in = 0;
	unsigned char *v = malloc(npages);
	ck_assert(v);
	ck_assert_int_eq(mincore(first, len, v), 0);
	for (size_t i = 0; i < npages; i++)
		in += v[i] & 1;
	free(v);
	if (all)
		*all = npages;
	return in;
}

START_TEST(host_buffers_are_first_touched_by_the_kernels_threads)
{
	tilec_context *ctx = new_context();
	const size_t n = 64u << 20; /* mapped fresh by the allocator */
	size_t all;
	void *p;
	/* The allocator must not write the memory itself, as it does under
	 * MALLOC_PERTURB_ (which meson sets). */
	const char *perturb = getenv("MALLOC_PERTURB_");
#ifdef M_PERTURB
	mallopt(M_PERTURB, 0);
#endif
	/* Two threads: every page is written before the call returns. */
	setenv("OMP_NUM_THREADS", "2", 1);
	ck_assert_int_eq(tilec_alloc(ctx, n, &p), TILEC_OK);
	ck_assert_uint_eq(resident_pages(p, n, &all), all);
	tilec_free(ctx, p);
	/* One thread: the pages are left to whoever writes first. */
	setenv("OMP_NUM_THREADS", "1", 1);
	ck_assert_int_eq(tilec_alloc(ctx, n, &p), TILEC_OK);
	ck_assert_uint_lt(resident_pages(p, n, &all), all / 2);
	tilec_free(ctx, p);
#ifdef M_PERTURB
	mallopt(M_PERTURB, perturb ? atoi(perturb) : 0);
#else
	(void)perturb;
#endif
	unsetenv("OMP_NUM_THREADS");
	free_context(ctx);
}
END_TEST

Suite *
unit_suite_runtime(void)
{
	Suite *s = suite_create("runtime");
	TCase *c = tcase_create("api");
	tcase_set_timeout(c, 60);
	tcase_add_test(c, compile_launch_and_hit_the_cache);
	tcase_add_test(c, headers_are_visible_to_the_source);
	tcase_add_test(c, compile_error_carries_the_log);
	tcase_add_test(c, missing_compiler_is_a_clear_error);
	tcase_add_test(c, refused_settings_leave_the_context_as_it_was);
	tcase_add_test(c, unknown_kernel_and_bad_arguments);
	tcase_add_test(c, backend_names_and_bad_contexts);
	tcase_add_test(c, bench_rotates_argument_sets);
	tcase_add_test(c, a_hung_compiler_is_killed_with_its_children);
	tcase_add_test(c, a_flood_of_compiler_output_is_bounded);
	tcase_add_test(c, a_context_freed_before_its_modules_lives_on_for_them);
	tcase_add_test(c, use_after_free_is_caught);
	tcase_add_test(c, every_error_has_its_own_message);
	tcase_add_test(c, host_buffers_are_first_touched_by_the_kernels_threads);
	suite_add_tcase(s, c);
	return s;
}
