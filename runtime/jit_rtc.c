/*
 * jit_rtc.c - what NVRTC (jit_nvrtc.c) and hiprtc (jit_hiprtc.c) share.
 *
 * Both are runtime compilers with the same shape of API under two
 * prefixes: create a program from a source and in-memory headers, compile
 * it with an option vector, read the log or the object.  A TilecRtcTarget
 * names one of them (entry points, option spellings, the words of its
 * messages); this file loads the library from a list of candidates,
 * resolves the entry points into a TilecRtc, and runs a compile to an
 * object file.  What differs stays with the target: where the library is
 * looked for, NVRTC's include directory, hiprtc's ISA check against
 * comgr, and the identity string that enters cache keys.
 */
#define _GNU_SOURCE /* dladdr */
#include "runtime_int.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RTC_SUCCESS 0 /* NVRTC_SUCCESS, HIPRTC_SUCCESS */

/* --- Loading ---------------------------------------------------------------- */

void
tilec_rt_rtc_add_candidate(char **list, int *n, const char *dir,
			   const char *name)
{
	if (*n >= TILEC_RT_RTC_MAX_CANDIDATES || (dir && !*dir))
		return;
	char buf[4096];
	if (dir)
		snprintf(buf, sizeof buf, "%s/%s", dir, name);
	else
		snprintf(buf, sizeof buf, "%s", name);
	for (int i = 0; i < *n; i++)
		if (strcmp(list[i], buf) == 0)
			return;
	list[*n] = strdup(buf);
	if (list[*n])
		++*n;
}

bool
tilec_rt_rtc_resolve(void *lib, const char *name, void *fn_ptr,
		     TilecStr *missing)
{
	void *sym = dlsym(lib, name);
	if (!sym) {
		tilec_rt_str_printf(missing, "%s%s", missing->len ? ", " : "",
				    name);
		return false;
	}
	memcpy(fn_ptr, &sym, sizeof sym);
	return true;
}

