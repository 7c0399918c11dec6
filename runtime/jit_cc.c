/*
 * jit_cc.c - the openmp backend: generated C compiled by the system C
 * compiler into a shared object, loaded with dlopen.
 *
 * The compiler command is the context's (tilec_set_compiler), else
 * $TILEC_CC, else "cc"; it may carry leading words ("ccache gcc").  A
 * compile runs
 *
 *     CC -O3 -fno-math-errno -fopenmp [-fno-split-loops] -march=ARCH -fPIC \
 *        -shared -Wl,-Bsymbolic [-I INC] FLAGS... -o OUT SRC -lm
 *
 * through posix_spawnp (never a shell), in a process group of its own,
 * with stdout and stderr captured into the error log (the first
 * TILEC_RT_LOG_MAX bytes; the rest is counted and dropped).  A compiler
 * still running after the context's compile timeout is killed with its
 * whole process group.  The compiler's identity (every word of the
 * command, the program's resolved path, the fixed flags, the whole output
 * of `CC --version`, the environment variables gcc and clang read, and
 * the host CPU's model and feature flags, since -march=native depends on
 * them) is found once per context and goes into every cache key.  Kernels are the
 * exported functions `void tilec_entry_<name>(void **args)`; a launch calls
 * one, which runs the whole grid before returning.
 */
#include "runtime_int.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* Bytes of a process's output kept (a compiler log, a version). */
#define TILEC_RT_LOG_MAX ((size_t)1 << 20)

/* -fno-math-errno lets sqrtf and logf vectorize; generated code never
 * reads errno.  Not -ffast-math: it breaks exact f16 conversions and NaN
 * handling.  -march=ARCH goes between -fopenmp and -fPIC.  -Bsymbolic:
 * the entry's call of the kernel binds to the kernel in the same object,
 * never to a function of that name loaded before it (a kernel named dup
 * or sleep would otherwise call libc's). */
static const char *const fixed_before[] = { "-O3", "-fno-math-errno",
					    "-fopenmp" };
static const char *const fixed_after[] = { "-fPIC", "-shared",
					   "-Wl,-Bsymbolic" };
static const char *const fixed_last = "-lm";
/* GCC only (clang rejects the flag): GCC 12's loop splitting can give two
 * arrays of one loop body the same stack slot once it has split the loop
 * on a test of its counter, so one array's stores land in the other
 * (tests/gen/regress/gcc_split_loops.c: an array filled with 1.0 read
 * back as another's 2.0, at -O2 -fsplit-loops and at -O3). */
static const char *const gcc_only = "-fno-split-loops";
#define NFIXED(a) (sizeof a / sizeof a[0])

/* Environment variables gcc and clang read that change what they build. */
static const char *const compiler_env[] = {
	"CPATH", "C_INCLUDE_PATH", "LIBRARY_PATH", "GCC_EXEC_PREFIX",
	"COMPILER_PATH", "SOURCE_DATE_EPOCH",
};

/* Per-context state of the backend. */
typedef struct CcState {
	char **cmd;      /* compiler command words, NULL-terminated */
	int ncmd;        /* entries in cmd */
	char *identity;  /* compiler and CPU identity; NULL until found */
	bool gcc;        /* GCC, by its --version (found with identity) */
} CcState;

typedef void (*EntryFn)(void **args);

/* Wait for pid until `deadline` (tilec_now() seconds; 0: no limit);
 * false if it is still running then. */
static bool
wait_until(pid_t pid, int *status, double deadline, int *err)
{
	*err = 0;
	for (;;) {
		pid_t w = waitpid(pid, status, deadline > 0 ? WNOHANG : 0);
		if (w == pid)
			return true;
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			*err = errno;
			return true;
		}
		if (tilec_now() >= deadline)
			return false;
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}

/* --- Signals reach the compiler too ---------------------------------------
 * A compiler runs in a process group of its own (so that a timeout kills
 * everything it started), which a terminal's Ctrl-C does not reach: the
 * process dies and the compiler would go on alone.  While compilers run,
 * SIGINT, SIGTERM and SIGHUP, where the program leaves them at their
 * default, are caught: each running compiler's group gets the signal,
 * then the default action happens as it would have. */

#define MAX_GROUPS 64

static _Atomic pid_t running_groups[MAX_GROUPS];
static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP };
static pthread_once_t forward_once = PTHREAD_ONCE_INIT;

