/*
 * jit_nvrtc.c - CUDA C++ to cubin through NVRTC, loaded with dlopen.
 *
 * Input: generated CUDA source and the headers it includes (in memory),
 * an architecture ("sm_90a") and extra flags.  Output: a cubin file for
 * that architecture, or TILEC_ERR_COMPILE with NVRTC's log.  A compile is
 *
 *     nvrtcCreateProgram(source, name, headers)
 *     nvrtcCompileProgram(--gpu-architecture=ARCH -std=c++17
 *                         -default-device [-I CUDA_INCLUDE] FLAGS...)
 *     nvrtcGetCUBIN
 *
 * Fast math is off unless the flags ask for it.  NVRTC has no system
 * include path; the generated helpers include <cuda_fp16.h> and
 * <cuda_bf16.h>, so the toolkit's include directory (found once, next to
 * libnvrtc or under $CUDA_HOME, $CUDA_PATH, /usr/local/cuda, /usr) is
 * passed with -I.  No CUDA header is needed to build this file: the few
 * types and entry points used are declared here.  The library is never
 * linked; its absence is TILEC_ERR_UNAVAILABLE naming every file tried.
 */
#define _GNU_SOURCE /* dladdr */
#include "runtime_int.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* NVRTC's types, as its ABI has them. */
typedef int nvrtcResult; /* NVRTC_SUCCESS is 0 */
typedef struct _nvrtcProgram *nvrtcProgram;

#define NVRTC_SUCCESS 0

/* The options every compile gets, before the context's and the
 * compile's flags (which may override them). */
static const char *const fixed_options[] = { "-std=c++17", "-default-device" };

struct TilecNvrtc {
	void *lib;            /* the dlopen handle */
	char path[4096];      /* the library as loaded (for messages) */
	int major, minor;     /* nvrtcVersion */
	char include[4096];   /* directory with cuda_fp16.h, or "" */
	char *identity;       /* for cache keys */
	/* The entry points used. */
	nvrtcResult (*version)(int *major, int *minor);
	const char *(*error_string)(nvrtcResult r);
	nvrtcResult (*create)(nvrtcProgram *prog, const char *src,
			      const char *name, int nheaders,
			      const char *const *headers,
			      const char *const *include_names);
	nvrtcResult (*compile)(nvrtcProgram prog, int noptions,
			       const char *const *options);
	nvrtcResult (*log_size)(nvrtcProgram prog, size_t *size);
	nvrtcResult (*log)(nvrtcProgram prog, char *log);
	nvrtcResult (*cubin_size)(nvrtcProgram prog, size_t *size);
	nvrtcResult (*cubin)(nvrtcProgram prog, char *cubin);
	nvrtcResult (*destroy)(nvrtcProgram *prog);
};

/* --- Loading ---------------------------------------------------------------- */

