/*
 * runtime.c - the public runtime API: contexts, compiling through the disk
 * cache, modules, kernels, launches, timing, host element conversions.
 *
 * Input: generated source text and options.  Output: loaded modules whose
 * kernels can be launched.  tilec_compile computes the cache key (SHA-256
 * over the backend, the runtime version, the compiler identity, the
 * architecture, every flag, the file name, the headers and the source),
 * looks it up, and on a miss compiles in a private scratch directory, stores
 * the object in the cache (cache.c) and loads it.  The backend (a const
 * table, runtime_int.h) does the compiler- and vendor-specific parts.
 *
 * Invariants: no global mutable state; nothing is printed; every call on
 * a context clears its error first and every failure is returned as a
 * status with the message in the context's error string; scratch
 * directories are removed before tilec_compile returns.
 *
 * Lifetimes: a context lives until it has been freed and so have all its
 * modules (tilec_context_free with modules left only marks it); a kernel
 * lives as long as its module.  Freeing a module twice, or using a kernel
 * or a module after it was freed, breaks a precondition: builds without
 * NDEBUG keep freed modules and kernels (poisoned) until their context
 * goes, so that such a call is caught and aborts with a message naming
 * it, as an assertion would.
 */
#include "runtime_int.h"

#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Builds without NDEBUG check the API's lifetime preconditions. */
#ifndef NDEBUG
#define API_CHECKS 1
#else
#define API_CHECKS 0
#endif

/* Magic numbers in every handle: what it is and whether it is live. */
enum {
	CONTEXT_LIVE = 0x7c0a7e01u,
	CONTEXT_CLOSING = 0x7c0a7e02u, /* freed, waiting for its modules */
	MODULE_LIVE = 0x7c0a7e11u,
	MODULE_FREED = 0x7c0a7e12u,
	KERNEL_LIVE = 0x7c0a7e21u,
	KERNEL_FREED = 0x7c0a7e22u,
};

/* Without a limit from TILEC_COMPILE_TIMEOUT, a compile is stopped after
 * this many seconds. */
#define DEFAULT_COMPILE_TIMEOUT 300.0

struct tilec_context {
	uint32_t magic;             /* CONTEXT_LIVE, or CONTEXT_CLOSING */
	const TilecBackendOps *ops; /* the backend's table */
	int device;                 /* device ordinal (0 on the CPU) */
	TilecStr error;             /* the last error, with compiler log */
	char *cache_dir;            /* "" when the disk cache is off */
	char *compiler;             /* compiler command, NULL = backend default */
	char *flags;                /* extra flags for every compile, or NULL */
	double compile_timeout;     /* seconds a compiler may run; 0: no limit */
	void *backend_state;        /* owned by the backend (init/fini) */
	int nmodules;               /* live modules; the context outlives them */
	tilec_module *freed;        /* freed modules kept for the checks
				       (API_CHECKS), released with the context */
};

struct Rebuild;

struct tilec_module {
	uint32_t magic;            /* MODULE_LIVE, or MODULE_FREED */
	tilec_context *ctx;        /* the context that compiled it */
	void *handle;              /* the backend's loaded module */
	tilec_module_info info;    /* how it was built */
	tilec_kernel *kernels;     /* kernels looked up so far (a list) */
	tilec_module *next_freed;  /* next in the context's freed list */
	TilecSignature **sigs;     /* from the compile's launch document */
	int nsigs;                 /* entries in sigs */
	/* Compiled without a launch document from a source whose kernels
	 * take tensor maps (TMA), which only a document describes: no raw
	 * launch may run them. */
	bool tmaps_unknown;
	/* Built twice (docs/runtime.md, "Aligned launches"), as a kernel's
	 * signature lists tensors its TILEC_ALIGNED build assumes aligned:
	 * handle is that build, general the one without, made from
	 * `rebuild` at the first launch that is not aligned (NULL until
	 * then).  rebuild is NULL for a module built once. */
	struct Rebuild *rebuild;
	void *general;
};

struct tilec_kernel {
	uint32_t magic;            /* KERNEL_LIVE, or KERNEL_FREED */
	tilec_module *mod;         /* owner */
	char *name;                /* the kernel's name (NULL once freed) */
	void *entry;               /* the backend's entry point */
	void *general_entry;       /* its general build's (lazily), or NULL */
	const TilecSignature *sig; /* its signature (the module's), or NULL */
	int problem;               /* TILEC_PROBLEM_ of its last checked
				      launch */
	tilec_kernel *next;        /* next kernel of the module */
};

/* The flag of a module's build for aligned launches (docs/runtime.md,
 * "Aligned launches"). */
#define ALIGNED_FLAG "-DTILEC_ALIGNED=1"

/* The backends, by tilec_backend; NULL where not available yet. */
static const TilecBackendOps *const backends[TILEC_BACKEND_COUNT] = {
	[TILEC_BACKEND_OPENMP] = &tilec_rt_cc_backend,
	[TILEC_BACKEND_CUDA] = &tilec_rt_cuda_backend,
	[TILEC_BACKEND_HIP] = &tilec_rt_hip_backend,
};

static const char *const backend_names[TILEC_BACKEND_COUNT] = {
	[TILEC_BACKEND_OPENMP] = "openmp",
	[TILEC_BACKEND_CUDA] = "cuda",
	[TILEC_BACKEND_HIP] = "hip",
};

/* --- Strings --------------------------------------------------------------- */

void
tilec_rt_str_free(TilecStr *s)
{
	free(s->data);
	memset(s, 0, sizeof *s);
}

static bool
str_reserve(TilecStr *s, size_t extra)
{
	if (s->oom)
		return false;
	if (s->len + extra + 1 <= s->cap)
		return true;
	size_t cap = s->cap ? s->cap : 256;
	while (cap < s->len + extra + 1)
		cap *= 2;
	char *p = realloc(s->data, cap);
	if (!p) {
		s->oom = true;
		return false;
	}
	s->data = p;
	s->cap = cap;
	return true;
}

void
tilec_rt_str_append(TilecStr *s, const char *p, size_t n)
{
	if (!str_reserve(s, n))
		return;
	memcpy(s->data + s->len, p, n);
	s->len += n;
	s->data[s->len] = '\0';
}

static void
str_vprintf(TilecStr *s, const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0 || !str_reserve(s, (size_t)n))
		return;
	vsnprintf(s->data + s->len, (size_t)n + 1, fmt, ap);
	s->len += (size_t)n;
}

void
tilec_rt_str_printf(TilecStr *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	str_vprintf(s, fmt, ap);
	va_end(ap);
}

const char *
tilec_rt_str_cstr(const TilecStr *s)
{
	return s->data ? s->data : "";
}

/* --- Errors ------------------------------------------------------------------ */

/* A broken precondition of the API (a handle used after it was freed):
 * say which and stop, as a failed assertion does.  Only API_CHECKS builds
 * can see these. */
static _Noreturn void
misuse(const char *call, const char *what, const void *handle)
{
	fprintf(stderr, "tilec runtime: %s: %s (%p); this is a bug in the "
		"program calling it\n", call, what, handle);
	abort();
}

/* Check a context handle passed to `call`. */
static void
check_context(const tilec_context *ctx, const char *call)
{
	if (API_CHECKS && ctx->magic == CONTEXT_CLOSING)
		misuse(call, "context used after tilec_context_free", ctx);
	if (API_CHECKS && ctx->magic != CONTEXT_LIVE)
		misuse(call, "not a tilec context", ctx);
}

static void
check_module(const tilec_module *mod, const char *call)
{
	if (API_CHECKS && mod->magic == MODULE_FREED)
		misuse(call, "module used after tilec_module_free", mod);
	if (API_CHECKS && mod->magic != MODULE_LIVE)
		misuse(call, "not a tilec module", mod);
}

static void
check_kernel(const tilec_kernel *k, const char *call)
{
	if (API_CHECKS && k->magic == KERNEL_FREED)
		misuse(call, "kernel used after its module was freed", k);
	if (API_CHECKS && k->magic != KERNEL_LIVE)
		misuse(call, "not a tilec kernel", k);
}