static void
forward_signal(int sig)
{
	for (int i = 0; i < MAX_GROUPS; i++) {
		pid_t g = atomic_load(&running_groups[i]);
		if (g > 0)
			kill(-g, sig);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static void
install_forwarding(void)
{
	for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++) {
		struct sigaction old;
		if (sigaction(forwarded[i], NULL, &old) != 0 ||
		    (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
			continue;    /* ignored, or the program's own */
		struct sigaction sa = { .sa_handler = forward_signal };
		sigemptyset(&sa.sa_mask);
		sigaction(forwarded[i], &sa, NULL);
	}
}

/* Note group g as running (0 when all slots are taken: it then goes
 * without forwarding); returns the slot + 1. */
static int
group_enter(pid_t g)
{
	pthread_once(&forward_once, install_forwarding);
	for (int i = 0; i < MAX_GROUPS; i++) {
		pid_t none = 0;
		if (atomic_compare_exchange_strong(&running_groups[i], &none, g))
			return i + 1;
	}
	return 0;
}

static void
group_leave(int slot)
{
	if (slot > 0)
		atomic_store(&running_groups[slot - 1], 0);
}

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
	/* A process group of its own, so that a timeout kills whatever the
	 * compiler started (cc1, as, ld) too. */
	posix_spawnattr_t attr;
	posix_spawnattr_init(&attr);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
	posix_spawnattr_setpgroup(&attr, 0);
	pid_t pid;
	int err = posix_spawnp(&pid, argv[0], &fa, &attr, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	close(fds[1]);
	int slot = err == 0 ? group_enter(pid) : 0;
	if (err != 0) {
		close(fds[0]);
		return tilec_rt_fail(ctx, TILEC_ERR_UNAVAILABLE,
				     "cannot run the C compiler '%s': %s (set "
				     "TILEC_CC or the compiler option)",
				     argv[0], strerror(err));
	}

	/* Read its output until it closes it or the time is up; keep the
	 * first TILEC_RT_LOG_MAX bytes. */
	double limit = tilec_rt_compile_timeout(ctx);
	double deadline = limit > 0 ? tilec_now() + limit : 0;
	bool timed_out = false;
	unsigned long long dropped = 0;
	char chunk[65536];
	for (;;) {
		int ms = -1;
		if (deadline > 0) {
			double left = deadline - tilec_now();
			if (left <= 0) {
				timed_out = true;
				break;
			}
			ms = left > 1e6 ? 1000000000 : (int)(left * 1e3) + 1;
		}
		struct pollfd pfd = { .fd = fds[0], .events = POLLIN };
		int r = poll(&pfd, 1, ms);
		if (r < 0 && errno != EINTR)
			break;
		if (r <= 0)
			continue;
		ssize_t n = read(fds[0], chunk, sizeof chunk);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			break;
		size_t keep = out->len < TILEC_RT_LOG_MAX
				      ? TILEC_RT_LOG_MAX - out->len
				      : 0;
		if (keep > (size_t)n)
			keep = (size_t)n;
		tilec_rt_str_append(out, chunk, keep);
		dropped += (unsigned long long)n - keep;
	}
	close(fds[0]);
	int status = 0;
	if (!timed_out && !wait_until(pid, &status, deadline, &err))
		timed_out = true;
	if (timed_out) {
		kill(-pid, SIGKILL);
		(void)wait_until(pid, &status, 0, &err);
	}
	group_leave(slot);
	if (err)
		return tilec_rt_fail(ctx, TILEC_ERR_IO, "waitpid: %s",
				     strerror(err));
	if (dropped)
		tilec_rt_str_printf(out, "\n[%llu more bytes of output were "
				    "not kept]\n", dropped);
	if (timed_out)
		return tilec_rt_fail(ctx, TILEC_ERR_COMPILE,
				     "%s did not finish within %g s and was "
				     "killed, with every process it started "
				     "(TILEC_COMPILE_TIMEOUT sets the limit "
				     "in seconds, 0 for none)",
				     argv[0], limit);
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

/* Where argv0 is run from: its real path, found on PATH as posix_spawnp
 * finds it; "" if it cannot be found. */
static void
program_path(const char *argv0, char *out, size_t n)
{
	out[0] = '\0';
	char cand[4096];
	const char *path = getenv("PATH");
	const char *p = strchr(argv0, '/') ? "" : path ? path : "/bin:/usr/bin";
	for (;;) {
		size_t len = strcspn(p, ":");
		if (strchr(argv0, '/'))
			snprintf(cand, sizeof cand, "%s", argv0);
		else
			snprintf(cand, sizeof cand, "%.*s%s%s", (int)len, p,
				 len ? "/" : "", argv0);
		char *real = realpath(cand, NULL);
		if (real && access(real, X_OK) == 0) {
			snprintf(out, n, "%s", real);
			free(real);
			return;
		}
		free(real);
		if (strchr(argv0, '/') || !p[len])
			return;
		p += len + 1;
	}
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
	const char *version = tilec_rt_str_cstr(&out);
	st->gcc = strstr(version, "Free Software Foundation") &&
		  !strstr(version, "clang");
	/* Everything that decides what the compiler builds. */
	TilecStr ident = { 0 };
	tilec_rt_str_printf(&ident, "command");
	for (int i = 0; i < st->ncmd; i++)
		tilec_rt_str_printf(&ident, " %s", st->cmd[i]);
	char where[4096];
	program_path(st->cmd[0], where, sizeof where);
	tilec_rt_str_printf(&ident, "\nprogram %s\nfixed", where);
	for (size_t i = 0; i < NFIXED(fixed_before); i++)
		tilec_rt_str_printf(&ident, " %s", fixed_before[i]);
	if (st->gcc)
		tilec_rt_str_printf(&ident, " %s", gcc_only);
	for (size_t i = 0; i < NFIXED(fixed_after); i++)
		tilec_rt_str_printf(&ident, " %s", fixed_after[i]);
	tilec_rt_str_printf(&ident, " %s", fixed_last);
	for (size_t i = 0; i < NFIXED(compiler_env); i++) {
		const char *v = getenv(compiler_env[i]);
		if (v)
			tilec_rt_str_printf(&ident, "\nenv %s=%s",
					    compiler_env[i], v);
	}
	tilec_rt_str_printf(&ident, "\nversion %zu\n", out.len);
	tilec_rt_str_append(&ident, tilec_rt_str_cstr(&out), out.len);
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
	const char *id; /* st->gcc is found with the identity */
	tilec_status idrc = cc_identity(ctx, &id);
	if (idrc != TILEC_OK)
		return idrc;
	char march[256];
	snprintf(march, sizeof march, "-march=%s", job->arch);
	size_t max = (size_t)st->ncmd + NFIXED(fixed_before) +
		     NFIXED(fixed_after) + 2 + 2 + (size_t)job->nflags + 5;
	const char **argv = calloc(max, sizeof *argv);
	if (!argv)
		return tilec_rt_fail(ctx, TILEC_ERR_NOMEM, "out of memory");
	int n = 0;
	for (int i = 0; i < st->ncmd; i++)
		argv[n++] = st->cmd[i];
	for (size_t i = 0; i < NFIXED(fixed_before); i++)
		argv[n++] = fixed_before[i];
	if (st->gcc)
		argv[n++] = gcc_only;
	argv[n++] = march;
	for (size_t i = 0; i < NFIXED(fixed_after); i++)
		argv[n++] = fixed_after[i];
	if (job->inc_dir) {
		argv[n++] = "-I";
		argv[n++] = job->inc_dir;
	}
	for (int i = 0; i < job->nflags; i++)
		argv[n++] = job->flags[i];
	argv[n++] = "-o";
	argv[n++] = job->out_path;
	argv[n++] = job->src_path;
	argv[n++] = fixed_last;
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

/* --- What the CPU has (tilec_cpu_needs) -------------------------------- */

/* Generated files name the CPU features their code uses in
 * `tilec_cpu_needs` (space-separated, as __builtin_cpu_supports spells
 * them).  A module that names one this CPU or its OS lacks is refused
 * when it is loaded, before any of its code runs: an illegal instruction
 * would kill the caller's process.  The checks read CPUID and XGETBV
 * (the OS saves the vector state), as oneDNN's and BLIS's do; AMX also
 * needs Linux's permission for the tile data, asked for here.
 * TILEC_CPU_HIDE (features separated by spaces or commas) makes the
 * runtime treat those as absent: for tests of the refusal on machines
 * that have them. */

/* One feature: CPUID leaf, subleaf, register (0 eax .. 3 edx), bit, and
 * the XCR0 bits the OS must have set for its state. */
typedef struct CpuFeature {
	const char *name;
	unsigned leaf, sub;
	int reg, bit;
	unsigned long long xcr0;
} CpuFeature;

#define XCR0_AVX 0x6ULL         /* SSE and AVX state */
#define XCR0_AVX512 0xe6ULL     /* and opmask, ZMM_Hi256, Hi16_ZMM */
#define XCR0_AMX 0x60000ULL     /* XTILECFG, XTILEDATA */

static const CpuFeature cpu_features[] = {
	{ "fma", 1, 0, 2, 12, XCR0_AVX },
	{ "f16c", 1, 0, 2, 29, XCR0_AVX },
	{ "avx", 1, 0, 2, 28, XCR0_AVX },
	{ "avx2", 7, 0, 1, 5, XCR0_AVX },
	{ "avx512f", 7, 0, 1, 16, XCR0_AVX512 },
	{ "avx512dq", 7, 0, 1, 17, XCR0_AVX512 },
	{ "avx512bw", 7, 0, 1, 30, XCR0_AVX512 },
	{ "avx512vl", 7, 0, 1, 31, XCR0_AVX512 },
	{ "avx512vnni", 7, 0, 2, 11, XCR0_AVX512 },
	{ "avx512fp16", 7, 0, 3, 23, XCR0_AVX512 },
	{ "avx512bf16", 7, 1, 0, 5, XCR0_AVX512 },
	{ "amx-bf16", 7, 0, 3, 22, XCR0_AMX },
	{ "amx-tile", 7, 0, 3, 24, XCR0_AMX },
	{ "amx-int8", 7, 0, 3, 25, XCR0_AMX },
};

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
static void
cpuid(unsigned leaf, unsigned sub, unsigned r[4])
{
	__asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3])
			 : "a"(leaf), "c"(sub));
}
#endif

/* Whether the CPU and its OS have feature f (hidden ones: no). */
static bool
cpu_has(const CpuFeature *f)
{
	const char *hide = getenv("TILEC_CPU_HIDE");
	size_t n = strlen(f->name);
	for (const char *h = hide; h && *h;) {
		size_t len = strcspn(h, " ,");
		if (len == n && strncmp(h, f->name, n) == 0)
			return false;
		h += len;
		h += strspn(h, " ,");
	}
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
	unsigned r[4];
	cpuid(0, 0, r);
	if (r[0] < f->leaf)
		return false;
	if (f->sub) {
		cpuid(f->leaf, 0, r);
		if (r[0] < f->sub)
			return false;
	}
	cpuid(f->leaf, f->sub, r);
	if (!(r[f->reg] >> f->bit & 1))
		return false;
	cpuid(1, 0, r);
	if (!(r[2] >> 27 & 1)) /* OSXSAVE: XGETBV works */
		return false;
	unsigned lo, hi;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	unsigned long long xcr0 = (unsigned long long)hi << 32 | lo;
	return (xcr0 & f->xcr0) == f->xcr0;
#else
	return false;
#endif
}

/* Linux's permission for the AMX tile data (ARCH_REQ_XCOMP_PERM 0x1023,
 * XFEATURE_XTILEDATA 18), granted once per process; errno's value or 0. */
static int
amx_permission(void)
{
#if defined(__linux__) && defined(__x86_64__) &&                             \
	(defined(__GNUC__) || defined(__clang__))
	long rc;
	__asm__ volatile("syscall" : "=a"(rc) : "a"(158L), "D"(0x1023L), "S"(18L)
			 : "rcx", "r11", "memory");
	return rc == 0 ? 0 : (int)-rc;
#else
	return ENOSYS;
#endif
}

/* The module's tilec_cpu_needs against this CPU: TILEC_OK, or a
 * TILEC_ERR_LOAD naming what is missing. */
static tilec_status
check_cpu_needs(tilec_context *ctx, const char *path, const char *needs)
{
	char missing[256] = "";
	size_t used = 0;
	bool amx = false;
	for (const char *w = needs; *w;) {
		w += strspn(w, " ");
		size_t len = strcspn(w, " ");
		if (!len)
			break;
		const CpuFeature *f = NULL;
		for (size_t i = 0; i < sizeof cpu_features / sizeof *cpu_features;
		     i++)
			if (strlen(cpu_features[i].name) == len &&
			    strncmp(cpu_features[i].name, w, len) == 0)
				f = &cpu_features[i];
		if (!f || !cpu_has(f)) {
			int n = snprintf(missing + used, sizeof missing - used,
					 "%s%.*s%s", used ? ", " : "", (int)len, w,
					 f ? "" : " (unknown to this runtime)");
			if (n > 0 && (size_t)n < sizeof missing - used)
				used += (size_t)n;
		}
		amx |= f && f->xcr0 == XCR0_AMX;
		w += len;
	}
	if (used)
		return tilec_rt_fail(ctx, TILEC_ERR_LOAD,
				     "%s was generated for a CPU with %s; this "
				     "CPU lacks %s (translate with --arch native, "
				     "or an arch this machine has)",
				     path, needs, missing);
	int err = amx ? amx_permission() : 0;
	if (err)
		return tilec_rt_fail(ctx, TILEC_ERR_LOAD,
				     "%s uses AMX tiles, and Linux refused this "
				     "process the tile state (arch_prctl "
				     "ARCH_REQ_XCOMP_PERM: %s)",
				     path, strerror(err));
	return TILEC_OK;
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
	const char *needs = dlsym(*handle, "tilec_cpu_needs");
	tilec_status st = needs ? check_cpu_needs(ctx, path, needs) : TILEC_OK;
	if (st != TILEC_OK) {
		dlclose(*handle);
		*handle = NULL;
	}
	return st;
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
	.loads_by_path = true,
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
