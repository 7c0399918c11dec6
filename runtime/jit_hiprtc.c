/*
 * jit_hiprtc.c - HIP C++ to an AMD GPU code object through hiprtc, loaded
 * with dlopen.
 *
 * Input: generated HIP source and the headers it includes (in memory), an
 * architecture ("gfx90a", or a target ID such as "gfx90a:xnack-") and extra
 * flags.  Output: a code object (an ELF shared object for amdgcn, what
 * hipModuleLoadData takes) for that architecture, or TILEC_ERR_COMPILE with
 * hiprtc's log.  A compile is
 *
 *     hiprtcCreateProgram(source, name, headers)
 *     hiprtcCompileProgram(--gpu-architecture=ARCH -O3 -std=c++17 FLAGS...)
 *     hiprtcGetCode
 *
 * hiprtc lives in libhiprtc (ROCm 6 and later) or inside libamdhip64
 * (ROCm 5, and Debian's packages); the first that exports the entry points
 * is used.  hiprtc brings its own HIP headers, so no include directory is
 * needed.  Before compiling, the architecture is checked against the ISAs
 * that AMD's code object manager (libamd_comgr, which hiprtc compiles
 * with) knows: some hiprtc releases abort the process on an ISA they do
 * not know, and a refusal with the list of known ones is more useful
 * anyway.  Nothing is linked and no HIP header is needed to build this
 * file; the library's absence is TILEC_ERR_UNAVAILABLE naming every file
 * tried.
 */
#define _GNU_SOURCE /* dladdr */
#include "runtime_int.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* hiprtc's types, as its ABI has them. */
typedef int hiprtcResult; /* HIPRTC_SUCCESS is 0 */
typedef struct _hiprtcProgram *hiprtcProgram;

#define HIPRTC_SUCCESS 0

/* The options every compile gets, before the context's and the
 * compile's flags (which may override them). */
static const char *const fixed_options[] = { "-O3", "-std=c++17" };

#define MAX_CANDIDATES 32
#define MAX_ISAS 128

struct TilecHiprtc {
	void *lib;            /* the dlopen handle of hiprtc's library */
	char path[4096];      /* that library, resolved (for messages, keys) */
	int major, minor;     /* hiprtcVersion */
	/* The ISAs libamd_comgr knows ("gfx90a"), nisas = -1 when comgr
	 * could not be asked (then hiprtc alone decides). */
	char *isas[MAX_ISAS];
	int nisas;
	char comgr[64];       /* "comgr 2.4", or "" */
	char *identity;       /* for cache keys */
	/* The entry points used. */
	hiprtcResult (*version)(int *major, int *minor);
	const char *(*error_string)(hiprtcResult r);
	hiprtcResult (*create)(hiprtcProgram *prog, const char *src,
			       const char *name, int nheaders,
			       const char *const *headers,
			       const char *const *include_names);
	hiprtcResult (*compile)(hiprtcProgram prog, int noptions,
				const char *const *options);
	hiprtcResult (*log_size)(hiprtcProgram prog, size_t *size);
	hiprtcResult (*log)(hiprtcProgram prog, char *log);
	hiprtcResult (*code_size)(hiprtcProgram prog, size_t *size);
	hiprtcResult (*code)(hiprtcProgram prog, char *code);
	hiprtcResult (*destroy)(hiprtcProgram *prog);
};

/* --- Loading ---------------------------------------------------------------- */

