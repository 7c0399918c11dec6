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
 * anyway.  Loading and compiling are jit_rtc.c's, driven by the table at
 * the end.  Nothing is linked and no HIP header is needed to build this
 * file; the library's absence is TILEC_ERR_UNAVAILABLE naming every file
 * tried.
 */
#include "runtime_int.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The options every compile gets, before the context's and the
 * compile's flags (which may override them). */
static const char *const fixed_options[] = { "-O3", "-std=c++17" };

#define MAX_ISAS 128

/* A loaded hiprtc. */
typedef struct Hiprtc {
	TilecRtc rc;          /* the library, its entry points, identity */
	/* The ISAs libamd_comgr knows ("gfx90a"), nisas = -1 when comgr
	 * could not be asked (then hiprtc alone decides). */
	char *isas[MAX_ISAS];
	int nisas;
	char comgr[64];       /* "comgr 2.4", or "" */
} Hiprtc;

/* --- Loading ---------------------------------------------------------------- */

/* Every file name tried for `sonames`, in order: `env` if set, each name
 * on the library path, then under $ROCM_PATH, $HIP_PATH and /opt/rocm. */
static int
candidates(char **list, const char *env, const char *const *sonames,
	   size_t nsonames)
{
	int n = 0;
	const char *e = env ? getenv(env) : NULL;
	if (e && *e)
		tilec_rt_rtc_add_candidate(list, &n, NULL, e);
	for (size_t i = 0; i < nsonames; i++)
		tilec_rt_rtc_add_candidate(list, &n, NULL, sonames[i]);
	const char *roots[] = { getenv("ROCM_PATH"), getenv("HIP_PATH"),
				"/opt/rocm" };
	for (size_t r = 0; r < 3; r++) {
		if (!roots[r] || !*roots[r])
			continue;
		char dir[4096];
		snprintf(dir, sizeof dir, "%s/lib", roots[r]);
		for (size_t i = 0; i < nsonames; i++)
			tilec_rt_rtc_add_candidate(list, &n, dir, sonames[i]);
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

/* The ISA names libamd_comgr knows, as "gfx90a" (the part of
 * "amdgcn-amd-amdhsa--gfx90a" after the dashes), and its version. */
static void
load_isas(Hiprtc *h)
{
	h->nisas = -1;
	char *cand[TILEC_RT_RTC_MAX_CANDIDATES];
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
	tilec_rt_rtc_resolve(lib, "amd_comgr_get_isa_count", &count, &missing);
	tilec_rt_rtc_resolve(lib, "amd_comgr_get_isa_name", &name, &missing);
	tilec_rt_rtc_resolve(lib, "amd_comgr_get_version", &version, &missing);
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

static tilec_status
hiprtc_open(tilec_context *ctx, TilecRtc **out)
{
	*out = NULL;
	Hiprtc *h = calloc(1, sizeof *h);
	if (!h)
		return tilec_rt_fail(ctx, TILEC_ERR_NOMEM, "out of memory");
	TilecRtc *rc = &h->rc;
	rc->t = &tilec_rt_hiprtc;
	char *cand[TILEC_RT_RTC_MAX_CANDIDATES];
	int ncand = candidates(cand, "TILEC_HIPRTC", hiprtc_sonames,
			       sizeof hiprtc_sonames / sizeof *hiprtc_sonames);
	tilec_status st = tilec_rt_rtc_load(ctx, rc, cand, ncand);
	if (st == TILEC_OK) {
		TilecStr missing = { 0 };
		tilec_rt_rtc_resolve_api(rc, &missing);
		/* The file the entry points come from, resolved: its name
		 * carries the full version (libamdhip64.so.5.2.21153). */
		tilec_rt_rtc_real_path(rc, &rc->api.compile);
		st = tilec_rt_rtc_check(ctx, rc, &missing);
	}
	if (st != TILEC_OK) {
		tilec_rt_rtc_close(rc);
		return st;
	}
	load_isas(h);
	snprintf(rc->who, sizeof rc->who, "hiprtc (%s)", rc->path);

	TilecStr id = { 0 };
	tilec_rt_str_printf(&id, "hiprtc %d.%d (%s); %s; options", rc->major,
			    rc->minor, rc->path,
			    h->comgr[0] ? h->comgr : "no comgr");
	for (size_t i = 0; i < sizeof fixed_options / sizeof *fixed_options; i++)
		tilec_rt_str_printf(&id, " %s", fixed_options[i]);
	if (id.oom) {
		tilec_rt_str_free(&id);
		tilec_rt_rtc_close(rc);
		return tilec_rt_fail(ctx, TILEC_ERR_NOMEM, "out of memory");
	}
	rc->identity = id.data;
	*out = rc;
	return TILEC_OK;
}

/* Free the ISA names. */
static void
hiprtc_fini(TilecRtc *rc)
{
	Hiprtc *h = (Hiprtc *)rc;
	for (int i = 0; i < h->nisas; i++)
		free(h->isas[i]);
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
isa_known(const Hiprtc *h, const char *arch)
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

/* The processors comgr knows, for messages: "gfx900, gfx906, ...". */
static void
known_list(const Hiprtc *h, TilecStr *s)
{
	for (int i = 0; i < h->nisas; i++)
		tilec_rt_str_printf(s, "%s%s", i ? ", " : "", h->isas[i]);
}

static tilec_status
hiprtc_compile(tilec_context *ctx, TilecRtc *rc, const TilecCompileJob *job,
	       double *seconds)
{
	Hiprtc *h = (Hiprtc *)rc;
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
			"hiprtc %s (%s) does not know %.*s; it knows %s", rc->path,
			h->comgr, (int)strcspn(job->arch, ":"), job->arch,
			tilec_rt_str_cstr(&known));
		tilec_rt_str_free(&known);
		return st;
	}
	char arch[128];
	snprintf(arch, sizeof arch, "--gpu-architecture=%s", job->arch);
	return tilec_rt_rtc_compile(ctx, rc, job, arch, NULL, 0, NULL,
				    seconds);
}

const TilecRtcTarget tilec_rt_hiprtc = {
	.name = "hiprtc",
	.object = "code object",
	.symbols = {
		[TILEC_RTC_VERSION] = "hiprtcVersion",
		[TILEC_RTC_ERROR_STRING] = "hiprtcGetErrorString",
		[TILEC_RTC_CREATE] = "hiprtcCreateProgram",
		[TILEC_RTC_COMPILE] = "hiprtcCompileProgram",
		[TILEC_RTC_LOG_SIZE] = "hiprtcGetProgramLogSize",
		[TILEC_RTC_LOG] = "hiprtcGetProgramLog",
		[TILEC_RTC_CODE_SIZE] = "hiprtcGetCodeSize",
		[TILEC_RTC_CODE] = "hiprtcGetCode",
		[TILEC_RTC_DESTROY] = "hiprtcDestroyProgram",
	},
	.fixed_options = fixed_options,
	.nfixed = sizeof fixed_options / sizeof *fixed_options,
	/* The HIP runtime of ROCm 6 loads but carries no hiprtc. */
	.required = "hiprtcCompileProgram",
	.path_from_candidate = false,
	.library = "a library with hiprtcCompileProgram",
	.install = "ROCm's hiprtc (Debian: libamdhip64-dev)",
	.env = "TILEC_HIPRTC",
	.too_old = "",
	.open = hiprtc_open,
	.compile = hiprtc_compile,
	.fini = hiprtc_fini,
};