tilec_status
tilec_rt_rtc_load(tilec_context *ctx, TilecRtc *rc, char **cand, int ncand)
{
	const TilecRtcTarget *t = rc->t;
	TilecStr tried = { 0 };
	for (int i = 0; i < ncand && !rc->lib; i++) {
		/* Never unloaded: the compilers (and the HIP runtime that
		 * carries hiprtc) keep process-wide state and threads. */
		rc->lib = dlopen(cand[i], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
		if (rc->lib && t->required && !dlsym(rc->lib, t->required)) {
			dlclose(rc->lib); /* a library without the compiler */
			rc->lib = NULL;
		}
		if (!rc->lib)
			tilec_rt_str_printf(&tried, "%s%s", tried.len ? ", " : "",
					    cand[i]);
		else if (t->path_from_candidate)
			snprintf(rc->path, sizeof rc->path, "%s", cand[i]);
	}
	for (int i = 0; i < ncand; i++)
		free(cand[i]);
	if (!rc->lib) {
		tilec_status st = tilec_rt_fail(
			ctx, TILEC_ERR_UNAVAILABLE,
			"%s is not available: cannot load %s (tried %s); "
			"install %s or set %s to the library's path",
			t->name, t->library, tilec_rt_str_cstr(&tried),
			t->install, t->env);
		tilec_rt_str_free(&tried);
		return st;
	}
	tilec_rt_str_free(&tried);
	return TILEC_OK;
}

void
tilec_rt_rtc_resolve_api(TilecRtc *rc, TilecStr *missing)
{
	TilecRtcApi *a = &rc->api;
	const char *const *s = rc->t->symbols;
	tilec_rt_rtc_resolve(rc->lib, s[TILEC_RTC_VERSION], &a->version,
			     missing);
	tilec_rt_rtc_resolve(rc->lib, s[TILEC_RTC_ERROR_STRING],
			     &a->error_string, missing);
	tilec_rt_rtc_resolve(rc->lib, s[TILEC_RTC_CREATE], &a->create, missing);
	tilec_rt_rtc_resolve(rc->lib, s[TILEC_RTC_COMPILE], &a->compile,
			     missing);
	tilec_rt_rtc_resolve(rc->lib, s[TILEC_RTC_LOG_SIZE], &a->log_size,
			     missing);
	tilec_rt_rtc_resolve(rc->lib, s[TILEC_RTC_LOG], &a->log, missing);
	tilec_rt_rtc_resolve(rc->lib, s[TILEC_RTC_CODE_SIZE], &a->code_size,
			     missing);
	tilec_rt_rtc_resolve(rc->lib, s[TILEC_RTC_CODE], &a->code, missing);
	tilec_rt_rtc_resolve(rc->lib, s[TILEC_RTC_DESTROY], &a->destroy,
			     missing);
}

bool
tilec_rt_rtc_real_path(TilecRtc *rc, const void *slot)
{
	Dl_info info;
	void *addr;
	memcpy(&addr, slot, sizeof addr);
	if (!addr || !dladdr(addr, &info) || !info.dli_fname)
		return false;
	char *real = realpath(info.dli_fname, NULL);
	snprintf(rc->path, sizeof rc->path, "%s", real ? real : info.dli_fname);
	free(real);
	return true;
}

tilec_status
tilec_rt_rtc_check(tilec_context *ctx, TilecRtc *rc, TilecStr *missing)
{
	const TilecRtcTarget *t = rc->t;
	if (missing->len || missing->oom) {
		tilec_status st = tilec_rt_fail(
			ctx, TILEC_ERR_UNAVAILABLE,
			"%s is too old for tilec%s: it lacks %s", rc->path,
			t->too_old, tilec_rt_str_cstr(missing));
		tilec_rt_str_free(missing);
		return st;
	}
	int r = rc->api.version(&rc->major, &rc->minor);
	if (r != RTC_SUCCESS)
		return tilec_rt_fail(ctx, TILEC_ERR_UNAVAILABLE,
				     "%s: %s failed (%s)", rc->path,
				     t->symbols[TILEC_RTC_VERSION],
				     rc->api.error_string(r));
	return TILEC_OK;
}

void
tilec_rt_rtc_close(TilecRtc *rc)
{
	if (!rc)
		return;
	if (rc->t->fini)
		rc->t->fini(rc);
	if (rc->lib)
		dlclose(rc->lib);
	free(rc->identity);
	free(rc);
}

/* --- Compiling --------------------------------------------------------------- */

/* Everything one compile allocates, freed together. */
typedef struct RtcCompile {
	char **header_text;   /* NUL-terminated copies of the headers */
	const char **header_name; /* their include names */
	const char **options; /* the option vector */
	char *source;         /* NUL-terminated copy of the source */
	char *code;           /* the result */
	TilecRtcProgram prog; /* NULL until created */
	int nheaders;         /* entries in header_text, header_name */
} RtcCompile;

static void
compile_free(const TilecRtc *rc, RtcCompile *c)
{
	for (int i = 0; c->header_text && i < c->nheaders; i++)
		free(c->header_text[i]);
	free(c->header_text);
	free(c->header_name);
	free(c->options);
	free(c->source);
	free(c->code);
	if (c->prog)
		rc->api.destroy(&c->prog);
}

/* Append the program's log (if any) to the context's error. */
static void
append_log(tilec_context *ctx, const TilecRtc *rc, TilecRtcProgram prog)
{
	size_t n = 0;
	if (rc->api.log_size(prog, &n) != RTC_SUCCESS || n <= 1)
		return;
	char *log = malloc(n + 1);
	if (!log)
		return;
	if (rc->api.log(prog, log) == RTC_SUCCESS) {
		log[n] = '\0';
		tilec_rt_fail_append(ctx, ":\n", 2);
		tilec_rt_fail_append(ctx, log, strnlen(log, n));
	}
	free(log);
}

static char *
dup_text(const char *text, size_t len)
{
	char *s = malloc(len + 1);
	if (s) {
		if (len)
			memcpy(s, text, len);
		s[len] = '\0';
	}
	return s;
}

static tilec_status
write_object(tilec_context *ctx, const char *path, const char *data,
	     size_t len)
{
	FILE *f = fopen(path, "wb");
	bool ok = f && fwrite(data, 1, len, f) == len;
	if (f && fclose(f) != 0)
		ok = false;
	if (!ok)
		return tilec_rt_fail(ctx, TILEC_ERR_IO, "cannot write %s", path);
	return TILEC_OK;
}

tilec_status
tilec_rt_rtc_compile(tilec_context *ctx, const TilecRtc *rc,
		     const TilecCompileJob *job, const char *arch_option,
		     const char *const *extra, int nextra, const char *hint,
		     double *seconds)
{
	const TilecRtcTarget *t = rc->t;
	RtcCompile c = { 0 };
	c.nheaders = job->nheaders;
	size_t nh = (size_t)job->nheaders + 1;
	size_t nopt = 1 + t->nfixed + (size_t)nextra + (size_t)job->nflags;
	c.header_text = calloc(nh, sizeof *c.header_text);
	c.header_name = calloc(nh, sizeof *c.header_name);
	c.options = calloc(nopt, sizeof *c.options);
	c.source = dup_text(job->source, job->source_len);
	bool ok = c.header_text && c.header_name && c.options && c.source;
	for (int i = 0; ok && i < job->nheaders; i++) {
		c.header_name[i] = job->headers[i].name;
		c.header_text[i] = dup_text(job->headers[i].text,
					    job->headers[i].len);
		ok = c.header_text[i] != NULL;
	}
	int n = 0;
	if (ok) {
		c.options[n++] = arch_option;
		for (size_t i = 0; i < t->nfixed; i++)
			c.options[n++] = t->fixed_options[i];
		for (int i = 0; i < nextra; i++)
			c.options[n++] = extra[i];
		for (int i = 0; i < job->nflags; i++)
			c.options[n++] = job->flags[i];
	}
	if (!ok) {
		compile_free(rc, &c);
		return tilec_rt_fail(ctx, TILEC_ERR_NOMEM, "out of memory");
	}

	double t0 = tilec_now();
	int r = rc->api.create(&c.prog, c.source, job->name, c.nheaders,
			       (const char *const *)c.header_text,
			       c.header_name);
	if (r != RTC_SUCCESS) {
		c.prog = NULL;
		tilec_status st = tilec_rt_fail(ctx, TILEC_ERR_COMPILE,
						"%s failed for %s: %s",
						t->symbols[TILEC_RTC_CREATE],
						job->name,
						rc->api.error_string(r));
		compile_free(rc, &c);
		return st;
	}
	r = rc->api.compile(c.prog, n, c.options);
	*seconds = tilec_now() - t0;
	if (r != RTC_SUCCESS) {
		tilec_rt_fail(ctx, TILEC_ERR_COMPILE,
			      "%s failed compiling %s for %s (%s)", rc->who,
			      job->name, job->arch, rc->api.error_string(r));
		if (hint)
			tilec_rt_fail_append(ctx, hint, strlen(hint));
		append_log(ctx, rc, c.prog);
		compile_free(rc, &c);
		return TILEC_ERR_COMPILE;
	}
	size_t size = 0;
	r = rc->api.code_size(c.prog, &size);
	if (r == RTC_SUCCESS && size > 0 && (c.code = malloc(size)))
		r = rc->api.code(c.prog, c.code);
	if (r != RTC_SUCCESS || !c.code) {
		tilec_status st = tilec_rt_fail(ctx, TILEC_ERR_COMPILE,
						"%s produced no %s for %s (%s)",
						t->name, t->object, job->arch,
						r != RTC_SUCCESS
							? rc->api.error_string(r)
							: "empty result");
		compile_free(rc, &c);
		return st;
	}
	tilec_status st = write_object(ctx, job->out_path, c.code, size);
	compile_free(rc, &c);
	return st;
}