/* Append dir/name to the candidate list (if dir is set). */
static void
add_candidate(char **list, int *n, int max, const char *dir, const char *name)
{
	if (*n >= max || (dir && !*dir))
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

#define MAX_CANDIDATES 32

/* Every file name tried for libnvrtc, in order. */
static int
nvrtc_candidates(char **list)
{
	static const char *const sonames[] = {
		"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12",
	};
	int n = 0;
	const char *env = getenv("TILEC_NVRTC");
	if (env && *env)
		add_candidate(list, &n, MAX_CANDIDATES, NULL, env);
	for (size_t i = 0; i < 3; i++)
		add_candidate(list, &n, MAX_CANDIDATES, NULL, sonames[i]);
	const char *roots[] = { getenv("CUDA_HOME"), getenv("CUDA_PATH"),
				"/usr/local/cuda" };
	for (size_t r = 0; r < 3; r++) {
		if (!roots[r] || !*roots[r])
			continue;
		char dir[4096];
		snprintf(dir, sizeof dir, "%s/lib64", roots[r]);
		for (size_t i = 0; i < 3; i++)
			add_candidate(list, &n, MAX_CANDIDATES, dir, sonames[i]);
	}
	return n;
}

static bool
file_exists(const char *dir, const char *name)
{
	char path[4096];
	struct stat st;
	if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
		return false;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The toolkit's include directory: where cuda_fp16.h is.  Looked for
 * next to the loaded library first, so headers and compiler agree. */
static void
find_include(TilecNvrtc *nv)
{
	char libdir[4096] = "";
	Dl_info info;
	void *addr;
	memcpy(&addr, &nv->create, sizeof addr);
	if (dladdr(addr, &info) && info.dli_fname) {
		char *real = realpath(info.dli_fname, NULL);
		const char *p = real ? real : info.dli_fname;
		snprintf(nv->path, sizeof nv->path, "%s", p);
		const char *slash = strrchr(p, '/');
		if (slash && (size_t)(slash - p) < sizeof libdir) {
			memcpy(libdir, p, (size_t)(slash - p));
			libdir[slash - p] = '\0';
		}
		free(real);
	}
	/* lib64/ and lib/ sit next to include/, and so do the toolkit's
	 * targets/<triple>/lib and include. */
	const char *roots[] = { getenv("CUDA_HOME"), getenv("CUDA_PATH"),
				"/usr/local/cuda", "/usr" };
	char cand[4096];
	nv->include[0] = '\0';
	for (int i = -1; i < 4; i++) {
		if (i < 0 && !libdir[0])
			continue;
		if (i >= 0 && (!roots[i] || !*roots[i]))
			continue;
		if (i < 0)
			snprintf(cand, sizeof cand, "%s/../include", libdir);
		else
			snprintf(cand, sizeof cand, "%s/include", roots[i]);
		if (!file_exists(cand, "cuda_fp16.h"))
			continue;
		char *real = realpath(cand, NULL);
		snprintf(nv->include, sizeof nv->include, "%s",
			 real ? real : cand);
		free(real);
		return;
	}
}

/* Resolve one entry point; false if the library lacks it. */
static bool
resolve(void *lib, const char *name, void *fn_ptr, TilecStr *missing)
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
tilec_rt_nvrtc_open(tilec_context *ctx, TilecNvrtc **out)
{
	*out = NULL;
	TilecNvrtc *nv = calloc(1, sizeof *nv);
	if (!nv)
		return tilec_rt_fail(ctx, TILEC_ERR_NOMEM, "out of memory");
	char *cand[MAX_CANDIDATES];
	int ncand = nvrtc_candidates(cand);
	TilecStr tried = { 0 };
	for (int i = 0; i < ncand && !nv->lib; i++) {
		/* Never unloaded: NVRTC keeps process-wide state. */
		nv->lib = dlopen(cand[i], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
		if (!nv->lib)
			tilec_rt_str_printf(&tried, "%s%s", i ? ", " : "",
					    cand[i]);
		else
			snprintf(nv->path, sizeof nv->path, "%s", cand[i]);
	}
	for (int i = 0; i < ncand; i++)
		free(cand[i]);
	if (!nv->lib) {
		tilec_status st = tilec_rt_fail(
			ctx, TILEC_ERR_UNAVAILABLE,
			"NVRTC is not available: cannot load libnvrtc (tried "
			"%s); install the CUDA toolkit or set TILEC_NVRTC to "
			"the library's path",
			tilec_rt_str_cstr(&tried));
		tilec_rt_str_free(&tried);
		free(nv);
		return st;
	}
	tilec_rt_str_free(&tried);

	TilecStr missing = { 0 };
	resolve(nv->lib, "nvrtcVersion", &nv->version, &missing);
	resolve(nv->lib, "nvrtcGetErrorString", &nv->error_string, &missing);
	resolve(nv->lib, "nvrtcCreateProgram", &nv->create, &missing);
	resolve(nv->lib, "nvrtcCompileProgram", &nv->compile, &missing);
	resolve(nv->lib, "nvrtcGetProgramLogSize", &nv->log_size, &missing);
	resolve(nv->lib, "nvrtcGetProgramLog", &nv->log, &missing);
	resolve(nv->lib, "nvrtcGetCUBINSize", &nv->cubin_size, &missing);
	resolve(nv->lib, "nvrtcGetCUBIN", &nv->cubin, &missing);
	resolve(nv->lib, "nvrtcDestroyProgram", &nv->destroy, &missing);
	if (missing.len || missing.oom) {
		tilec_status st = tilec_rt_fail(
			ctx, TILEC_ERR_UNAVAILABLE,
			"%s is too old for tilec (NVRTC 11.1 or later is "
			"needed): it lacks %s",
			nv->path, tilec_rt_str_cstr(&missing));
		tilec_rt_str_free(&missing);
		tilec_rt_nvrtc_close(nv);
		return st;
	}
	nvrtcResult r = nv->version(&nv->major, &nv->minor);
	if (r != NVRTC_SUCCESS) {
		tilec_status st = tilec_rt_fail(ctx, TILEC_ERR_UNAVAILABLE,
						"%s: nvrtcVersion failed (%s)",
						nv->path, nv->error_string(r));
		tilec_rt_nvrtc_close(nv);
		return st;
	}
	find_include(nv);

	TilecStr id = { 0 };
	tilec_rt_str_printf(&id, "nvrtc %d.%d; options", nv->major, nv->minor);
	for (size_t i = 0; i < sizeof fixed_options / sizeof *fixed_options; i++)
		tilec_rt_str_printf(&id, " %s", fixed_options[i]);
	tilec_rt_str_printf(&id, "; include %s", nv->include);
	if (id.oom) {
		tilec_rt_str_free(&id);
		tilec_rt_nvrtc_close(nv);
		return tilec_rt_fail(ctx, TILEC_ERR_NOMEM, "out of memory");
	}
	nv->identity = id.data;
	*out = nv;
	return TILEC_OK;
}

void
tilec_rt_nvrtc_close(TilecNvrtc *nv)
{
	if (!nv)
		return;
	if (nv->lib)
		dlclose(nv->lib);
	free(nv->identity);
	free(nv);
}

const char *
tilec_rt_nvrtc_identity(const TilecNvrtc *nv)
{
	return nv->identity;
}

bool
tilec_rt_nvrtc_arch_ok(const char *arch)
{
	if (!arch || strncmp(arch, "sm_", 3) != 0)
		return false;
	const char *p = arch + 3;
	if (!(*p >= '0' && *p <= '9'))
		return false;
	while (*p >= '0' && *p <= '9')
		p++;
	if (*p == 'a' || *p == 'f')
		p++;
	return *p == '\0';
}

/* --- Compiling --------------------------------------------------------------- */

/* Everything one compile allocates, freed together. */
typedef struct NvrtcCompile {
	char **header_text;   /* NUL-terminated copies of the headers */
	const char **header_name; /* their include names */
	const char **options; /* the option vector */
	char *source;         /* NUL-terminated copy of the source */
	char *cubin;          /* the result */
	nvrtcProgram prog;    /* NULL until created */
	int nheaders;         /* entries in header_text, header_name */
} NvrtcCompile;

static void
compile_free(TilecNvrtc *nv, NvrtcCompile *c)
{
	for (int i = 0; c->header_text && i < c->nheaders; i++)
		free(c->header_text[i]);
	free(c->header_text);
	free(c->header_name);
	free(c->options);
	free(c->source);
	free(c->cubin);
	if (c->prog)
		nv->destroy(&c->prog);
}

/* Append the program's log (if any) to the context's error. */
static void
append_log(tilec_context *ctx, TilecNvrtc *nv, nvrtcProgram prog)
{
	size_t n = 0;
	if (nv->log_size(prog, &n) != NVRTC_SUCCESS || n <= 1)
		return;
	char *log = malloc(n);
	if (!log)
		return;
	if (nv->log(prog, log) == NVRTC_SUCCESS) {
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
write_cubin(tilec_context *ctx, const char *path, const char *data,
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
tilec_rt_nvrtc_compile(tilec_context *ctx, TilecNvrtc *nv,
		       const TilecCompileJob *job, double *seconds)
{
	*seconds = 0;
	if (!tilec_rt_nvrtc_arch_ok(job->arch))
		return tilec_rt_fail(ctx, TILEC_ERR_INVALID,
				     "'%s' is not a CUDA architecture NVRTC "
				     "can build a cubin for: use sm_80, sm_90a, "
				     "...",
				     job->arch);
	NvrtcCompile c = { 0 };
	c.nheaders = job->nheaders;
	size_t nh = (size_t)job->nheaders + 1;
	size_t nfixed = sizeof fixed_options / sizeof *fixed_options;
	size_t nopt = 1 + nfixed + 2 + (size_t)job->nflags;
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
	char arch[64];
	snprintf(arch, sizeof arch, "--gpu-architecture=%s", job->arch);
	int n = 0;
	if (ok) {
		c.options[n++] = arch;
		for (size_t i = 0; i < nfixed; i++)
			c.options[n++] = fixed_options[i];
		if (nv->include[0]) {
			c.options[n++] = "-I";
			c.options[n++] = nv->include;
		}
		for (int i = 0; i < job->nflags; i++)
			c.options[n++] = job->flags[i];
	}
	if (!ok) {
		compile_free(nv, &c);
		return tilec_rt_fail(ctx, TILEC_ERR_NOMEM, "out of memory");
	}

	double t0 = tilec_now();
	nvrtcResult r = nv->create(&c.prog, c.source, job->name, c.nheaders,
				   (const char *const *)c.header_text,
				   c.header_name);
	if (r != NVRTC_SUCCESS) {
		c.prog = NULL;
		tilec_status st = tilec_rt_fail(ctx, TILEC_ERR_COMPILE,
						"nvrtcCreateProgram failed for %s: "
						"%s",
						job->name, nv->error_string(r));
		compile_free(nv, &c);
		return st;
	}
	r = nv->compile(c.prog, n, c.options);
	*seconds = tilec_now() - t0;
	if (r != NVRTC_SUCCESS) {
		tilec_rt_fail(ctx, TILEC_ERR_COMPILE,
			      "NVRTC %d.%d failed compiling %s for %s (%s)",
			      nv->major, nv->minor, job->name, job->arch,
			      nv->error_string(r));
		static const char hint[] = "; cuda_fp16.h was not found (set "
					   "CUDA_HOME to the CUDA toolkit)";
		if (!nv->include[0])
			tilec_rt_fail_append(ctx, hint, sizeof hint - 1);
		append_log(ctx, nv, c.prog);
		compile_free(nv, &c);
		return TILEC_ERR_COMPILE;
	}
	size_t size = 0;
	r = nv->cubin_size(c.prog, &size);
	if (r == NVRTC_SUCCESS && size > 0 && (c.cubin = malloc(size)))
		r = nv->cubin(c.prog, c.cubin);
	if (r != NVRTC_SUCCESS || !c.cubin) {
		tilec_status st = tilec_rt_fail(ctx, TILEC_ERR_COMPILE,
						"NVRTC produced no cubin for %s "
						"(%s)",
						job->arch,
						r != NVRTC_SUCCESS
							? nv->error_string(r)
							: "empty result");
		compile_free(nv, &c);
		return st;
	}
	tilec_status st = write_cubin(ctx, job->out_path, c.cubin, size);
	compile_free(nv, &c);
	return st;
}