void
tilec_rt_clear_error(tilec_context *ctx)
{
	tilec_rt_str_free(&ctx->error);
}

tilec_status
tilec_rt_fail(tilec_context *ctx, tilec_status status, const char *fmt, ...)
{
	tilec_rt_str_free(&ctx->error);
	va_list ap;
	va_start(ap, fmt);
	str_vprintf(&ctx->error, fmt, ap);
	va_end(ap);
	return status;
}

void
tilec_rt_fail_append(tilec_context *ctx, const char *text, size_t n)
{
	tilec_rt_str_append(&ctx->error, text, n);
}

const char *
tilec_error(const tilec_context *ctx)
{
	if (!ctx)
		return "no context";
	if (ctx->error.oom)
		return "out of memory";
	return tilec_rt_str_cstr(&ctx->error);
}

const char *
tilec_status_string(tilec_status status)
{
	switch (status) {
	case TILEC_OK: return "success";
	case TILEC_ERR_INVALID: return "invalid argument";
	case TILEC_ERR_UNAVAILABLE: return "not available";
	case TILEC_ERR_COMPILE: return "compile error";
	case TILEC_ERR_LOAD: return "load error";
	case TILEC_ERR_NOT_FOUND: return "not found";
	case TILEC_ERR_IO: return "I/O error";
	case TILEC_ERR_NOMEM: return "out of memory";
	case TILEC_ERR_LAUNCH: return "launch error";
	case TILEC_ERR_UNTRUSTED: return "untrusted directory";
	}
	return "unknown status";
}

const char *
tilec_backend_name(tilec_backend backend)
{
	if ((int)backend < 0 || backend >= TILEC_BACKEND_COUNT)
		return NULL;
	return backend_names[backend];
}

int
tilec_backend_from_name(const char *name)
{
	for (int b = 0; name && b < TILEC_BACKEND_COUNT; b++)
		if (strcmp(backend_names[b], name) == 0)
			return b;
	return -1;
}

/* --- Small file and word helpers --------------------------------------------- */

bool
tilec_rt_split_words(const char *words, char ***argv, int *argc)
{
	const char *p = words;
	while (p && *p) {
		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (!*p)
			break;
		const char *start = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n')
			p++;
		char **v = realloc(*argv, sizeof *v * (size_t)(*argc + 2));
		if (!v)
			return false;
		*argv = v;
		v[*argc] = strndup(start, (size_t)(p - start));
		if (!v[*argc])
			return false;
		v[++*argc] = NULL;
	}
	return true;
}

void
tilec_rt_free_words(char **argv, int argc)
{
	for (int i = 0; argv && i < argc; i++)
		free(argv[i]);
	free(argv);
}

