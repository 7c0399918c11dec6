/*
 * cuda_driver.c - the cuda backend: NVRTC compiles (jit_nvrtc.c), the CUDA
 * driver API loads the cubins, moves memory and launches kernels.
 *
 * libcuda.so.1 is loaded with dlopen and only the entry points below are
 * resolved; the types and constants they need are declared here, so the
 * runtime builds without any CUDA header and runs its CPU path without a
 * driver.  A context on device N retains that device's primary context
 * and makes it current on the calling thread before every driver call (a
 * tilec context may move between threads, one at a time).
 *
 * A context on TILEC_DEVICE_NONE is compile-only: it needs NVRTC but no
 * driver or GPU, compiles for the architecture the options name, stores
 * cubins in the cache, and refuses to load kernels, allocate or launch.
 *
 * Modules are cubins loaded with cuModuleLoadData; a kernel is the
 * `extern "C" __global__` function of its name.  Launches go through
 * cuLaunchKernel with args as kernelParams; a launch asking for more than
 * 48 KiB of dynamic shared memory first raises the function's limit
 * (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES), once per size.
 * Device pointers travel as `void *` holding the CUdeviceptr value.
 */
#include "runtime_int.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The driver API's types, as its ABI has them. */
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;

enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_NOT_FOUND = 500,
	CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
	CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
	CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
	CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
	CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
	CU_EVENT_DEFAULT = 0,
};

/* Dynamic shared memory a launch may use without opting in. */
#define DEFAULT_SHARED_LIMIT (48 * 1024)

#define DRIVER_SONAME "libcuda.so.1"

/* The driver entry points used. */
typedef struct CudaDriver {
	void *lib; /* the dlopen handle, NULL when compile-only */
	CUresult (*init)(unsigned flags);
	CUresult (*get_error_string)(CUresult r, const char **s);
	CUresult (*get_error_name)(CUresult r, const char **s);
	CUresult (*device_get_count)(int *n);
	CUresult (*device_get)(CUdevice *dev, int ordinal);
	CUresult (*device_get_attribute)(int *v, int attrib, CUdevice dev);
	CUresult (*device_get_name)(char *name, int len, CUdevice dev);
	CUresult (*device_total_mem)(size_t *bytes, CUdevice dev);
	CUresult (*primary_ctx_retain)(CUcontext *ctx, CUdevice dev);
	CUresult (*primary_ctx_release)(CUdevice dev);
	CUresult (*ctx_set_current)(CUcontext ctx);
	CUresult (*ctx_synchronize)(void);
	CUresult (*module_load_data)(CUmodule *mod, const void *image);
	CUresult (*module_unload)(CUmodule mod);
	CUresult (*module_get_function)(CUfunction *fn, CUmodule mod,
					const char *name);
	CUresult (*func_set_attribute)(CUfunction fn, int attrib, int value);
	CUresult (*launch_kernel)(CUfunction fn, unsigned gx, unsigned gy,
				  unsigned gz, unsigned bx, unsigned by,
				  unsigned bz, unsigned shared, CUstream stream,
				  void **params, void **extra);
	CUresult (*mem_alloc)(CUdeviceptr *ptr, size_t bytes);
	CUresult (*mem_free)(CUdeviceptr ptr);
	CUresult (*memcpy_htod)(CUdeviceptr dst, const void *src, size_t n);
	CUresult (*memcpy_dtoh)(void *dst, CUdeviceptr src, size_t n);
	CUresult (*event_create)(CUevent *ev, unsigned flags);
	CUresult (*event_record)(CUevent ev, CUstream stream);
	CUresult (*event_synchronize)(CUevent ev);
	CUresult (*event_elapsed_time)(float *ms, CUevent start, CUevent end);
	CUresult (*event_destroy)(CUevent ev);
} CudaDriver;

/* Exported names (the _v2 ones are what cuda.h maps the plain names to
 * since CUDA 4; every driver since exports them). */