static void
add_candidate(char **list, int *n, const char *dir, const char *name)
{
	if (*n >= MAX_CANDIDATES || (dir && !*dir))
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

/* Every file name tried for `sonames`, in order: `env` if set, each name
 * on the library path, then under $ROCM_PATH, $HIP_PATH and /opt/rocm. */
static int
candidates(char **list, const char *env, const char *const *sonames,
	   size_t nsonames)
{
	int n = 0;
	const char *e = env ? getenv(env) : NULL;
	if (e && *e)
		add_candidate(list, &n, NULL, e);
	for (size_t i = 0; i < nsonames; i++)
		add_candidate(list, &n, NULL, sonames[i]);
	const char *roots[] = { getenv("ROCM_PATH"), getenv("HIP_PATH"),
				"/opt/rocm" };
	for (size_t r = 0; r < 3; r++) {
		if (!roots[r] || !*roots[r])
			continue;
		char dir[4096];
		snprintf(dir, sizeof dir, "%s/lib", roots[r]);
		for (size_t i = 0; i < nsonames; i++)
			add_candidate(list, &n, dir, sonames[i]);
	}
	return n;
}

/* hiprtc's library: libhiprtc where ROCm ships it apart, else the HIP
 * runtime, which carried hiprtc before ROCm 6. */
static const char *const hiprtc_sonames[] = {
	"libhiprtc.so", "libhiprtc.so.6", "libamdhip64.so", "libamdhip64.so.6",
	"libamdhip64.so.5",
};

static const char *const comgr_sonames[] = {
	"libamd_comgr.so", "libamd_comgr.so.3", "libamd_comgr.so.2",
};

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

/* The ISA names libamd_comgr knows, as "gfx90a" (the part of
 * "amdgcn-amd-amdhsa--gfx90a" after the dashes), and its version. */
static void
load_isas(TilecHiprtc *h)
{
	h->nisas = -1;
	char *cand[MAX_CANDIDATES];
	int ncand = candidates(cand, "TILEC_COMGR", comgr_sonames,
			       sizeof comgr_sonames / sizeof *comgr_sonames);
	void *lib = NULL;
	for (int i = 0; i < ncand && !lib; i++)
		lib = dlopen(cand[i], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	for (int i = 0; i < ncand; i++)
		free(cand[i]);
	if (!lib)
		return;
	int (*count)(size_t *) = NULL;
	int (*name)(size_t, const char **) = NULL;
	void (*version)(size_t *, size_t *) = NULL;
	TilecStr missing = { 0 };
	resolve(lib, "amd_comgr_get_isa_count", &count, &missing);
	resolve(lib, "amd_comgr_get_isa_name", &name, &missing);
	resolve(lib, "amd_comgr_get_version", &version, &missing);
	size_t n = 0;
	if (!missing.len && count(&n) == 0) {
		size_t major = 0, minor = 0;
		version(&major, &minor);
		snprintf(h->comgr, sizeof h->comgr, "comgr %zu.%zu", major, minor);
		h->nisas = 0;
		for (size_t i = 0; i < n && h->nisas < MAX_ISAS; i++) {
			const char *isa = NULL;
			if (name(i, &isa) != 0 || !isa)
				continue;
			const char *dashes = strstr(isa, "--");
			h->isas[h->nisas] = strdup(dashes ? dashes + 2 : isa);
			if (h->isas[h->nisas])
				h->nisas++;
		}
	}
	tilec_rt_str_free(&missing);
	dlclose(lib);
}

tilec_status
tilec_rt_hiprtc_open(tilec_context *ctx, TilecHiprtc **out)
{
	*out = NULL;
	TilecHiprtc *h = calloc(1, sizeof *h);
	if (!h)
		return tilec_rt_fail(ctx, TILEC_ERR_NOMEM, "out of memory");
	char *cand[MAX_CANDIDATES];
	int ncand = candidates(cand, "TILEC_HIPRTC", hiprtc_sonames,
			       sizeof hiprtc_sonames / sizeof *hiprtc_sonames);
	TilecStr tried = { 0 };
	for (int i = 0; i < ncand && !h->lib; i++) {
		/* Never unloaded: the HIP runtime keeps process-wide state
		 * and threads. */
		h->lib = dlopen(cand[i], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
		if (h->lib && !dlsym(h->lib, "hiprtcCompileProgram")) {
			dlclose(h->lib); /* the HIP runtime of ROCm 6: no hiprtc */
			h->lib = NULL;
		}
		if (!h->lib)
			tilec_rt_str_printf(&tried, "%s%s", tried.len ? ", " : "",
					    cand[i]);
	}
	for (int i = 0; i < ncand; i++)
		free(cand[i]);
	if (!h->lib) {
		tilec_status st = tilec_rt_fail(
			ctx, TILEC_ERR_UNAVAILABLE,
			"hiprtc is not available: cannot load a library with "
			"hiprtcCompileProgram (tried %s); install ROCm's hiprtc "
			"(Debian: libamdhip64-dev) or set TILEC_HIPRTC to the "
			"library's path",
			tilec_rt_str_cstr(&tried));
		tilec_rt_str_free(&tried);
		free(h);
		return st;
	}
	tilec_rt_str_free(&tried);

	TilecStr missing = { 0 };
	resolve(h->lib, "hiprtcVersion", &h->version, &missing);
	resolve(h->lib, "hiprtcGetErrorString", &h->error_string, &missing);
	resolve(h->lib, "hiprtcCreateProgram", &h->create, &missing);
	resolve(h->lib, "hiprtcCompileProgram", &h->compile, &missing);
	resolve(h->lib, "hiprtcGetProgramLogSize", &h->log_size, &missing);
	resolve(h->lib, "hiprtcGetProgramLog", &h->log, &missing);
	resolve(h->lib, "hiprtcGetCodeSize", &h->code_size, &missing);
	resolve(h->lib, "hiprtcGetCode", &h->code, &missing);
	resolve(h->lib, "hiprtcDestroyProgram", &h->destroy, &missing);
	/* The file the entry points come from, resolved: its name carries
	 * the full version (libamdhip64.so.5.2.21153). */
	Dl_info info;
	void *addr;
	memcpy(&addr, &h->compile, sizeof addr);
	if (h->compile && dladdr(addr, &info) && info.dli_fname) {
		char *real = realpath(info.dli_fname, NULL);
		snprintf(h->path, sizeof h->path, "%s",
			 real ? real : info.dli_fname);
		free(real);
	}
	if (missing.len || missing.oom) {
		tilec_status st = tilec_rt_fail(
			ctx, TILEC_ERR_UNAVAILABLE,
			"%s is too old for tilec: it lacks %s", h->path,
			tilec_rt_str_cstr(&missing));
		tilec_rt_str_free(&missing);
		tilec_rt_hiprtc_close(h);
		return st;
	}
	hiprtcResult r = h->version(&h->major, &h->minor);
	if (r != HIPRTC_SUCCESS) {
		tilec_status st = tilec_rt_fail(ctx, TILEC_ERR_UNAVAILABLE,
						"%s: hiprtcVersion failed (%s)",
						h->path, h->error_string(r));
		tilec_rt_hiprtc_close(h);
		return st;
	}
	load_isas(h);

	TilecStr id = { 0 };
	tilec_rt_str_printf(&id, "hiprtc %d.%d (%s); %s; options", h->major,
			    h->minor, h->path, h->comgr[0] ? h->comgr : "no comgr");
	for (size_t i = 0; i < sizeof fixed_options / sizeof *fixed_options; i++)
		tilec_rt_str_printf(&id, " %s", fixed_options[i]);
	if (id.oom) {
		tilec_rt_str_free(&id);
		tilec_rt_hiprtc_close(h);
		return tilec_rt_fail(ctx, TILEC_ERR_NOMEM, "out of memory");
	}
	h->identity = id.data;
	*out = h;
	return TILEC_OK;
}

void
tilec_rt_hiprtc_close(TilecHiprtc *h)
{
	if (!h)
		return;
	if (h->lib)
		dlclose(h->lib);
	for (int i = 0; i < h->nisas; i++)
		free(h->isas[i]);
	free(h->identity);
	free(h);
}

const char *
tilec_rt_hiprtc_identity(const TilecHiprtc *h)
{
	return h->identity;
}

bool
tilec_rt_hip_arch_ok(const char *arch)
{
	if (!arch || strncmp(arch, "gfx", 3) != 0)
		return false;
	const char *p = arch + 3;
	size_t n = 0;
	while ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')) {
		p++;
		n++;
	}
	if (n < 3 || n > 4)
		return false;
	/* Target features: ":sramecc+", ":xnack-" ... */
	while (*p == ':') {
		p++;
		size_t len = 0;
		while ((p[len] >= 'a' && p[len] <= 'z') ||
		       (p[len] >= '0' && p[len] <= '9'))
			len++;
		if (len == 0 || (p[len] != '+' && p[len] != '-'))
			return false;
		p += len + 1;
	}
	return *p == '\0';
}

/* Whether comgr knows the processor of `arch` (its part before ':');
 * true when comgr could not be asked. */
static bool
isa_known(const TilecHiprtc *h, const char *arch)
{
	if (h->nisas < 0)
		return true;
	size_t n = strcspn(arch, ":");
	for (int i = 0; i < h->nisas; i++)
		if (strncmp(h->isas[i], arch, n) == 0 &&
		    (h->isas[i][n] == '\0' || h->isas[i][n] == ':'))
			return true;
	return false;
}

/* --- Compiling --------------------------------------------------------------- */

/* Everything one compile allocates, freed together. */
typedef struct HiprtcCompile {
	char **header_text;   /* NUL-terminated copies of the headers */
	const char **header_name; /* their include names */
	const char **options; /* the option vector */
	char *source;         /* NUL-terminated copy of the source */
	char *code;           /* the result */
	hiprtcProgram prog;   /* NULL until created */
	int nheaders;         /* entries in header_text, header_name */
} HiprtcCompile;

static void
compile_free(TilecHiprtc *h, HiprtcCompile *c)
{
	for (int i = 0; c->header_text && i < c->nheaders; i++)
		free(c->header_text[i]);
	free(c->header_text);
	free(c->header_name);
	free(c->options);
	free(c->source);
	free(c->code);
	if (c->prog)
		h->destroy(&c->prog);
}

/* Append the program's log (if any) to the context's error. */
static void
append_log(tilec_context *ctx, TilecHiprtc *h, hiprtcProgram prog)
{
	size_t n = 0;
	if (h->log_size(prog, &n) != HIPRTC_SUCCESS || n <= 1)
		return;
	char *log = malloc(n + 1);
	if (!log)
		return;
	if (h->log(prog, log) == HIPRTC_SUCCESS) {
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
write_code(tilec_context *ctx, const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	bool ok = f && fwrite(data, 1, len, f) == len;
	if (f && fclose(f) != 0)
		ok = false;
	if (!ok)
		return tilec_rt_fail(ctx, TILEC_ERR_IO, "cannot write %s", path);
	return TILEC_OK;
}

/* The processors comgr knows, for messages: "gfx900, gfx906, ...". */
static void
known_list(const TilecHiprtc *h, TilecStr *s)
{
	for (int i = 0; i < h->nisas; i++)
		tilec_rt_str_printf(s, "%s%s", i ? ", " : "", h->isas[i]);
}

tilec_status
tilec_rt_hiprtc_compile(tilec_context *ctx, TilecHiprtc *h,
			const TilecCompileJob *job, double *seconds)
{
	*seconds = 0;
	if (!tilec_rt_hip_arch_ok(job->arch))
		return tilec_rt_fail(ctx, TILEC_ERR_INVALID,
				     "'%s' is not an AMD GPU architecture: use "
				     "gfx90a, gfx942, or a target ID such as "
				     "gfx90a:xnack-",
				     job->arch);
	if (!isa_known(h, job->arch)) {
		TilecStr known = { 0 };
		known_list(h, &known);
		tilec_status st = tilec_rt_fail(
			ctx, TILEC_ERR_UNAVAILABLE,
			"hiprtc %s (%s) does not know %.*s; it knows %s", h->path,
			h->comgr, (int)strcspn(job->arch, ":"), job->arch,
			tilec_rt_str_cstr(&known));
		tilec_rt_str_free(&known);
		return st;
	}
	HiprtcCompile c = { 0 };
	c.nheaders = job->nheaders;
	size_t nh = (size_t)job->nheaders + 1;
	size_t nfixed = sizeof fixed_options / sizeof *fixed_options;
	size_t nopt = 1 + nfixed + (size_t)job->nflags;
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
	char arch[128];
	snprintf(arch, sizeof arch, "--gpu-architecture=%s", job->arch);
	int n = 0;
	if (ok) {
		c.options[n++] = arch;
		for (size_t i = 0; i < nfixed; i++)
			c.options[n++] = fixed_options[i];
		for (int i = 0; i < job->nflags; i++)
			c.options[n++] = job->flags[i];
	}
	if (!ok) {
		compile_free(h, &c);
		return tilec_rt_fail(ctx, TILEC_ERR_NOMEM, "out of memory");
	}

	double t0 = tilec_now();
	hiprtcResult r = h->create(&c.prog, c.source, job->name, c.nheaders,
				   (const char *const *)c.header_text,
				   c.header_name);
	if (r != HIPRTC_SUCCESS) {
		c.prog = NULL;
		tilec_status st = tilec_rt_fail(ctx, TILEC_ERR_COMPILE,
						"hiprtcCreateProgram failed for "
						"%s: %s",
						job->name, h->error_string(r));
		compile_free(h, &c);
		return st;
	}
	r = h->compile(c.prog, n, c.options);
	*seconds = tilec_now() - t0;
	if (r != HIPRTC_SUCCESS) {
		tilec_rt_fail(ctx, TILEC_ERR_COMPILE,
			      "hiprtc (%s) failed compiling %s for %s (%s)",
			      h->path, job->name, job->arch, h->error_string(r));
		append_log(ctx, h, c.prog);
		compile_free(h, &c);
		return TILEC_ERR_COMPILE;
	}
	size_t size = 0;
	r = h->code_size(c.prog, &size);
	if (r == HIPRTC_SUCCESS && size > 0 && (c.code = malloc(size)))
		r = h->code(c.prog, c.code);
	if (r != HIPRTC_SUCCESS || !c.code) {
		tilec_status st = tilec_rt_fail(ctx, TILEC_ERR_COMPILE,
						"hiprtc produced no code object "
						"for %s (%s)",
						job->arch,
						r != HIPRTC_SUCCESS
							? h->error_string(r)
							: "empty result");
		compile_free(h, &c);
		return st;
	}
	tilec_status st = write_code(ctx, job->out_path, c.code, size);
	compile_free(h, &c);
	return st;
}