tilec_status
tilec_rt_read_file(const char *path, char **data, size_t *len)
{
	*data = NULL;
	*len = 0;
	/* Regular files only: O_NONBLOCK keeps a FIFO from hanging the
	 * open, and fstat turns it away. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		errno = EINVAL;
		fd = -1;
	}
	FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return TILEC_ERR_IO;
	}
	TilecStr s = { 0 };
	char chunk[16384];
	size_t n;
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
		tilec_rt_str_append(&s, chunk, n);
	bool bad = ferror(f);
	fclose(f);
	if (bad || s.oom) {
		tilec_rt_str_free(&s);
		return bad ? TILEC_ERR_IO : TILEC_ERR_NOMEM;
	}
	if (!s.data)
		s.data = calloc(1, 1);
	if (!s.data)
		return TILEC_ERR_NOMEM;
	*data = s.data;
	*len = s.len;
	return TILEC_OK;
}

tilec_status
tilec_rt_write_file(const char *dir, const char *name, const char *data,
		    size_t len)
{
	char path[4096];
	if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
		return TILEC_ERR_IO;
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return TILEC_ERR_IO;
	for (char *p = path + strlen(dir) + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0700) != 0 && errno != EEXIST)
			return TILEC_ERR_IO;
		*p = '/';
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return TILEC_ERR_IO;
	size_t done = 0;
	while (done < len) {
		ssize_t w = write(fd, data + done, len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			close(fd);
			return TILEC_ERR_IO;
		}
		done += (size_t)w;
	}
	return close(fd) == 0 ? TILEC_OK : TILEC_ERR_IO;
}

void
tilec_rt_remove_tree(const char *dir)
{
	DIR *d = opendir(dir);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d))) {
			if (strcmp(e->d_name, ".") == 0 ||
			    strcmp(e->d_name, "..") == 0)
				continue;
			char path[4096];
			struct stat st;
			if (snprintf(path, sizeof path, "%s/%s", dir,
				     e->d_name) >= (int)sizeof path)
				continue;
			if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
				tilec_rt_remove_tree(path);
			else
				unlink(path);
		}
		closedir(d);
	}
	rmdir(dir);
}

/* --- Contexts -------------------------------------------------------------------- */

/* The default cache directory, malloc'd; "" when none can be named. */
static char *
default_cache_dir(void)
{
	const char *env = getenv("TILEC_CACHE_DIR");
	if (env)
		return strdup(env);
	char buf[4096];
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	if (xdg && xdg[0] == '/')
		snprintf(buf, sizeof buf, "%s/tilec", xdg);
	else if (home && home[0] == '/')
		snprintf(buf, sizeof buf, "%s/.cache/tilec", home);
	else
		buf[0] = '\0';
	return strdup(buf);
}

/* TILEC_COMPILE_TIMEOUT in seconds (0: no limit), or the default; -1 if
 * it is not a number >= 0. */
static double
default_compile_timeout(void)
{
	const char *env = getenv("TILEC_COMPILE_TIMEOUT");
	if (!env || !*env)
		return DEFAULT_COMPILE_TIMEOUT;
	char *end;
	errno = 0;
	double t = strtod(env, &end);
	if (errno || *end || !(t >= 0) || !isfinite(t))
		return -1;
	return t;
}

static void
init_error(tilec_init_error *err, tilec_status status, const char *msg)
{
	if (!err)
		return;
	err->status = status;
	snprintf(err->message, sizeof err->message, "%s", msg);
}

tilec_context *
tilec_context_new(tilec_backend backend, int device, tilec_init_error *err)
{
	init_error(err, TILEC_OK, "");
	if ((int)backend < 0 || backend >= TILEC_BACKEND_COUNT) {
		init_error(err, TILEC_ERR_INVALID, "unknown backend");
		return NULL;
	}
	if (!backends[backend]) {
		char msg[256];
		snprintf(msg, sizeof msg,
			 "the %s backend is not available in this build of the "
			 "tilec runtime",
			 backend_names[backend]);
		init_error(err, TILEC_ERR_UNAVAILABLE, msg);
		return NULL;
	}
	tilec_context *ctx = calloc(1, sizeof *ctx);
	if (!ctx) {
		init_error(err, TILEC_ERR_NOMEM, "out of memory");
		return NULL;
	}
	ctx->magic = CONTEXT_LIVE;
	ctx->ops = backends[backend];
	ctx->device = device;
	ctx->compile_timeout = default_compile_timeout();
	if (ctx->compile_timeout < 0) {
		free(ctx);
		init_error(err, TILEC_ERR_INVALID,
			   "TILEC_COMPILE_TIMEOUT must be a number of seconds "
			   "(0 for no limit)");
		return NULL;
	}
	ctx->cache_dir = default_cache_dir();
	const char *cc = getenv("TILEC_CC");
	if (cc && *cc)
		ctx->compiler = strdup(cc);
	if (!ctx->cache_dir || (cc && *cc && !ctx->compiler)) {
		tilec_context_free(ctx);
		init_error(err, TILEC_ERR_NOMEM, "out of memory");
		return NULL;
	}
	tilec_status st = ctx->ops->init(ctx, device);
	if (st != TILEC_OK) {
		init_error(err, st, tilec_error(ctx));
		tilec_context_free(ctx);
		return NULL;
	}
	return ctx;
}

/* Release a context whose modules are all gone. */
static void
context_release(tilec_context *ctx)
{
	if (ctx->backend_state)
		ctx->ops->fini(ctx);
	for (tilec_module *m = ctx->freed, *next; m; m = next) {
		next = m->next_freed;
		for (tilec_kernel *k = m->kernels, *kn; k; k = kn) {
			kn = k->next;
			free(k);
		}
		free(m);
	}
	tilec_rt_str_free(&ctx->error);
	free(ctx->cache_dir);
	free(ctx->compiler);
	free(ctx->flags);
	ctx->magic = 0;
	free(ctx);
}

void
tilec_context_free(tilec_context *ctx)
{
	if (!ctx)
		return;
	if (API_CHECKS && ctx->magic == CONTEXT_CLOSING)
		misuse("tilec_context_free", "context freed twice", ctx);
	check_context(ctx, "tilec_context_free");
	/* Modules still loaded keep it (their kernels launch through it);
	 * the last tilec_module_free releases it. */
	ctx->magic = CONTEXT_CLOSING;
	if (ctx->nmodules == 0)
		context_release(ctx);
}

const TilecBackendOps *
tilec_rt_ops(const tilec_context *ctx)
{
	return ctx->ops;
}

void *
tilec_rt_backend_state(tilec_context *ctx)
{
	return ctx->backend_state;
}

void
tilec_rt_set_backend_state(tilec_context *ctx, void *state)
{
	ctx->backend_state = state;
}

const char *
tilec_rt_compiler(const tilec_context *ctx)
{
	return ctx->compiler;
}

double
tilec_rt_compile_timeout(const tilec_context *ctx)
{
	return ctx->compile_timeout;
}

/* Replace *slot with a copy of value (NULL stays NULL). */
static tilec_status
set_string(tilec_context *ctx, char **slot, const char *value)
{
	char *copy = NULL;
	if (value && !(copy = strdup(value)))
		return tilec_rt_fail(ctx, TILEC_ERR_NOMEM, "out of memory");
	free(*slot);
	*slot = copy;
	return TILEC_OK;
}

/* Start a call on ctx: check the handle, clear the last error. */
static void
begin(tilec_context *ctx, const char *call)
{
	check_context(ctx, call);
	tilec_rt_str_free(&ctx->error);
}

tilec_status
tilec_set_cache_dir(tilec_context *ctx, const char *dir)
{
	if (!ctx)
		return TILEC_ERR_INVALID;
	begin(ctx, "tilec_set_cache_dir");
	if (dir)
		return set_string(ctx, &ctx->cache_dir, dir);
	char *def = default_cache_dir();
	if (!def)
		return tilec_rt_fail(ctx, TILEC_ERR_NOMEM, "out of memory");
	free(ctx->cache_dir);
	ctx->cache_dir = def;
	return TILEC_OK;
}

tilec_status
tilec_set_compiler(tilec_context *ctx, const char *cc)
{
	if (!ctx)
		return TILEC_ERR_INVALID;
	begin(ctx, "tilec_set_compiler");
	if (ctx->ops->backend != TILEC_BACKEND_OPENMP)
		return tilec_rt_fail(ctx, TILEC_ERR_INVALID,
				     "the %s backend has no compiler command to "
				     "set%s",
				     ctx->ops->name,
				     ctx->ops->backend == TILEC_BACKEND_CUDA
					     ? " (TILEC_NVRTC names the libnvrtc "
					       "to load)"
				     : ctx->ops->backend == TILEC_BACKEND_HIP
					     ? " (TILEC_HIPRTC names the library "
					       "with hiprtc to load)"
					     : "");
	/* The compiler's identity is part of every key: the backend is set
	 * up again for the new command.  A command it refuses ("   ")
	 * leaves the previous one and its state in place. */
	char *copy = NULL;
	if (cc && *cc && !(copy = strdup(cc)))
		return tilec_rt_fail(ctx, TILEC_ERR_NOMEM, "out of memory");
	char *old = ctx->compiler;
	void *old_state = ctx->backend_state;
	ctx->compiler = copy;
	ctx->backend_state = NULL;
	tilec_status st = ctx->ops->init(ctx, ctx->device);
	if (st != TILEC_OK) {
		free(copy);
		ctx->compiler = old;
		ctx->backend_state = old_state;
		return st;
	}
	void *state = ctx->backend_state;
	ctx->backend_state = old_state;
	if (old_state)
		ctx->ops->fini(ctx);
	ctx->backend_state = state;
	free(old);
	return TILEC_OK;
}

tilec_status
tilec_set_flags(tilec_context *ctx, const char *flags)
{
	if (!ctx)
		return TILEC_ERR_INVALID;
	begin(ctx, "tilec_set_flags");
	return set_string(ctx, &ctx->flags, flags);
}

tilec_status
tilec_set_compile_timeout(tilec_context *ctx, double seconds)
{
	if (!ctx)
		return TILEC_ERR_INVALID;
	begin(ctx, "tilec_set_compile_timeout");
	if (!(seconds >= 0) || !isfinite(seconds))
		return tilec_rt_fail(ctx, TILEC_ERR_INVALID,
				     "a compile timeout is a number of seconds "
				     ">= 0 (0 for no limit), not %g",
				     seconds);
	ctx->compile_timeout = seconds;
	return TILEC_OK;
}

const char *
tilec_cache_dir(const tilec_context *ctx)
{
	return ctx && ctx->cache_dir ? ctx->cache_dir : "";
}

int
tilec_context_backend(const tilec_context *ctx)
{
	return ctx ? (int)ctx->ops->backend : -1;
}

/* --- Devices and memory ------------------------------------------------------------- */

tilec_status
tilec_device_get_info(tilec_context *ctx, tilec_device_info *info)
{
	if (!ctx)
		return TILEC_ERR_INVALID;
	begin(ctx, "tilec_device_get_info");
	if (!info)
		return tilec_rt_fail(ctx, TILEC_ERR_INVALID,
				     "tilec_device_get_info: no info to fill");
	memset(info, 0, sizeof *info);
	if (ctx->ops->device_info)
		return ctx->ops->device_info(ctx, info);
	snprintf(info->name, sizeof info->name, "host CPU");
	snprintf(info->arch, sizeof info->arch, "native");
	return TILEC_OK;
}

tilec_status
tilec_alloc(tilec_context *ctx, size_t bytes, void **ptr)
{
	if (!ctx)
		return TILEC_ERR_INVALID;
	begin(ctx, "tilec_alloc");
	if (!ptr)
		return tilec_rt_fail(ctx, TILEC_ERR_INVALID,
				     "tilec_alloc: no pointer to set");
	if (ctx->ops->mem_alloc)
		return ctx->ops->mem_alloc(ctx, bytes, ptr);
	size_t n = (bytes + 63) / 64 * 64;
	if (n < bytes || !(*ptr = aligned_alloc(64, n ? n : 64)))
		return tilec_rt_fail(ctx, TILEC_ERR_NOMEM,
				     "cannot allocate %zu bytes", bytes);
	/* Each page in the memory node of the kernels' thread that will
	 * use it (cpu_place.c). */
	tilec_rt_first_touch(*ptr, bytes);
	return TILEC_OK;
}

tilec_status
tilec_free(tilec_context *ctx, void *ptr)
{
	if (!ctx)
		return TILEC_ERR_INVALID;
	begin(ctx, "tilec_free");
	if (!ptr)
		return TILEC_OK;
	if (ctx->ops->mem_free)
		return ctx->ops->mem_free(ctx, ptr);
	free(ptr);
	return TILEC_OK;
}

static tilec_status
mem_copy(tilec_context *ctx, void *dst, const void *src, size_t bytes,
	 bool to_device)
{
	const char *call = to_device ? "tilec_memcpy_h2d" : "tilec_memcpy_d2h";
	if (!ctx)
		return TILEC_ERR_INVALID;
	begin(ctx, call);
	if ((!dst || !src) && bytes > 0)
		return tilec_rt_fail(ctx, TILEC_ERR_INVALID,
				     "%s of %zu bytes with a NULL %s", call,
				     bytes, dst ? "source" : "destination");
	if (ctx->ops->mem_copy)
		return ctx->ops->mem_copy(ctx, dst, src, bytes, to_device);
	if (bytes > 0)
		memcpy(dst, src, bytes);
	return TILEC_OK;
}

tilec_status
tilec_memcpy_h2d(tilec_context *ctx, void *dst, const void *src,
		 size_t bytes)
{
	return mem_copy(ctx, dst, src, bytes, true);
}

tilec_status
tilec_memcpy_d2h(tilec_context *ctx, void *dst, const void *src,
		 size_t bytes)
{
	return mem_copy(ctx, dst, src, bytes, false);
}

/* --- Compiling ---------------------------------------------------------------------- */

void
tilec_compile_options_init(tilec_compile_options *o)
{
	memset(o, 0, sizeof *o);
	o->size = sizeof *o;
}

/* The caller's options as this library's struct (tilec_runtime.h, on
 * versioning): fields past the caller's size read as zero; fields past
 * ours must be zero.  False (after the error) when they cannot be read. */
static bool
options_read(tilec_context *ctx, const tilec_compile_options *in,
	     tilec_compile_options *out)
{
	tilec_compile_options_init(out);
	if (!in)
		return true;
	if (in->size < sizeof in->size) {
		tilec_rt_fail(ctx, TILEC_ERR_INVALID, "tilec_compile_options "
			      "was not initialized: call "
			      "tilec_compile_options_init first");
		return false;
	}
	size_t n = in->size < sizeof *out ? in->size : sizeof *out;
	memcpy(out, in, n);
	for (size_t i = sizeof *out; i < in->size; i++)
		if (((const unsigned char *)in)[i]) {
			tilec_rt_fail(ctx, TILEC_ERR_INVALID, "tilec_compile_"
				      "options has fields this runtime (%s) "
				      "does not know: built against a newer "
				      "tilec_runtime.h", TILEC_RUNTIME_VERSION);
			return false;
		}
	out->size = sizeof *out;
	return true;
}

/* Hash one length-prefixed field into the key, so fields cannot run into
 * each other. */
static void
key_field(TilecSha256 *s, const char *data, size_t n)
{
	uint8_t len[8];
	for (int i = 0; i < 8; i++)
		len[i] = (uint8_t)((uint64_t)n >> (8 * i));
	tilec_rt_sha256_update(s, len, sizeof len);
	tilec_rt_sha256_update(s, data, n);
}

static void
key_string(TilecSha256 *s, const char *str)
{
	key_field(s, str ? str : "", str ? strlen(str) : 0);
}

/* A header name is a relative path without "..", "." or empty parts. */
static bool
header_name_ok(const char *name)
{
	if (!name || !*name || name[0] == '/')
		return false;
	const char *p = name;
	while (*p) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);
		if (n == 0 || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p += n + (slash ? 1 : 0);
		if (slash && !*p)
			return false;
	}
	return true;
}