static const struct {
	const char *name; /* the exported symbol */
	size_t offset;    /* its slot in CudaDriver */
} driver_symbols[] = {
#define SYM(name, field) { name, offsetof(CudaDriver, field) }
	SYM("cuInit", init),
	SYM("cuGetErrorString", get_error_string),
	SYM("cuGetErrorName", get_error_name),
	SYM("cuDeviceGetCount", device_get_count),
	SYM("cuDeviceGet", device_get),
	SYM("cuDeviceGetAttribute", device_get_attribute),
	SYM("cuDeviceGetName", device_get_name),
	SYM("cuDeviceTotalMem_v2", device_total_mem),
	SYM("cuDevicePrimaryCtxRetain", primary_ctx_retain),
	SYM("cuDevicePrimaryCtxRelease_v2", primary_ctx_release),
	SYM("cuCtxSetCurrent", ctx_set_current),
	SYM("cuCtxSynchronize", ctx_synchronize),
	SYM("cuModuleLoadData", module_load_data),
	SYM("cuModuleUnload", module_unload),
	SYM("cuModuleGetFunction", module_get_function),
	SYM("cuFuncSetAttribute", func_set_attribute),
	SYM("cuLaunchKernel", launch_kernel),
	SYM("cuMemAlloc_v2", mem_alloc),
	SYM("cuMemFree_v2", mem_free),
	SYM("cuMemcpyHtoD_v2", memcpy_htod),
	SYM("cuMemcpyDtoH_v2", memcpy_dtoh),
	SYM("cuEventCreate", event_create),
	SYM("cuEventRecord", event_record),
	SYM("cuEventSynchronize", event_synchronize),
	SYM("cuEventElapsedTime", event_elapsed_time),
	SYM("cuEventDestroy_v2", event_destroy),
#undef SYM
};

/* Per-context state of the backend. */
typedef struct CudaState {
	TilecNvrtc *nvrtc;        /* the compiler */
	CudaDriver drv;           /* the driver; drv.lib NULL if compile-only */
	int ordinal;              /* the device, or TILEC_DEVICE_NONE */
	CUdevice dev;             /* the driver's handle of it */
	CUcontext pctx;           /* its primary context, retained */
	tilec_device_info info;   /* what tilec_device_get_info reports */
	CUevent ev_start, ev_stop; /* for timing; NULL until first used */
} CudaState;

/* One kernel looked up in a module. */
typedef struct CudaKernel {
	CUfunction fn;            /* the __global__ function */
	size_t shared_optin;      /* dynamic shared memory opted in so far */
	struct CudaKernel *next;  /* next kernel of the module */
	char name[];              /* its name */
} CudaKernel;

/* A loaded cubin. */
typedef struct CudaModule {
	CUmodule mod;             /* NULL on a compile-only context */
	CudaKernel *kernels;      /* kernels looked up so far */
} CudaModule;

/* --- Errors ------------------------------------------------------------------ */

/* "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)" */
static void
cu_describe(const CudaDriver *drv, CUresult r, char *out, size_t n)
{
	const char *name = NULL, *text = NULL;
	if (drv->get_error_name)
		drv->get_error_name(r, &name);
	if (drv->get_error_string)
		drv->get_error_string(r, &text);
	/* Stub libraries and broken installs may not describe errors. */
	static const struct {
		CUresult code;    /* the CUresult */
		const char *what; /* its name and meaning */
	} known[] = {
		{ 34, "CUDA_ERROR_STUB_LIBRARY (the libcuda found is the "
		      "toolkit's link stub, not a driver)" },
		{ 35, "CUDA_ERROR_INSUFFICIENT_DRIVER (the driver is older "
		      "than the runtime needs)" },
		{ 100, "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is "
		       "detected)" },
	};
	if (name && text) {
		snprintf(out, n, "%s (%s)", name, text);
		return;
	}
	for (size_t i = 0; i < sizeof known / sizeof *known; i++) {
		if (known[i].code == r) {
			snprintf(out, n, "%s", known[i].what);
			return;
		}
	}
	snprintf(out, n, "CUDA error %d", r);
}

/* Fail with status st: the formatted message, ": ", the driver's words
 * for r. */
