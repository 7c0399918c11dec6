/*
 * jit_cc.c - the openmp backend: generated C compiled by the system C
 * compiler into a shared object, loaded with dlopen.
 *
 * The compiler command is the context's (tilec_set_compiler), else
 * $TILEC_CC, else "cc"; it may carry leading words ("ccache gcc").  A
 * compile runs
 *
 *     CC -O3 -fno-math-errno -fopenmp -march=ARCH -fPIC -shared [-I INC] FLAGS... \
 *        -o OUT SRC -lm
 *
 * through posix_spawnp, with stdout and stderr captured into the error log.
 * The compiler's identity (the first line of `CC --version`, plus the host
 * CPU's model and feature flags, since -march=native depends on them) is
 * found once per context and goes into every cache key.  Kernels are the
 * exported functions `void tilec_entry_<name>(void **args)`; a launch calls
 * one, which runs the whole grid before returning.
 */
#include "runtime_int.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Per-context state of the backend. */
typedef struct CcState {
	char **cmd;      /* compiler command words, NULL-terminated */
	int ncmd;        /* entries in cmd */
	char *identity;  /* compiler and CPU identity; NULL until found */
} CcState;

typedef void (*EntryFn)(void **args);

tilec_status
tilec_rt_run_process(tilec_context *ctx, char *const argv[], TilecStr *out,
		     int *exit_status, int *signo)
{
	*exit_status = -1;
	*signo = 0;
	int fds[2];
	if (pipe(fds) != 0)
		return tilec_rt_fail(ctx, TILEC_ERR_IO, "pipe: %s",
				     strerror(errno));
	/* Other processes spawned meanwhile must not inherit the pipe. */
	fcntl(fds[0], F_SETFD, FD_CLOEXEC);
	fcntl(fds[1], F_SETFD, FD_CLOEXEC);
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
	pid_t pid;
	int err = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (err != 0) {
		close(fds[0]);
		return tilec_rt_fail(ctx, TILEC_ERR_UNAVAILABLE,
				     "cannot run the C compiler '%s': %s (set "
				     "TILEC_CC or the compiler option)",
				     argv[0], strerror(err));
	}
	char chunk[4096];
	for (;;) {
		ssize_t n = read(fds[0], chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		tilec_rt_str_append(out, chunk, (size_t)n);
	}
	close(fds[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return tilec_rt_fail(ctx, TILEC_ERR_IO, "waitpid: %s",
					     strerror(errno));
	}
	if (WIFEXITED(status))
		*exit_status = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		*signo = WTERMSIG(status);
	/* posix_spawnp reports exec failures of some shells' fallbacks as
	 * exit status 127. */
	if (*exit_status == 127 && out->len == 0)
		return tilec_rt_fail(ctx, TILEC_ERR_UNAVAILABLE,
				     "cannot run the C compiler '%s' (set "
				     "TILEC_CC or the compiler option)",
				     argv[0]);
	return TILEC_OK;
}

static tilec_status
cc_init(tilec_context *ctx, int device)
{
	if (device != 0)
		return tilec_rt_fail(ctx, TILEC_ERR_INVALID,
				     "the openmp backend has one device, 0 (not "
				     "%d)",
				     device);
	CcState *st = calloc(1, sizeof *st);
	if (!st)
		return tilec_rt_fail(ctx, TILEC_ERR_NOMEM, "out of memory");
	const char *cc = tilec_rt_compiler(ctx);
	if (!tilec_rt_split_words(cc ? cc : "cc", &st->cmd, &st->ncmd)) {
		tilec_rt_free_words(st->cmd, st->ncmd);
		free(st);
		return tilec_rt_fail(ctx, TILEC_ERR_NOMEM, "out of memory");
	}
	if (st->ncmd == 0) {
		free(st);
		return tilec_rt_fail(ctx, TILEC_ERR_INVALID,
				     "empty compiler command");
	}
	tilec_rt_set_backend_state(ctx, st);
	return TILEC_OK;
}

static void
cc_fini(tilec_context *ctx)
{
	CcState *st = tilec_rt_backend_state(ctx);
	if (!st)
		return;
	tilec_rt_free_words(st->cmd, st->ncmd);
	free(st->identity);
	free(st);
	tilec_rt_set_backend_state(ctx, NULL);
}

static CcState *
cc_state(tilec_context *ctx)
{
	CcState *st = tilec_rt_backend_state(ctx);
	if (!st)
		tilec_rt_fail(ctx, TILEC_ERR_UNAVAILABLE,
			      "no C compiler is set up for this context");
	return st;
}

/* The first processor's "model name" and a hash of its "flags" line. */
static void
cpu_identity(TilecStr *out)
{
	char *text;
	size_t len;
	if (tilec_rt_read_file("/proc/cpuinfo", &text, &len) != TILEC_OK)
		return;
	static const char *const keys[] = { "model name", "flags" };
	for (int k = 0; k < 2; k++) {
		const char *p = strstr(text, keys[k]);
		if (!p)
			continue;
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);
		if (k == 0) {
			tilec_rt_str_append(out, "; cpu ", 6);
			tilec_rt_str_append(out, p, n);
		} else {
			uint8_t d[32];
			char hex[65];
			tilec_rt_sha256(p, n, d);
			tilec_rt_sha256_hex(d, hex);
			tilec_rt_str_printf(out, "; cpu flags %.16s", hex);
		}
	}
	free(text);
}

static tilec_status
cc_identity(tilec_context *ctx, const char **id)
{
	CcState *st = cc_state(ctx);
	if (!st)
		return TILEC_ERR_UNAVAILABLE;
	if (st->identity) {
		*id = st->identity;
		return TILEC_OK;
	}
	char **argv = calloc((size_t)st->ncmd + 2, sizeof *argv);
	if (!argv)
		return tilec_rt_fail(ctx, TILEC_ERR_NOMEM, "out of memory");
	memcpy(argv, st->cmd, sizeof *argv * (size_t)st->ncmd);
	argv[st->ncmd] = "--version";
	TilecStr out = { 0 };
	int status, signo;
	tilec_status rc = tilec_rt_run_process(ctx, argv, &out, &status, &signo);
	free(argv);
	if (rc == TILEC_OK && status != 0) {
		rc = tilec_rt_fail(ctx, TILEC_ERR_UNAVAILABLE,
				   "the C compiler '%s' failed to report its "
				   "version (exit status %d)",
				   st->cmd[0], status);
		tilec_rt_fail_append(ctx, "\n", 1);
		tilec_rt_fail_append(ctx, tilec_rt_str_cstr(&out), out.len);
	}
	if (rc != TILEC_OK) {
		tilec_rt_str_free(&out);
		return rc;
	}
	const char *text = tilec_rt_str_cstr(&out);
	TilecStr ident = { 0 };
	tilec_rt_str_append(&ident, text, strcspn(text, "\n"));
	cpu_identity(&ident);
	tilec_rt_str_free(&out);
	if (ident.oom || !ident.data) {
		tilec_rt_str_free(&ident);
		return tilec_rt_fail(ctx, TILEC_ERR_NOMEM, "out of memory");
	}
	st->identity = ident.data;
	*id = st->identity;
	return TILEC_OK;
}

static tilec_status
cc_compile(tilec_context *ctx, const TilecCompileJob *job, double *seconds)
{
	CcState *st = cc_state(ctx);
	if (!st)
		return TILEC_ERR_UNAVAILABLE;
	char march[256];
	snprintf(march, sizeof march, "-march=%s", job->arch);
	/* -fno-math-errno lets sqrtf and logf vectorize; generated code
	 * never reads errno.  Not -ffast-math: it breaks exact f16
	 * conversions and NaN handling. */
	const char *fixed[] = { "-O3", "-fno-math-errno", "-fopenmp", march,
				"-fPIC", "-shared" };
	int nfixed = (int)(sizeof fixed / sizeof fixed[0]);
	size_t max = (size_t)(st->ncmd + nfixed + 2 + job->nflags + 5);
	const char **argv = calloc(max, sizeof *argv);
	if (!argv)
		return tilec_rt_fail(ctx, TILEC_ERR_NOMEM, "out of memory");
	int n = 0;
	for (int i = 0; i < st->ncmd; i++)
		argv[n++] = st->cmd[i];
	for (int i = 0; i < nfixed; i++)
		argv[n++] = fixed[i];
	if (job->inc_dir) {
		argv[n++] = "-I";
		argv[n++] = job->inc_dir;
	}
	for (int i = 0; i < job->nflags; i++)
		argv[n++] = job->flags[i];
	argv[n++] = "-o";
	argv[n++] = job->out_path;
	argv[n++] = job->src_path;
	argv[n++] = "-lm";
	argv[n] = NULL;

	TilecStr log = { 0 };
	int status, signo;
	double t0 = tilec_now();
	tilec_status rc = tilec_rt_run_process(ctx, (char *const *)argv, &log,
					       &status, &signo);
	*seconds = tilec_now() - t0;
	free(argv);
	struct stat sb;
	if (rc == TILEC_OK && (status != 0 || stat(job->out_path, &sb) != 0)) {
		const char *name = strrchr(job->src_path, '/');
		name = name ? name + 1 : job->src_path;
		if (signo)
			rc = tilec_rt_fail(ctx, TILEC_ERR_COMPILE,
					   "%s was killed by signal %d compiling "
					   "%s",
					   st->cmd[0], signo, name);
		else
			rc = tilec_rt_fail(ctx, TILEC_ERR_COMPILE,
					   "%s failed (exit status %d) compiling "
					   "%s",
					   st->cmd[0], status, name);
		if (log.len) {
			tilec_rt_fail_append(ctx, ":\n", 2);
			tilec_rt_fail_append(ctx, log.data, log.len);
		}
	}
	tilec_rt_str_free(&log);
	return rc;
}

/* OpenMP runtimes keep idle worker threads inside their own code; if
 * unloading the last module that pulled one in unloaded it too, those
 * threads would crash.  Whichever is loaded is marked never-unload. */
static void
pin_openmp_runtime(void)
{
	static const char *const names[] = {
		"libgomp.so.1", "libomp.so", "libomp.so.5", "libiomp5.so",
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		(void)dlopen(names[i], RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

static tilec_status
cc_load(tilec_context *ctx, const char *path, void **handle)
{
	dlerror();
	*handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!*handle) {
		const char *why = dlerror();
		return tilec_rt_fail(ctx, TILEC_ERR_LOAD, "cannot load %s: %s",
				     path, why ? why : "unknown error");
	}
	pin_openmp_runtime();
	return TILEC_OK;
}

static void
cc_unload(tilec_context *ctx, void *handle)
{
	(void)ctx;
	dlclose(handle);
}

static void *
cc_symbol(tilec_context *ctx, void *handle, const char *name)
{
	(void)ctx;
	char sym[512];
	if (snprintf(sym, sizeof sym, "tilec_entry_%s", name) >= (int)sizeof sym)
		return NULL;
	return dlsym(handle, sym);
}

static tilec_status
cc_launch(tilec_context *ctx, void *entry, void **args,
	  const tilec_launch_config *cfg)
{
	(void)ctx;
	(void)cfg;
	EntryFn fn;
	memcpy(&fn, &entry, sizeof fn);
	fn(args);
	return TILEC_OK;
}

static tilec_status
cc_synchronize(tilec_context *ctx)
{
	(void)ctx;
	return TILEC_OK;
}

const TilecBackendOps tilec_rt_cc_backend = {
	.backend = TILEC_BACKEND_OPENMP,
	.name = "openmp",
	.obj_ext = ".so",
	.src_ext = ".c",
	.init = cc_init,
	.fini = cc_fini,
	.identity = cc_identity,
	.compile = cc_compile,
	.load = cc_load,
	.unload = cc_unload,
	.symbol = cc_symbol,
	.launch = cc_launch,
	.synchronize = cc_synchronize,
};