/* The file name to compile the source under: the last component of
 * opts->name, or "kernel" plus the backend's source extension. */
static void
source_name(const tilec_context *ctx, const tilec_compile_options *o,
	    char *out, size_t outlen)
{
	const char *name = o->name;
	if (name && strrchr(name, '/'))
		name = strrchr(name, '/') + 1;
	if (!name || !*name || strcmp(name, ".") == 0 ||
	    strcmp(name, "..") == 0)
		snprintf(out, outlen, "kernel%s", ctx->ops->src_ext);
	else
		snprintf(out, outlen, "%s", name);
}

static double
seconds_since(double t0)
{
	return tilec_now() - t0;
}

static bool
is_identifier(const char *s)
{
	if (!s || !(*s == '_' || (*s >= 'a' && *s <= 'z') ||
		    (*s >= 'A' && *s <= 'Z')))
		return false;
	for (; *s; s++)
		if (!(*s == '_' || (*s >= 'a' && *s <= 'z') ||
		      (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')))
			return false;
	return true;
}

/* Compile in a scratch directory under `parent`; on success the object is
 * at obj_path (inside scratch).  The caller removes scratch. */
static tilec_status
compile_in(tilec_context *ctx, const char *scratch, const char *source,
	   size_t len, const tilec_compile_options *o, const char *arch,
	   bool aligned, char *obj_path, size_t obj_len, double *seconds)
{
	char name[256], src_path[4096], inc_dir[4096];
	source_name(ctx, o, name, sizeof name);
	snprintf(src_path, sizeof src_path, "%s/%s", scratch, name);
	snprintf(inc_dir, sizeof inc_dir, "%s/include", scratch);
	snprintf(obj_path, obj_len, "%s/module%s", scratch, ctx->ops->obj_ext);
	bool files = !ctx->ops->in_memory;
	if (files && tilec_rt_write_file(scratch, name, source, len) != TILEC_OK)
		return tilec_rt_fail(ctx, TILEC_ERR_IO, "cannot write %s: %s",
				     src_path, strerror(errno));
	for (int i = 0; files && i < o->nheaders; i++) {
		const tilec_header *h = &o->headers[i];
		if (tilec_rt_write_file(inc_dir, h->name, h->text, h->len) !=
		    TILEC_OK)
			return tilec_rt_fail(ctx, TILEC_ERR_IO,
					     "cannot write header %s in %s: %s",
					     h->name, inc_dir, strerror(errno));
	}

	char **flags = NULL;
	int nflags = 0;
	if (!tilec_rt_split_words(ctx->flags, &flags, &nflags) ||
	    !tilec_rt_split_words(o->flags, &flags, &nflags) ||
	    !tilec_rt_split_words(aligned ? ALIGNED_FLAG : NULL, &flags,
				  &nflags)) {
		tilec_rt_free_words(flags, nflags);
		return tilec_rt_fail(ctx, TILEC_ERR_NOMEM, "out of memory");
	}
	TilecCompileJob job = {
		.scratch = scratch,
		.src_path = src_path,
		.inc_dir = files && o->nheaders > 0 ? inc_dir : NULL,
		.name = name,
		.source = source,
		.source_len = len,
		.headers = o->headers,
		.nheaders = o->nheaders,
		.out_path = obj_path,
		.arch = arch,
		.flags = flags,
		.nflags = nflags,
	};
	tilec_status st = ctx->ops->compile(ctx, &job, seconds);
	tilec_rt_free_words(flags, nflags);
	return st;
}

/* The compiler's output must be loadable and define every kernel the
 * options name; the first kernel it lacks, or NULL.  Looking up is the
 * backend's symbol entry; a context that cannot load (compile-only)
 * checks nothing. */
static const char *
missing_kernel(tilec_context *ctx, void *handle,
	       const tilec_compile_options *o, bool can_load)
{
	for (int i = 0; can_load && i < o->nkernels; i++) {
		if (!ctx->ops->symbol(ctx, handle, o->kernels[i])) {
			tilec_rt_str_free(&ctx->error);
			return o->kernels[i];
		}
	}
	return NULL;
}

/* Note in mod why its cache entry was not used and is being rebuilt. */
static void TILEC_RT_PRINTF(2, 3)
note_rebuilt(tilec_module_info *info, const char *fmt, ...)
{
	TilecStr note = { 0 };
	va_list ap;
	va_start(ap, fmt);
	str_vprintf(&note, fmt, ap);
	va_end(ap);
	tilec_rt_str_printf(&note, "; rebuilt");
	info->rebuilt_corrupt = 1;
	size_t n = note.len < sizeof info->note - 1 ? note.len
						    : sizeof info->note - 1;
	memcpy(info->note, tilec_rt_str_cstr(&note), n);
	info->note[n] = '\0';
	tilec_rt_str_free(&note);
}

/* Load *handle from the cache entry of info->key, if there is a
 * trusted, intact one whose object loads and defines the kernels o names.
 * An entry that fails is noted in info and dropped, so that it is
 * rebuilt. */
static bool
load_cached(tilec_context *ctx, tilec_module_info *info, void **handle,
	    const TilecCache *cache, const tilec_compile_options *o,
	    bool can_load, char *path, size_t pathlen)
{
	char why[sizeof info->note];
	TilecCacheResult r = tilec_rt_cache_lookup(cache, info->key,
						   ctx->ops->obj_ext, path,
						   pathlen, why, sizeof why);
	if (r == TILEC_CACHE_MISS)
		return false;
	if (r == TILEC_CACHE_CORRUPT) {
		note_rebuilt(info, "%s", why);
		return false;
	}
	if (ctx->ops->load(ctx, path, handle) != TILEC_OK) {
		note_rebuilt(info, "cache entry %s/%s.entry: %s", cache->dir,
			     info->key, tilec_error(ctx));
		tilec_rt_str_free(&ctx->error);
		tilec_rt_cache_drop(cache, info->key);
		return false;
	}
	const char *lacks = missing_kernel(ctx, *handle, o, can_load);
	if (lacks) {
		note_rebuilt(info,
			     "cache entry %s/%s.entry: its object %s defines no "
			     "kernel '%s'",
			     cache->dir, info->key, path, lacks);
		ctx->ops->unload(ctx, *handle);
		*handle = NULL;
		tilec_rt_cache_drop(cache, info->key);
		return false;
	}
	info->from_cache = 1;
	info->rebuilt_corrupt = 0;
	info->note[0] = '\0';
	return true;
}

/* Compile into scratch (with TILEC_ALIGNED=1 where `aligned`), load the
 * object and check it, then store it in the cache (when there is one);
 * on success *handle is loaded and path[] names the cached object (""
 * when uncached). */
static tilec_status
build(tilec_context *ctx, tilec_module_info *info, void **handle,
      const TilecCache *cache, const char *scratch, const char *source,
      size_t len, const tilec_compile_options *o, const char *arch,
      bool aligned, bool can_load, char *path, size_t pathlen)
{
	char obj[4096];
	path[0] = '\0';
	tilec_status st = compile_in(ctx, scratch, source, len, o, arch,
				     aligned, obj, sizeof obj,
				     &info->compile_seconds);
	if (st != TILEC_OK)
		return st;
	/* A compiler that reports success with a garbage object must not
	 * poison the cache: load and check before storing. */
	st = ctx->ops->load(ctx, obj, handle);
	if (st != TILEC_OK) {
		static const char more[] = " (the compiler reported success; "
					   "nothing was cached)";
		tilec_rt_fail_append(ctx, more, sizeof more - 1);
		return st;
	}
	const char *lacks = missing_kernel(ctx, *handle, o, can_load);
	if (lacks) {
		ctx->ops->unload(ctx, *handle);
		*handle = NULL;
		return tilec_rt_fail(ctx, TILEC_ERR_COMPILE,
				     "the object compiled from %s defines no "
				     "kernel '%s' (the compiler reported "
				     "success; nothing was cached)",
				     o->name ? o->name : "the source", lacks);
	}
	if (cache->fd < 0)
		return TILEC_OK;
	/* A cache that cannot take the object (a full disk) costs the next
	 * run a compile, not this one its module. */
	if (tilec_rt_cache_store(ctx, cache, info->key, ctx->ops->obj_ext,
				 obj, path, pathlen) != TILEC_OK) {
		tilec_rt_str_free(&ctx->error);
		path[0] = '\0';
		return TILEC_OK;
	}
	if (!ctx->ops->loads_by_path)
		return TILEC_OK;
	/* The module refers to its file by name (debuggers read it): load
	 * it again from where it now lives. */
	ctx->ops->unload(ctx, *handle);
	*handle = NULL;
	return ctx->ops->load(ctx, path, handle);
}

/* Whether the len bytes at s hold `needle`. */
static bool
contains(const char *s, size_t len, const char *needle)
{
	size_t n = strlen(needle);
	for (size_t i = 0; n <= len && i <= len - n; i++)
		if (s[i] == needle[0] && memcmp(s + i, needle, n) == 0)
			return true;
	return false;
}

static void
free_signatures(TilecSignature **sigs, int n)
{
	for (int i = 0; i < n; i++)
		tilec_rt_signature_free(sigs[i]);
	free(sigs);
}

/* Build `source` (with TILEC_ALIGNED=1 where `aligned`) into *handle,
 * or load it from the disk cache: info gets its key, where it came from
 * and its object's path. */
static tilec_status
obtain(tilec_context *ctx, const char *source, size_t len,
       const tilec_compile_options *o, const char *arch, bool aligned,
       tilec_module_info *info, void **handle)
{
	/* The key: everything that can change the object. */
	const char *identity;
	tilec_status st = ctx->ops->identity(ctx, &identity);
	if (st != TILEC_OK)
		return st;
	char name[256];
	source_name(ctx, o, name, sizeof name);
	TilecSha256 s;
	tilec_rt_sha256_init(&s);
	key_string(&s, "tilec-cache-key 3");
	key_string(&s, ctx->ops->name);
	key_string(&s, TILEC_RUNTIME_VERSION);
	key_string(&s, identity);
	key_string(&s, arch);
	key_string(&s, ctx->flags);
	key_string(&s, o->flags);
	key_string(&s, aligned ? ALIGNED_FLAG : "");
	key_string(&s, name);
	for (int i = 0; i < o->nheaders; i++) {
		key_string(&s, o->headers[i].name);
		key_field(&s, o->headers[i].text ? o->headers[i].text : "",
			  o->headers[i].len);
	}
	key_field(&s, source, len);
	uint8_t digest[32];
	tilec_rt_sha256_final(&s, digest);
	tilec_rt_sha256_hex(digest, info->key);

	TilecCache cache = { .fd = -1 };
	if (!o->no_cache)
		st = tilec_rt_cache_open(ctx, ctx->cache_dir, &cache);
	tilec_device_info dev = { 0 };
	if (st == TILEC_OK && ctx->ops->device_info)
		st = ctx->ops->device_info(ctx, &dev);
	bool can_load = !dev.compile_only;
	char path[4096] = "", scratch[4096] = "";
	int lock = -1;
	if (st == TILEC_OK && cache.fd >= 0 &&
	    !load_cached(ctx, info, handle, &cache, o, can_load, path,
			 sizeof path)) {
		/* Compile the key once however many processes want it: wait
		 * for whoever is compiling it, then look again. */
		lock = tilec_rt_cache_lock(&cache, info->key,
					   ctx->compile_timeout);
		if (lock >= 0)
			load_cached(ctx, info, handle, &cache, o, can_load,
				    path, sizeof path);
	}
	if (st == TILEC_OK && !info->from_cache) {
		st = tilec_rt_scratch_dir(ctx, &cache, scratch, sizeof scratch);
		if (st == TILEC_OK)
			st = build(ctx, info, handle, &cache, scratch, source,
				   len, o, arch, aligned, can_load, path,
				   sizeof path);
	}
	tilec_rt_cache_unlock(&cache, info->key, lock);
	tilec_rt_cache_close(&cache);
	if (scratch[0])
		tilec_rt_remove_tree(scratch);
	if (st != TILEC_OK) {
		if (*handle)
			ctx->ops->unload(ctx, *handle);
		*handle = NULL;
		return st;
	}
	snprintf(info->path, sizeof info->path, "%s", path);
	return TILEC_OK;
}

/* What a module's general build needs of its tilec_compile call:
 * copies of the source, the architecture and the options (less the
 * manifest, read already). */
typedef struct Rebuild {
	char *source;
	size_t len;
	char *arch;
	tilec_compile_options o;
} Rebuild;

static char *
copy_bytes(const char *p, size_t n)
{
	char *c = malloc(n + 1);
	if (c) {
		if (n)
			memcpy(c, p, n);
		c[n] = '\0';
	}
	return c;
}

static char *
copy_str(const char *p, bool *ok)
{
	if (!p)
		return NULL;
	char *c = copy_bytes(p, strlen(p));
	*ok &= c != NULL;
	return c;
}

static void
rebuild_free(Rebuild *r)
{
	if (!r)
		return;
	free(r->source);
	free(r->arch);
	free((char *)r->o.name);
	free((char *)r->o.flags);
	tilec_header *h = (tilec_header *)r->o.headers;
	for (int i = 0; h && i < r->o.nheaders; i++) {
		free((char *)h[i].name);
		free((char *)h[i].text);
	}
	free(h);
	char **k = (char **)r->o.kernels;
	for (int i = 0; k && i < r->o.nkernels; i++)
		free(k[i]);
	free(k);
	free(r);
}

static Rebuild *
rebuild_new(const char *source, size_t len, const tilec_compile_options *o,
	    const char *arch)
{
	Rebuild *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	bool ok = true;
	r->o = *o;
	r->o.manifest = NULL;
	r->o.headers = NULL;
	r->o.kernels = NULL;
	r->len = len;
	ok &= (r->source = copy_bytes(source, len)) != NULL;
	r->arch = copy_str(arch, &ok);
	r->o.name = copy_str(o->name, &ok);
	r->o.flags = copy_str(o->flags, &ok);
	tilec_header *h = o->nheaders > 0 ? calloc((size_t)o->nheaders, sizeof *h) : NULL;
	ok &= o->nheaders == 0 || h;
	for (int i = 0; h && i < o->nheaders; i++) {
		h[i].name = copy_str(o->headers[i].name, &ok);
		h[i].len = o->headers[i].len;
		h[i].text = o->headers[i].text ? copy_bytes(o->headers[i].text, h[i].len) : NULL;
		ok &= !o->headers[i].text || h[i].text;
	}
	r->o.headers = h;
	char **k = o->nkernels > 0 ? calloc((size_t)o->nkernels, sizeof *k) : NULL;
	ok &= o->nkernels == 0 || k;
	for (int i = 0; k && i < o->nkernels; i++)
		k[i] = copy_str(o->kernels[i], &ok);
	r->o.kernels = (const char *const *)k;
	if (!ok) {
		rebuild_free(r);
		return NULL;
	}
	return r;
}

tilec_module *
tilec_compile(tilec_context *ctx, const char *source, size_t len,
	      const tilec_compile_options *opts)
{
	if (!ctx)
		return NULL;
	begin(ctx, "tilec_compile");
	if (!source) {
		tilec_rt_fail(ctx, TILEC_ERR_INVALID, "no source to compile");
		return NULL;
	}
	double t0 = tilec_now();
	tilec_compile_options given;
	if (!options_read(ctx, opts, &given))
		return NULL;
	const tilec_compile_options *o = &given;
	const char *arch = o->arch && *o->arch ? o->arch : "native";
	if (!(o->arch && *o->arch) && ctx->ops->default_arch &&
	    !(arch = ctx->ops->default_arch(ctx)))
		return NULL;
	if (o->nheaders < 0 || (o->nheaders > 0 && !o->headers)) {
		tilec_rt_fail(ctx, TILEC_ERR_INVALID, "bad header list");
		return NULL;
	}
	for (int i = 0; i < o->nheaders; i++) {
		if (!header_name_ok(o->headers[i].name) ||
		    (!o->headers[i].text && o->headers[i].len > 0)) {
			tilec_rt_fail(ctx, TILEC_ERR_INVALID,
				      "bad header name '%s': use a relative "
				      "path without '..'",
				      o->headers[i].name ? o->headers[i].name
							 : "(null)");
			return NULL;
		}
	}
	if (o->nkernels < 0 || (o->nkernels > 0 && !o->kernels)) {
		tilec_rt_fail(ctx, TILEC_ERR_INVALID, "bad kernel list");
		return NULL;
	}
	for (int i = 0; i < o->nkernels; i++) {
		if (!is_identifier(o->kernels[i])) {
			tilec_rt_fail(ctx, TILEC_ERR_INVALID,
				      "kernel name '%s' is not a C identifier",
				      o->kernels[i] ? o->kernels[i] : "(null)");
			return NULL;
		}
	}

	TilecSignature **sigs = NULL;
	int nsigs = 0;
	if (o->manifest && tilec_rt_signatures_parse(ctx, ctx->ops->name,
						     o->manifest, &sigs,
						     &nsigs) != TILEC_OK)
		return NULL;
	tilec_module *mod = calloc(1, sizeof *mod);
	if (!mod) {
		free_signatures(sigs, nsigs);
		tilec_rt_fail(ctx, TILEC_ERR_NOMEM, "out of memory");
		return NULL;
	}
	mod->magic = MODULE_LIVE;
	mod->ctx = ctx;
	mod->sigs = sigs;
	mod->nsigs = nsigs;
	mod->tmaps_unknown = !o->manifest && contains(source, len, "tilec::TensorMap ");

	/* Two builds where a kernel's signature lists tensors its
	 * TILEC_ALIGNED build assumes aligned: that one now, the general
	 * one at the first launch that needs it, from copies of what this
	 * call was given. */
	bool two = false;
	for (int i = 0; i < nsigs; i++)
		two |= tilec_rt_signature_aligned(sigs[i]) > 0;
	if (two && !(mod->rebuild = rebuild_new(source, len, o, arch))) {
		free_signatures(mod->sigs, mod->nsigs);
		free(mod);
		tilec_rt_fail(ctx, TILEC_ERR_NOMEM, "out of memory");
		return NULL;
	}
	tilec_status st = obtain(ctx, source, len, o, arch, two, &mod->info,
				 &mod->handle);
	if (st != TILEC_OK) {
		rebuild_free(mod->rebuild);
		free_signatures(mod->sigs, mod->nsigs);
		free(mod);
		return NULL;
	}
	mod->info.total_seconds = seconds_since(t0);
	ctx->nmodules++;
	return mod;
}

void
tilec_module_free(tilec_module *mod)
{
	if (!mod)
		return;
	if (API_CHECKS && mod->magic == MODULE_FREED)
		misuse("tilec_module_free", "module freed twice", mod);
	check_module(mod, "tilec_module_free");
	tilec_context *ctx = mod->ctx;
	if (mod->handle)
		ctx->ops->unload(ctx, mod->handle);
	mod->handle = NULL;
	if (mod->general)
		ctx->ops->unload(ctx, mod->general);
	mod->general = NULL;
	rebuild_free(mod->rebuild);
	mod->rebuild = NULL;
	for (tilec_kernel *k = mod->kernels, *next; k; k = next) {
		next = k->next;
		free(k->name);
		k->name = NULL;
		k->entry = NULL;
		k->general_entry = NULL;
		k->sig = NULL;
		k->magic = KERNEL_FREED;
		if (!API_CHECKS)
			free(k);
	}
	free_signatures(mod->sigs, mod->nsigs);
	mod->sigs = NULL;
	mod->nsigs = 0;
	mod->magic = MODULE_FREED;
	if (API_CHECKS) {
		/* Kept, poisoned, so that a later use is caught. */
		mod->next_freed = ctx->freed;
		ctx->freed = mod;
	} else {
		free(mod);
	}
	if (--ctx->nmodules == 0 && ctx->magic == CONTEXT_CLOSING)
		context_release(ctx);
}

tilec_status
tilec_module_get_info(const tilec_module *mod, tilec_module_info *info)
{
	if (!mod)
		return TILEC_ERR_INVALID;
	check_module(mod, "tilec_module_get_info");
	tilec_rt_str_free(&mod->ctx->error);
	if (!info)
		return tilec_rt_fail(mod->ctx, TILEC_ERR_INVALID,
				     "tilec_module_get_info: no info to fill");
	*info = mod->info;
	return TILEC_OK;
}

tilec_kernel *
tilec_module_kernel(tilec_module *mod, const char *name)
{
	if (!mod)
		return NULL;
	check_module(mod, "tilec_module_kernel");
	tilec_context *ctx = mod->ctx;
	tilec_rt_str_free(&ctx->error);
	if (!is_identifier(name)) {
		tilec_rt_fail(ctx, TILEC_ERR_INVALID,
			      "kernel name '%s' is not a C identifier",
			      name ? name : "(null)");
		return NULL;
	}
	for (tilec_kernel *k = mod->kernels; k; k = k->next)
		if (strcmp(k->name, name) == 0)
			return k;
	void *entry = ctx->ops->symbol(ctx, mod->handle, name);
	if (!entry) {
		/* The backend may have said why. */
		if (ctx->error.len == 0 && !ctx->error.oom)
			tilec_rt_fail(ctx, TILEC_ERR_NOT_FOUND,
				      "no kernel '%s' in the module (its entry "
				      "point tilec_entry_%s is not defined)",
				      name, name);
		if (mod->info.from_cache)
			tilec_rt_str_printf(&ctx->error,
					    "; the module was loaded from the "
					    "cache (%s)",
					    mod->info.path);
		return NULL;
	}
	tilec_kernel *k = calloc(1, sizeof *k);
	if (!k || !(k->name = strdup(name))) {
		free(k);
		tilec_rt_fail(ctx, TILEC_ERR_NOMEM, "out of memory");
		return NULL;
	}
	k->magic = KERNEL_LIVE;
	k->mod = mod;
	k->entry = entry;
	for (int i = 0; i < mod->nsigs; i++)
		if (strcmp(tilec_rt_signature_kernel(mod->sigs[i]), name) == 0)
			k->sig = mod->sigs[i];
	k->next = mod->kernels;
	mod->kernels = k;
	return k;
}

/* --- Launching and timing ------------------------------------------------------------ */

/* A module compiled from a source whose kernels take tensor maps, but
 * without the launch document that says how to build them. */
static tilec_status
no_tmaps(const tilec_kernel *k)
{
	return tilec_rt_fail(k->mod->ctx, TILEC_ERR_INVALID,
			     "%s may take tensor maps (TMA copies) after its "
			     "parameters, which only its launch document "
			     "describes: compile its module with it (the "
			     "manifest option; tilec_jit does), or translate "
			     "with --no-tma", k->name);
}

/* The entry a launch of k runs: its module's first build's, unless the
 * module was built twice (docs/runtime.md, "Aligned launches"), k's
 * signature lists aligned tensors and the launch is not aligned: then
 * the general build's, compiled (or loaded from the cache) at the
 * module's first such launch. */
static tilec_status
entry_for(tilec_kernel *k, bool aligned, void **entry)
{
	tilec_module *mod = k->mod;
	tilec_context *ctx = mod->ctx;
	*entry = k->entry;
	if (!mod->rebuild || aligned || !tilec_rt_signature_aligned(k->sig))
		return TILEC_OK;
	if (!mod->general) {
		const Rebuild *r = mod->rebuild;
		tilec_module_info info = { 0 };
		tilec_status st = obtain(ctx, r->source, r->len, &r->o, r->arch,
					 false, &info, &mod->general);
		if (st != TILEC_OK)
			return st;
	}
	if (!k->general_entry &&
	    !(k->general_entry = ctx->ops->symbol(ctx, mod->general, k->name))) {
		if (ctx->error.len == 0 && !ctx->error.oom)
			tilec_rt_fail(ctx, TILEC_ERR_NOT_FOUND,
				      "no kernel '%s' in its module's build for "
				      "launches that are not aligned", k->name);
		return TILEC_ERR_NOT_FOUND;
	}
	*entry = k->general_entry;
	return TILEC_OK;
}

tilec_status
tilec_launch(tilec_kernel *k, void **args, const tilec_launch_config *cfg)
{
	if (!k)
		return TILEC_ERR_INVALID;
	check_kernel(k, "tilec_launch");
	tilec_context *ctx = k->mod->ctx;
	tilec_rt_str_free(&ctx->error);
	if (!args)
		return tilec_rt_fail(ctx, TILEC_ERR_INVALID,
				     "launch of %s without arguments", k->name);
	if (!k->sig && k->mod->tmaps_unknown)
		return no_tmaps(k);
	if (!tilec_rt_signature_tmaps(k->sig) &&
	    !tilec_rt_signature_aligned(k->sig))
		return ctx->ops->launch(ctx, k->entry, args, cfg);
	/* Tensor maps follow the parameters: built from the arguments,
	 * which also say which build runs. */
	TilecLaunchBuf buf;
	void **argv, *entry;
	bool aligned;
	tilec_status st = tilec_rt_raw_tmaps(ctx, k->sig, args, &buf, &argv,
					     &aligned);
	if (st == TILEC_OK)
		st = entry_for(k, aligned, &entry);
	if (st == TILEC_OK)
		st = ctx->ops->launch(ctx, entry, argv, cfg);
	free(buf.heap);
	return st;
}

tilec_status
tilec_launch_checked(tilec_kernel *k, const tilec_arg *args, int nargs,
		     void *stream)
{
	if (!k)
		return TILEC_ERR_INVALID;
	check_kernel(k, "tilec_launch_checked");
	tilec_context *ctx = k->mod->ctx;
	tilec_rt_str_free(&ctx->error);
	k->problem = TILEC_PROBLEM_VALUE;
	if (!k->sig)
		return tilec_rt_fail(ctx, TILEC_ERR_INVALID,
				     "%s has no signature to check a launch "
				     "against: compile its module with its "
				     "launch document (the manifest option; "
				     "tilec_jit does)", k->name);
	TilecLaunchBuf buf;
	void **argv;
	tilec_launch_config cfg;
	bool empty, aligned;
	void *entry;
	/* A persistent kernel's grid reads the device's SMs (the backend
	 * read them when the context opened). */
	tilec_device_info dev = { 0 };
	if (tilec_rt_signature_sms(k->sig) && ctx->ops->device_info &&
	    ctx->ops->device_info(ctx, &dev) != TILEC_OK)
		return TILEC_ERR_UNAVAILABLE;
	tilec_status st = tilec_rt_prepare_launch(ctx, k->sig,
						  ctx->ops->backend,
						  ctx->device,
						  dev.multiprocessors, args,
						  nargs, stream, &buf, &argv,
						  &cfg, &empty, &aligned,
						  &k->problem);
	if (st != TILEC_OK)
		return st;
	/* The CPU's entry derives the grid itself (nothing to run when it
	 * is empty); a GPU driver refuses an empty grid. */
	if (!empty || ctx->ops->backend == TILEC_BACKEND_OPENMP) {
		st = entry_for(k, aligned, &entry);
		if (st == TILEC_OK)
			st = ctx->ops->launch(ctx, entry, argv, &cfg);
	}
	free(buf.heap);
	return st;
}

int
tilec_launch_problem(const tilec_kernel *k)
{
	if (!k)
		return TILEC_PROBLEM_NONE;
	check_kernel(k, "tilec_launch_problem");
	return k->problem;
}

tilec_status
tilec_synchronize(tilec_context *ctx)
{
	if (!ctx)
		return TILEC_ERR_INVALID;
	begin(ctx, "tilec_synchronize");
	return ctx->ops->synchronize(ctx);
}

double
tilec_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

tilec_status
tilec_bench(tilec_kernel *k, void **const *arg_sets, int nsets,
	    const tilec_launch_config *cfg, int warmup, int repeat,
	    tilec_bench_result *out)
{
	if (!k)
		return TILEC_ERR_INVALID;
	check_kernel(k, "tilec_bench");
	tilec_context *ctx = k->mod->ctx;
	tilec_rt_str_free(&ctx->error);
	if (!arg_sets || nsets <= 0 || repeat <= 0 || warmup < 0 || !out)
		return tilec_rt_fail(ctx, TILEC_ERR_INVALID,
				     "tilec_bench of %s: needs argument sets "
				     "(nsets %d > 0), repeat %d > 0, warmup %d "
				     ">= 0 and a result",
				     k->name, nsets, repeat, warmup);
	tilec_status st;
	if (!k->sig && k->mod->tmaps_unknown)
		return no_tmaps(k);
	for (int i = 0; i < warmup; i++)
		if ((st = tilec_launch(k, arg_sets[i % nsets], cfg)) != TILEC_OK)
			return st;
	/* The module's context, which may have been freed already (it lives
	 * on for its modules): synchronize through the backend. */
	if ((st = ctx->ops->synchronize(ctx)) != TILEC_OK)
		return st;
	double *t = malloc(sizeof *t * (size_t)repeat);
	if (!t)
		return tilec_rt_fail(ctx, TILEC_ERR_NOMEM, "out of memory");
	double sum = 0;
	for (int i = 0; i < repeat; i++) {
		void **args = arg_sets[(warmup + i) % nsets];
		double t0 = tilec_now();
		if (ctx->ops->time_launch &&
		    (tilec_rt_signature_tmaps(k->sig) ||
		     tilec_rt_signature_aligned(k->sig))) {
			TilecLaunchBuf buf;
			void **argv, *entry;
			bool aligned;
			st = tilec_rt_raw_tmaps(ctx, k->sig, args, &buf, &argv,
						&aligned);
			if (st == TILEC_OK)
				st = entry_for(k, aligned, &entry);
			if (st == TILEC_OK)
				st = ctx->ops->time_launch(ctx, entry, argv,
							   cfg, &t[i]);
			free(buf.heap);
		} else if (ctx->ops->time_launch) {
			st = ctx->ops->time_launch(ctx, k->entry, args, cfg,
						   &t[i]);
		} else {
			st = tilec_launch(k, args, cfg);
			if (st == TILEC_OK)
				st = ctx->ops->synchronize(ctx);
			t[i] = tilec_now() - t0;
		}
		if (st != TILEC_OK) {
			free(t);
			return st;
		}
		sum += t[i];
	}
	qsort(t, (size_t)repeat, sizeof *t, cmp_double);
	out->runs = repeat;
	out->min_s = t[0];
	out->mean_s = sum / repeat;
	out->median_s = repeat % 2 ? t[repeat / 2]
				   : 0.5 * (t[repeat / 2 - 1] + t[repeat / 2]);
	free(t);
	return TILEC_OK;
}

/* --- Host element conversions ------------------------------------------------------------
 * One encoder and one decoder for every small binary float format: `ebits`
 * exponent bits, `mbits` mantissa bits, IEEE-style infinities unless
 * `finite_only` (fp8e4m3: the all-ones exponent holds numbers, and only
 * all-ones exponent and mantissa is NaN). */

typedef struct FloatFormat {
	int ebits;        /* exponent bits */
	int mbits;        /* mantissa bits */
	bool finite_only; /* no infinities (fp8e4m3) */
} FloatFormat;

static const FloatFormat fmt_f16 = { 5, 10, false };
static const FloatFormat fmt_bf16 = { 8, 7, false };
static const FloatFormat fmt_e4m3 = { 4, 3, true };
static const FloatFormat fmt_e5m2 = { 5, 2, false };

static uint32_t
encode_float(const FloatFormat *f, double x)
{
	uint64_t d;
	memcpy(&d, &x, sizeof d);
	uint32_t sign = (d >> 63) ? 1u << (f->ebits + f->mbits) : 0;
	uint32_t exp_ones = (1u << f->ebits) - 1;
	uint32_t mant_ones = (1u << f->mbits) - 1;
	uint32_t nan = f->finite_only ? (exp_ones << f->mbits) | mant_ones
				      : (exp_ones << f->mbits) | (1u << (f->mbits - 1));
	uint32_t inf = f->finite_only ? nan : exp_ones << f->mbits;
	int dexp = (int)(d >> 52 & 0x7ff);
	uint64_t sig = d & ((1ull << 52) - 1);
	if (dexp == 0x7ff)
		return sign | (sig ? nan : inf);
	if (dexp == 0)
		return sign; /* zero, or far below every format's range */
	sig |= 1ull << 52;
	int e = dexp - 1023; /* x = sig * 2^(e - 52) */
	int bias = (1 << (f->ebits - 1)) - 1;
	int emin = 1 - bias; /* exponent of the smallest normal */
	/* Round sig * 2^(e - 52) to a multiple of the quantum 2^q of x's
	 * binade (of the subnormals below emin): drop `shift` low bits of
	 * sig, ties to even. */
	int q = (e < emin ? emin : e) - f->mbits;
	int shift = q - e + 52;
	if (shift >= 54)
		return sign; /* below half the smallest subnormal */
	uint64_t r = sig >> shift, rem = sig & ((1ull << shift) - 1);
	uint64_t half = 1ull << (shift - 1);
	if (rem > half || (rem == half && (r & 1)))
		r++;
	if (r == 0)
		return sign;
	if (r == 2ull << f->mbits) { /* rounded up into the next binade */
		r >>= 1;
		q++;
	}
	uint32_t field = 0, mant = (uint32_t)r;
	if (r >= 1ull << f->mbits) {
		long long fe = (long long)q + f->mbits + bias;
		if (fe > (long long)exp_ones)
			return sign | inf;
		field = (uint32_t)fe;
		mant = (uint32_t)(r - (1ull << f->mbits));
	}
	if (f->finite_only) {
		if (field == exp_ones && mant == mant_ones)
			return sign | nan;
	} else if (field >= exp_ones) {
		return sign | inf;
	}
	return sign | field << f->mbits | mant;
}

/* 2^e for e in the range of normal doubles. */
static double
pow2(int e)
{
	uint64_t b = (uint64_t)(e + 1023) << 52;
	double v;
	memcpy(&v, &b, sizeof v);
	return v;
}

static double
decode_float(const FloatFormat *f, uint32_t bits)
{
	uint32_t mant_ones = (1u << f->mbits) - 1;
	uint32_t exp_ones = (1u << f->ebits) - 1;
	uint64_t neg = (uint64_t)((bits >> (f->ebits + f->mbits)) & 1) << 63;
	uint32_t field = (bits >> f->mbits) & exp_ones;
	uint32_t mant = bits & mant_ones;
	int bias = (1 << (f->ebits - 1)) - 1;
	uint64_t d;
	if (field == exp_ones && (!f->finite_only || mant == mant_ones)) {
		d = neg | 0x7ffull << 52;
		if (mant)
			d |= 1ull << 51;
	} else if (field == 0) {
		double v = (double)mant * pow2(1 - bias - f->mbits);
		memcpy(&d, &v, sizeof d);
		d |= neg;
	} else {
		d = neg | (uint64_t)((int)field - bias + 1023) << 52 |
		    (uint64_t)mant << (52 - f->mbits);
	}
	double v;
	memcpy(&v, &d, sizeof v);
	return v;
}

uint16_t
tilec_f16_from_double(double x)
{
	return (uint16_t)encode_float(&fmt_f16, x);
}

double
tilec_f16_to_double(uint16_t h)
{
	return decode_float(&fmt_f16, h);
}

uint16_t
tilec_bf16_from_double(double x)
{
	return (uint16_t)encode_float(&fmt_bf16, x);
}

double
tilec_bf16_to_double(uint16_t h)
{
	return decode_float(&fmt_bf16, h);
}

uint8_t
tilec_fp8e4m3_from_double(double x)
{
	return (uint8_t)encode_float(&fmt_e4m3, x);
}

double
tilec_fp8e4m3_to_double(uint8_t h)
{
	return decode_float(&fmt_e4m3, h);
}

uint8_t
tilec_fp8e5m2_from_double(double x)
{
	return (uint8_t)encode_float(&fmt_e5m2, x);
}

double
tilec_fp8e5m2_to_double(uint8_t h)
{
	return decode_float(&fmt_e5m2, h);
}