TILEC_RT_PRINTF(5, 6)
static tilec_status
cu_fail(tilec_context *ctx, const CudaDriver *drv, tilec_status st,
	CUresult r, const char *fmt, ...)
{
	char msg[1024], why[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	cu_describe(drv, r, why, sizeof why);
	return tilec_rt_fail(ctx, st, "%s: %s", msg, why);
}

static CudaState *
cuda_state(tilec_context *ctx)
{
	return tilec_rt_backend_state(ctx);
}

/* Make the device's context current on this thread. */
static tilec_status
make_current(tilec_context *ctx, CudaState *s)
{
	CUresult r = s->drv.ctx_set_current(s->pctx);
	if (r != CUDA_SUCCESS)
		return cu_fail(ctx, &s->drv, TILEC_ERR_UNAVAILABLE, r,
			       "cannot make CUDA device %d current",
			       s->ordinal);
	return TILEC_OK;
}

/* A device-only operation on a compile-only context. */
static tilec_status
need_device(tilec_context *ctx, const CudaState *s, const char *what)
{
	if (s->drv.lib)
		return TILEC_OK;
	return tilec_rt_fail(ctx, TILEC_ERR_UNAVAILABLE,
			     "this CUDA context is compile-only "
			     "(TILEC_DEVICE_NONE): it cannot %s; create the "
			     "context on a device",
			     what);
}

/* --- Opening the device ------------------------------------------------------- */

static tilec_status
open_driver(tilec_context *ctx, CudaDriver *drv)
{
	dlerror();
	/* Never unloaded: the driver keeps threads of its own running. */
	drv->lib = dlopen(DRIVER_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (!drv->lib) {
		const char *why = dlerror();
		return tilec_rt_fail(ctx, TILEC_ERR_UNAVAILABLE,
				     "no CUDA driver: cannot load %s (%s); "
				     "running on a GPU needs the NVIDIA driver "
				     "(a compile-only context, TILEC_DEVICE_NONE, "
				     "does not)",
				     DRIVER_SONAME, why ? why : "not found");
	}
	TilecStr missing = { 0 };
	for (size_t i = 0; i < sizeof driver_symbols / sizeof *driver_symbols;
	     i++) {
		void *sym = dlsym(drv->lib, driver_symbols[i].name);
		if (!sym)
			tilec_rt_str_printf(&missing, "%s%s",
					    missing.len ? ", " : "",
					    driver_symbols[i].name);
		memcpy((char *)drv + driver_symbols[i].offset, &sym, sizeof sym);
	}
	if (missing.len || missing.oom) {
		tilec_status st = tilec_rt_fail(
			ctx, TILEC_ERR_UNAVAILABLE,
			"the CUDA driver %s is too old for tilec: it lacks %s",
			DRIVER_SONAME, tilec_rt_str_cstr(&missing));
		tilec_rt_str_free(&missing);
		dlclose(drv->lib);
		memset(drv, 0, sizeof *drv);
		return st;
	}
	return TILEC_OK;
}

/* The cubin architecture of compute capability major.minor: the device's
 * own, with the arch-specific features ('a') from Hopper on. */
static void
arch_of(int major, int minor, char *out, size_t n)
{
	snprintf(out, n, "sm_%d%d%s", major, minor, major >= 9 ? "a" : "");
}

static tilec_status
open_device(tilec_context *ctx, CudaState *s, int ordinal)
{
	CudaDriver *drv = &s->drv;
	CUresult r = drv->init(0);
	if (r != CUDA_SUCCESS)
		return cu_fail(ctx, drv, TILEC_ERR_UNAVAILABLE, r,
			       "the CUDA driver cannot start (cuInit)");
	int count = 0;
	r = drv->device_get_count(&count);
	if (r != CUDA_SUCCESS)
		return cu_fail(ctx, drv, TILEC_ERR_UNAVAILABLE, r,
			       "cannot count CUDA devices");
	if (ordinal >= count)
		return tilec_rt_fail(ctx,
				     count ? TILEC_ERR_INVALID
					   : TILEC_ERR_UNAVAILABLE,
				     "no CUDA device %d: the machine has %d",
				     ordinal, count);
	if ((r = drv->device_get(&s->dev, ordinal)) != CUDA_SUCCESS)
		return cu_fail(ctx, drv, TILEC_ERR_UNAVAILABLE, r,
			       "cannot open CUDA device %d", ordinal);
	if ((r = drv->primary_ctx_retain(&s->pctx, s->dev)) != CUDA_SUCCESS) {
		s->pctx = NULL;
		return cu_fail(ctx, drv, TILEC_ERR_UNAVAILABLE, r,
			       "cannot create a context on CUDA device %d",
			       ordinal);
	}
	tilec_status st = make_current(ctx, s);
	if (st != TILEC_OK)
		return st;

	tilec_device_info *info = &s->info;
	int major = 0, minor = 0, sms = 0, optin = 0;
	r = drv->device_get_attribute(
		&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, s->dev);
	if (r == CUDA_SUCCESS)
		r = drv->device_get_attribute(
			&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
			s->dev);
	if (r == CUDA_SUCCESS)
		r = drv->device_get_attribute(
			&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, s->dev);
	if (r == CUDA_SUCCESS)
		r = drv->device_get_attribute(
			&optin,
			CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
			s->dev);
	if (r == CUDA_SUCCESS)
		r = drv->device_get_name(info->name, (int)sizeof info->name,
					 s->dev);
	if (r == CUDA_SUCCESS)
		r = drv->device_total_mem(&info->total_memory, s->dev);
	if (r != CUDA_SUCCESS)
		return cu_fail(ctx, drv, TILEC_ERR_UNAVAILABLE, r,
			       "cannot query CUDA device %d", ordinal);
	info->name[sizeof info->name - 1] = '\0';
	info->cc_major = major;
	info->cc_minor = minor;
	info->multiprocessors = sms;
	info->max_shared_bytes = (size_t)(optin > 0 ? optin : 0);
	arch_of(major, minor, info->arch, sizeof info->arch);
	return TILEC_OK;
}

/* --- The backend table's entries ---------------------------------------------- */

static void cuda_fini(tilec_context *ctx);

static tilec_status
cuda_init(tilec_context *ctx, int device)
{
	if (device < TILEC_DEVICE_NONE)
		return tilec_rt_fail(ctx, TILEC_ERR_INVALID,
				     "CUDA device %d: use an ordinal (0, 1, ...) "
				     "or TILEC_DEVICE_NONE (-1) to compile only",
				     device);
	CudaState *s = calloc(1, sizeof *s);
	if (!s)
		return tilec_rt_fail(ctx, TILEC_ERR_NOMEM, "out of memory");
	s->ordinal = device;
	s->info.compile_only = device == TILEC_DEVICE_NONE;
	tilec_rt_set_backend_state(ctx, s);
	tilec_status st = TILEC_OK;
	if (device != TILEC_DEVICE_NONE) {
		st = open_driver(ctx, &s->drv);
		if (st == TILEC_OK)
			st = open_device(ctx, s, device);
	}
	if (st == TILEC_OK)
		st = tilec_rt_nvrtc_open(ctx, &s->nvrtc);
	if (st != TILEC_OK)
		cuda_fini(ctx);
	return st;
}

static void
cuda_fini(tilec_context *ctx)
{
	CudaState *s = cuda_state(ctx);
	if (!s)
		return;
	if (s->pctx) {
		if (s->drv.ctx_set_current(s->pctx) == CUDA_SUCCESS) {
			if (s->ev_start)
				s->drv.event_destroy(s->ev_start);
			if (s->ev_stop)
				s->drv.event_destroy(s->ev_stop);
		}
		s->drv.primary_ctx_release(s->dev);
	}
	if (s->drv.lib)
		dlclose(s->drv.lib);
	tilec_rt_nvrtc_close(s->nvrtc);
	free(s);
	tilec_rt_set_backend_state(ctx, NULL);
}

static tilec_status
cuda_identity(tilec_context *ctx, const char **id)
{
	CudaState *s = cuda_state(ctx);
	if (!s || !s->nvrtc)
		return tilec_rt_fail(ctx, TILEC_ERR_UNAVAILABLE,
				     "NVRTC is not loaded");
	*id = tilec_rt_nvrtc_identity(s->nvrtc);
	return TILEC_OK;
}

static tilec_status
cuda_compile(tilec_context *ctx, const TilecCompileJob *job, double *seconds)
{
	CudaState *s = cuda_state(ctx);
	if (!s || !s->nvrtc)
		return tilec_rt_fail(ctx, TILEC_ERR_UNAVAILABLE,
				     "NVRTC is not loaded");
	return tilec_rt_nvrtc_compile(ctx, s->nvrtc, job, seconds);
}

static const char *
cuda_default_arch(tilec_context *ctx)
{
	CudaState *s = cuda_state(ctx);
	if (s && s->drv.lib)
		return s->info.arch;
	tilec_rt_fail(ctx, TILEC_ERR_INVALID,
		      "a compile-only CUDA context has no device to take the "
		      "architecture from: name one in "
		      "tilec_compile_options.arch (sm_80, sm_90a, ...)");
	return NULL;
}

static tilec_status
cuda_load(tilec_context *ctx, const char *path, void **handle)
{
	CudaState *s = cuda_state(ctx);
	CudaModule *m = calloc(1, sizeof *m);
	if (!m)
		return tilec_rt_fail(ctx, TILEC_ERR_NOMEM, "out of memory");
	if (!s->drv.lib) {
		*handle = m; /* compile-only: the cubin stays on disk */
		return TILEC_OK;
	}
	char *image;
	size_t len;
	tilec_status st = tilec_rt_read_file(path, &image, &len);
	if (st != TILEC_OK) {
		free(m);
		return tilec_rt_fail(ctx, st, "cannot read %s", path);
	}
	st = make_current(ctx, s);
	CUresult r = CUDA_SUCCESS;
	if (st == TILEC_OK && (r = s->drv.module_load_data(&m->mod, image)) !=
				      CUDA_SUCCESS)
		st = cu_fail(ctx, &s->drv, TILEC_ERR_LOAD, r,
			     "cannot load %s on CUDA device %d (%s, %s)", path,
			     s->ordinal, s->info.name, s->info.arch);
	free(image);
	if (st != TILEC_OK) {
		free(m);
		return st;
	}
	*handle = m;
	return TILEC_OK;
}

static void
cuda_unload(tilec_context *ctx, void *handle)
{
	CudaState *s = cuda_state(ctx);
	CudaModule *m = handle;
	for (CudaKernel *k = m->kernels, *next; k; k = next) {
		next = k->next;
		free(k);
	}
	if (m->mod && make_current(ctx, s) == TILEC_OK)
		s->drv.module_unload(m->mod);
	free(m);
}

static void *
cuda_symbol(tilec_context *ctx, void *handle, const char *name)
{
	CudaState *s = cuda_state(ctx);
	CudaModule *m = handle;
	if (need_device(ctx, s, "load kernels") != TILEC_OK)
		return NULL;
	if (make_current(ctx, s) != TILEC_OK)
		return NULL;
	CUfunction fn;
	CUresult r = s->drv.module_get_function(&fn, m->mod, name);
	if (r == CUDA_ERROR_NOT_FOUND) {
		tilec_rt_fail(ctx, TILEC_ERR_NOT_FOUND,
			      "no kernel '%s' in the module (no extern \"C\" "
			      "__global__ function of that name)",
			      name);
		return NULL;
	}
	if (r != CUDA_SUCCESS) {
		cu_fail(ctx, &s->drv, TILEC_ERR_LOAD, r,
			"cannot find kernel %s", name);
		return NULL;
	}
	size_t n = strlen(name) + 1;
	CudaKernel *k = calloc(1, sizeof *k + n);
	if (!k) {
		tilec_rt_fail(ctx, TILEC_ERR_NOMEM, "out of memory");
		return NULL;
	}
	memcpy(k->name, name, n);
	k->fn = fn;
	k->next = m->kernels;
	m->kernels = k;
	return k;
}

/* Check cfg and raise the kernel's shared-memory limit if it needs to. */
static tilec_status
prepare_launch(tilec_context *ctx, CudaState *s, CudaKernel *k,
	       const tilec_launch_config *cfg)
{
	if (!cfg)
		return tilec_rt_fail(ctx, TILEC_ERR_INVALID,
				     "a CUDA launch of %s needs a launch "
				     "configuration (grid, block, shared "
				     "memory)",
				     k->name);
	for (int d = 0; d < 3; d++)
		if (cfg->grid[d] == 0 || cfg->block[d] == 0)
			return tilec_rt_fail(
				ctx, TILEC_ERR_INVALID,
				"launch of %s with grid (%u, %u, %u) and block "
				"(%u, %u, %u): every extent must be at least 1",
				k->name, cfg->grid[0], cfg->grid[1],
				cfg->grid[2], cfg->block[0], cfg->block[1],
				cfg->block[2]);
	if (cfg->shared_bytes > s->info.max_shared_bytes)
		return tilec_rt_fail(ctx, TILEC_ERR_LAUNCH,
				     "%s needs %zu bytes of shared memory per "
				     "block; %s allows at most %zu",
				     k->name, cfg->shared_bytes, s->info.name,
				     s->info.max_shared_bytes);
	if (cfg->shared_bytes > DEFAULT_SHARED_LIMIT &&
	    cfg->shared_bytes > k->shared_optin) {
		CUresult r = s->drv.func_set_attribute(
			k->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
			(int)cfg->shared_bytes);
		if (r != CUDA_SUCCESS)
			return cu_fail(ctx, &s->drv, TILEC_ERR_LAUNCH, r,
				       "cannot let %s use %zu bytes of dynamic "
				       "shared memory",
				       k->name, cfg->shared_bytes);
		k->shared_optin = cfg->shared_bytes;
	}
	return TILEC_OK;
}

static tilec_status
launch_now(tilec_context *ctx, CudaState *s, CudaKernel *k, void **args,
	   const tilec_launch_config *cfg)
{
	CUresult r = s->drv.launch_kernel(
		k->fn, cfg->grid[0], cfg->grid[1], cfg->grid[2], cfg->block[0],
		cfg->block[1], cfg->block[2], (unsigned)cfg->shared_bytes,
		(CUstream)cfg->stream, args, NULL);
	if (r != CUDA_SUCCESS)
		return cu_fail(ctx, &s->drv, TILEC_ERR_LAUNCH, r,
			       "launch of %s (grid %ux%ux%u, block %ux%ux%u, "
			       "%zu bytes of shared memory) failed",
			       k->name, cfg->grid[0], cfg->grid[1],
			       cfg->grid[2], cfg->block[0], cfg->block[1],
			       cfg->block[2], cfg->shared_bytes);
	return TILEC_OK;
}

static tilec_status
cuda_launch(tilec_context *ctx, void *entry, void **args,
	    const tilec_launch_config *cfg)
{
	CudaState *s = cuda_state(ctx);
	CudaKernel *k = entry;
	tilec_status st = make_current(ctx, s);
	if (st == TILEC_OK)
		st = prepare_launch(ctx, s, k, cfg);
	if (st == TILEC_OK)
		st = launch_now(ctx, s, k, args, cfg);
	return st;
}

static tilec_status
cuda_synchronize(tilec_context *ctx)
{
	CudaState *s = cuda_state(ctx);
	if (!s->drv.lib)
		return TILEC_OK; /* compile-only: nothing ever runs */
	tilec_status st = make_current(ctx, s);
	if (st != TILEC_OK)
		return st;
	CUresult r = s->drv.ctx_synchronize();
	if (r != CUDA_SUCCESS)
		return cu_fail(ctx, &s->drv, TILEC_ERR_LAUNCH, r,
			       "a kernel on CUDA device %d failed",
			       s->ordinal);
	return TILEC_OK;
}

static tilec_status
cuda_device_info(tilec_context *ctx, tilec_device_info *info)
{
	*info = cuda_state(ctx)->info;
	return TILEC_OK;
}

static tilec_status
cuda_mem_alloc(tilec_context *ctx, size_t bytes, void **ptr)
{
	CudaState *s = cuda_state(ctx);
	*ptr = NULL;
	tilec_status st = need_device(ctx, s, "allocate device memory");
	if (st == TILEC_OK)
		st = make_current(ctx, s);
	if (st != TILEC_OK)
		return st;
	CUdeviceptr p = 0;
	CUresult r = s->drv.mem_alloc(&p, bytes ? bytes : 1);
	if (r != CUDA_SUCCESS)
		return cu_fail(ctx, &s->drv, TILEC_ERR_NOMEM, r,
			       "cannot allocate %zu bytes on CUDA device %d",
			       bytes, s->ordinal);
	*ptr = (void *)(uintptr_t)p;
	return TILEC_OK;
}

static tilec_status
cuda_mem_free(tilec_context *ctx, void *ptr)
{
	CudaState *s = cuda_state(ctx);
	tilec_status st = need_device(ctx, s, "free device memory");
	if (st == TILEC_OK)
		st = make_current(ctx, s);
	if (st != TILEC_OK)
		return st;
	CUresult r = s->drv.mem_free((CUdeviceptr)(uintptr_t)ptr);
	if (r != CUDA_SUCCESS)
		return cu_fail(ctx, &s->drv, TILEC_ERR_INVALID, r,
			       "cannot free device memory at %p", ptr);
	return TILEC_OK;
}

static tilec_status
cuda_mem_copy(tilec_context *ctx, void *dst, const void *src, size_t bytes,
	      bool to_device)
{
	CudaState *s = cuda_state(ctx);
	tilec_status st = need_device(ctx, s, "copy device memory");
	if (st == TILEC_OK)
		st = make_current(ctx, s);
	if (st != TILEC_OK || bytes == 0)
		return st;
	CUresult r = to_device
			     ? s->drv.memcpy_htod((CUdeviceptr)(uintptr_t)dst,
						  src, bytes)
			     : s->drv.memcpy_dtoh(
				       dst, (CUdeviceptr)(uintptr_t)src, bytes);
	if (r != CUDA_SUCCESS)
		return cu_fail(ctx, &s->drv, TILEC_ERR_LAUNCH, r,
			       "copying %zu bytes %s CUDA device %d failed",
			       bytes, to_device ? "to" : "from", s->ordinal);
	return TILEC_OK;
}

static tilec_status
cuda_time_launch(tilec_context *ctx, void *entry, void **args,
		 const tilec_launch_config *cfg, double *seconds)
{
	CudaState *s = cuda_state(ctx);
	CudaKernel *k = entry;
	tilec_status st = make_current(ctx, s);
	if (st == TILEC_OK)
		st = prepare_launch(ctx, s, k, cfg);
	if (st != TILEC_OK)
		return st;
	CUresult r = CUDA_SUCCESS;
	if (!s->ev_start)
		r = s->drv.event_create(&s->ev_start, CU_EVENT_DEFAULT);
	if (r == CUDA_SUCCESS && !s->ev_stop)
		r = s->drv.event_create(&s->ev_stop, CU_EVENT_DEFAULT);
	if (r != CUDA_SUCCESS)
		return cu_fail(ctx, &s->drv, TILEC_ERR_UNAVAILABLE, r,
			       "cannot create CUDA events for timing");
	CUstream stream = (CUstream)cfg->stream;
	if ((r = s->drv.event_record(s->ev_start, stream)) != CUDA_SUCCESS)
		return cu_fail(ctx, &s->drv, TILEC_ERR_LAUNCH, r,
			       "cuEventRecord failed");
	if ((st = launch_now(ctx, s, k, args, cfg)) != TILEC_OK)
		return st;
	if ((r = s->drv.event_record(s->ev_stop, stream)) != CUDA_SUCCESS ||
	    (r = s->drv.event_synchronize(s->ev_stop)) != CUDA_SUCCESS)
		return cu_fail(ctx, &s->drv, TILEC_ERR_LAUNCH, r,
			       "timed launch of %s failed", k->name);
	float ms = 0;
	if ((r = s->drv.event_elapsed_time(&ms, s->ev_start, s->ev_stop)) !=
	    CUDA_SUCCESS)
		return cu_fail(ctx, &s->drv, TILEC_ERR_LAUNCH, r,
			       "cuEventElapsedTime failed");
	*seconds = ms * 1e-3;
	return TILEC_OK;
}

const TilecBackendOps tilec_rt_cuda_backend = {
	.backend = TILEC_BACKEND_CUDA,
	.name = "cuda",
	.obj_ext = ".cubin",
	.src_ext = ".cu",
	.in_memory = true,
	.init = cuda_init,
	.fini = cuda_fini,
	.identity = cuda_identity,
	.compile = cuda_compile,
	.load = cuda_load,
	.unload = cuda_unload,
	.symbol = cuda_symbol,
	.launch = cuda_launch,
	.synchronize = cuda_synchronize,
	.default_arch = cuda_default_arch,
	.device_info = cuda_device_info,
	.mem_alloc = cuda_mem_alloc,
	.mem_free = cuda_mem_free,
	.mem_copy = cuda_mem_copy,
	.time_launch = cuda_time_launch,
};
