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
 * passed with -I.  Loading and compiling are jit_rtc.c's, driven by the
 * table at the end; no CUDA header is needed to build this file.  The
 * library is never linked; its absence is TILEC_ERR_UNAVAILABLE naming
 * every file tried.
 */
#define _GNU_SOURCE /* realpath */
#include "runtime_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The options every compile gets, before the context's and the
 * compile's flags (which may override them). */
static const char *const fixed_options[] = { "-std=c++17", "-default-device" };

/* A loaded NVRTC. */
typedef struct Nvrtc {
	TilecRtc rc;          /* the library, its entry points, identity */
	char include[4096];   /* directory with cuda_fp16.h, or "" */
} Nvrtc;

/* --- Loading ---------------------------------------------------------------- */

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
		tilec_rt_rtc_add_candidate(list, &n, NULL, env);
	for (size_t i = 0; i < 3; i++)
		tilec_rt_rtc_add_candidate(list, &n, NULL, sonames[i]);
	const char *roots[] = { getenv("CUDA_HOME"), getenv("CUDA_PATH"),
				"/usr/local/cuda" };
	for (size_t r = 0; r < 3; r++) {
		if (!roots[r] || !*roots[r])
			continue;
		char dir[4096];
		snprintf(dir, sizeof dir, "%s/lib64", roots[r]);
		for (size_t i = 0; i < 3; i++)
			tilec_rt_rtc_add_candidate(list, &n, dir, sonames[i]);
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
find_include(Nvrtc *nv)
{
	char libdir[4096] = "";
	if (tilec_rt_rtc_real_path(&nv->rc, &nv->rc.api.create)) {
		const char *p = nv->rc.path;
		const char *slash = strrchr(p, '/');
		if (slash && (size_t)(slash - p) < sizeof libdir) {
			memcpy(libdir, p, (size_t)(slash - p));
			libdir[slash - p] = '\0';
		}
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

static tilec_status
nvrtc_open(tilec_context *ctx, TilecRtc **out)
{
	*out = NULL;
	Nvrtc *nv = calloc(1, sizeof *nv);
	if (!nv)
		return tilec_rt_fail(ctx, TILEC_ERR_NOMEM, "out of memory");
	TilecRtc *rc = &nv->rc;
	rc->t = &tilec_rt_nvrtc;
	char *cand[TILEC_RT_RTC_MAX_CANDIDATES];
	int ncand = nvrtc_candidates(cand);
	tilec_status st = tilec_rt_rtc_load(ctx, rc, cand, ncand);
	if (st == TILEC_OK) {
		TilecStr missing = { 0 };
		tilec_rt_rtc_resolve_api(rc, &missing);
		st = tilec_rt_rtc_check(ctx, rc, &missing);
	}
	if (st != TILEC_OK) {
		tilec_rt_rtc_close(rc);
		return st;
	}
	find_include(nv);
	snprintf(rc->who, sizeof rc->who, "NVRTC %d.%d", rc->major,
		 rc->minor);

	TilecStr id = { 0 };
	tilec_rt_str_printf(&id, "nvrtc %d.%d; options", rc->major, rc->minor);
	for (size_t i = 0; i < sizeof fixed_options / sizeof *fixed_options; i++)
		tilec_rt_str_printf(&id, " %s", fixed_options[i]);
	tilec_rt_str_printf(&id, "; include %s", nv->include);
	if (id.oom) {
		tilec_rt_str_free(&id);
		tilec_rt_rtc_close(rc);
		return tilec_rt_fail(ctx, TILEC_ERR_NOMEM, "out of memory");
	}
	rc->identity = id.data;
	*out = rc;
	return TILEC_OK;
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

static tilec_status
nvrtc_compile(tilec_context *ctx, TilecRtc *rc, const TilecCompileJob *job,
	      double *seconds)
{
	Nvrtc *nv = (Nvrtc *)rc;
	*seconds = 0;
	if (!tilec_rt_nvrtc_arch_ok(job->arch))
		return tilec_rt_fail(ctx, TILEC_ERR_INVALID,
				     "'%s' is not a CUDA architecture NVRTC "
				     "can build a cubin for: use sm_80, sm_90a, "
				     "...",
				     job->arch);
	char arch[64];
	snprintf(arch, sizeof arch, "--gpu-architecture=%s", job->arch);
	const char *include[] = { "-I", nv->include };
	static const char hint[] = "; cuda_fp16.h was not found (set "
				   "CUDA_HOME to the CUDA toolkit)";
	return tilec_rt_rtc_compile(ctx, rc, job, arch, include,
				    nv->include[0] ? 2 : 0,
				    nv->include[0] ? NULL : hint, seconds);
}

const TilecRtcTarget tilec_rt_nvrtc = {
	.name = "NVRTC",
	.object = "cubin",
	.symbols = {
		[TILEC_RTC_VERSION] = "nvrtcVersion",
		[TILEC_RTC_ERROR_STRING] = "nvrtcGetErrorString",
		[TILEC_RTC_CREATE] = "nvrtcCreateProgram",
		[TILEC_RTC_COMPILE] = "nvrtcCompileProgram",
		[TILEC_RTC_LOG_SIZE] = "nvrtcGetProgramLogSize",
		[TILEC_RTC_LOG] = "nvrtcGetProgramLog",
		[TILEC_RTC_CODE_SIZE] = "nvrtcGetCUBINSize",
		[TILEC_RTC_CODE] = "nvrtcGetCUBIN",
		[TILEC_RTC_DESTROY] = "nvrtcDestroyProgram",
	},
	.fixed_options = fixed_options,
	.nfixed = sizeof fixed_options / sizeof *fixed_options,
	.required = NULL,
	.path_from_candidate = true,
	.library = "libnvrtc",
	.install = "the CUDA toolkit",
	.env = "TILEC_NVRTC",
	.too_old = " (NVRTC 11.1 or later is needed)",
	.open = nvrtc_open,
	.compile = nvrtc_compile,
	.fini = NULL,
};
