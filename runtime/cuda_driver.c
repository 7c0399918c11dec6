/*
 * cuda_driver.c - the cuda backend: NVRTC compiles (jit_nvrtc.c), the CUDA
 * driver API loads the cubins, moves memory and launches kernels.  The
 * backend's entries are gpu_driver.c's, driven by the target table at the
 * end; this file holds what is CUDA's own: the driver's entry points and
 * the hooks calling them, its error names, and opening a device.
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
	/* Optional (CUDA 12 on): NULL where the driver has none, and then
	 * kernels' tensor maps stay unbuilt (their loops without TMA run). */
	CUresult (*tensor_map_encode_tiled)(void *map, int dtype, unsigned rank,
					    void *base, const unsigned long long *dims,
					    const unsigned long long *strides,
					    const unsigned *box,
					    const unsigned *element_strides,
					    int interleave, int swizzle, int l2,
					    int oob_fill);
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
	TilecGpu gpu;             /* what gpu_driver.c keeps; first */
	CudaDriver drv;           /* the driver; drv.lib NULL if compile-only */
	CUdevice dev;             /* the driver's handle of it */
	CUcontext pctx;           /* its primary context, retained */
} CudaState;

/* --- Errors ------------------------------------------------------------------ */

/* "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)" */
static void
cu_describe(const TilecGpu *g, CUresult r, char *out, size_t n)
{
	const CudaDriver *drv = &((const CudaState *)g)->drv;
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
	*(void **)&drv->tensor_map_encode_tiled = dlsym(drv->lib, "cuTensorMapEncodeTiled");
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
		return tilec_rt_gpu_fail(ctx, &s->gpu, TILEC_ERR_UNAVAILABLE, r,
			       "the CUDA driver cannot start (cuInit)");
	int count = 0;
	r = drv->device_get_count(&count);
	if (r != CUDA_SUCCESS)
		return tilec_rt_gpu_fail(ctx, &s->gpu, TILEC_ERR_UNAVAILABLE, r,
			       "cannot count CUDA devices");
	if (ordinal >= count)
		return tilec_rt_fail(ctx,
				     count ? TILEC_ERR_INVALID
					   : TILEC_ERR_UNAVAILABLE,
				     "no CUDA device %d: the machine has %d",
				     ordinal, count);
	if ((r = drv->device_get(&s->dev, ordinal)) != CUDA_SUCCESS)
		return tilec_rt_gpu_fail(ctx, &s->gpu, TILEC_ERR_UNAVAILABLE, r,
			       "cannot open CUDA device %d", ordinal);
	if ((r = drv->primary_ctx_retain(&s->pctx, s->dev)) != CUDA_SUCCESS) {
		s->pctx = NULL;
		return tilec_rt_gpu_fail(ctx, &s->gpu, TILEC_ERR_UNAVAILABLE, r,
			       "cannot create a context on CUDA device %d",
			       ordinal);
	}
	tilec_status st = tilec_rt_gpu_current(ctx, &s->gpu);
	if (st != TILEC_OK)
		return st;

	tilec_device_info *info = &s->gpu.info;
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
		return tilec_rt_gpu_fail(ctx, &s->gpu, TILEC_ERR_UNAVAILABLE, r,
			       "cannot query CUDA device %d", ordinal);
	info->name[sizeof info->name - 1] = '\0';
	info->cc_major = major;
	info->cc_minor = minor;
	info->multiprocessors = sms;
	info->max_shared_bytes = (size_t)(optin > 0 ? optin : 0);
	arch_of(major, minor, info->arch, sizeof info->arch);
	return TILEC_OK;
}

/* --- The hooks gpu_driver.c calls -------------------------------------------- */

static CudaDriver *
drv_of(TilecGpu *g)
{
	return &((CudaState *)g)->drv;
}

static tilec_status
cuda_open(tilec_context *ctx, TilecGpu *g, int ordinal)
{
	CudaState *s = (CudaState *)g;
	tilec_status st = open_driver(ctx, &s->drv);
	if (st == TILEC_OK)
		st = open_device(ctx, s, ordinal);
	return st;
}

static void
cuda_close(TilecGpu *g)
{
	CudaState *s = (CudaState *)g;
	if (s->pctx) {
		if (s->drv.ctx_set_current(s->pctx) == CUDA_SUCCESS) {
			if (g->ev_start)
				s->drv.event_destroy(g->ev_start);
			if (g->ev_stop)
				s->drv.event_destroy(g->ev_stop);
		}
		s->drv.primary_ctx_release(s->dev);
	}
	if (s->drv.lib)
		dlclose(s->drv.lib);
}

static CUresult
cuda_set_current(TilecGpu *g)
{
	return drv_of(g)->ctx_set_current(((CudaState *)g)->pctx);
}

static CUresult
cuda_module_load(TilecGpu *g, void **mod, const void *image)
{
	CUmodule m = NULL;
	CUresult r = drv_of(g)->module_load_data(&m, image);
	*mod = m;
	return r;
}

static void
cuda_module_unload(TilecGpu *g, void *mod)
{
	drv_of(g)->module_unload(mod);
}

static CUresult
cuda_get_function(TilecGpu *g, void *mod, const char *name, void **fn)
{
	CUfunction f = NULL;
	CUresult r = drv_of(g)->module_get_function(&f, mod, name);
	*fn = f;
	return r;
}

static CUresult
cuda_set_shared(TilecGpu *g, void *fn, int bytes)
{
	return drv_of(g)->func_set_attribute(
		fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes);
}

static CUresult
cuda_launch(TilecGpu *g, void *fn, void **args, const tilec_launch_config *cfg)
{
	return drv_of(g)->launch_kernel(
		fn, cfg->grid[0], cfg->grid[1], cfg->grid[2], cfg->block[0],
		cfg->block[1], cfg->block[2], (unsigned)cfg->shared_bytes,
		(CUstream)cfg->stream, args, NULL);
}

/* A TMA descriptor of spec into out: elements as unsigned integers of
 * their width (copies move bits), zeros outside the tensor, no
 * interleave, L2 lines of 128 bytes promoted. */
static CUresult
cuda_tensor_map(TilecGpu *g, const TilecTmapSpec *spec, void *out)
{
	const CudaDriver *drv = drv_of(g);
	enum { U8 = 0, U16 = 1, U32 = 2, U64 = 4 };
	static const int by_bytes[9] = { [1] = U8, [2] = U16, [4] = U32, [8] = U64 };
	static const unsigned ones[5] = { 1, 1, 1, 1, 1 };
	int bytes = tilec_rt_dtype_bytes(spec->dtype);
	if (!drv->tensor_map_encode_tiled || bytes < 1 || bytes > 8 || bytes == 3 ||
	    (bytes > 4 && bytes < 8))
		return CUDA_ERROR_NOT_FOUND;
	int swizzle = spec->swizzle == 128 ? 3 : spec->swizzle == 64 ? 2 : 1;
	return drv->tensor_map_encode_tiled(out, by_bytes[bytes], (unsigned)spec->rank,
					    spec->base, spec->dims, spec->strides,
					    spec->box, ones, 0, swizzle, 2, 0);
}

static CUresult
cuda_synchronize(TilecGpu *g)
{
	return drv_of(g)->ctx_synchronize();
}

static CUresult
cuda_mem_alloc(TilecGpu *g, void **ptr, size_t bytes)
{
	CUdeviceptr p = 0;
	CUresult r = drv_of(g)->mem_alloc(&p, bytes);
	if (r == CUDA_SUCCESS)
		*ptr = (void *)(uintptr_t)p;
	return r;
}

static CUresult
cuda_mem_free(TilecGpu *g, void *ptr)
{
	return drv_of(g)->mem_free((CUdeviceptr)(uintptr_t)ptr);
}

static CUresult
cuda_mem_copy(TilecGpu *g, void *dst, const void *src, size_t bytes,
	      bool to_device)
{
	CudaDriver *drv = drv_of(g);
	return to_device ? drv->memcpy_htod((CUdeviceptr)(uintptr_t)dst, src,
					    bytes)
			 : drv->memcpy_dtoh(dst, (CUdeviceptr)(uintptr_t)src,
					    bytes);
}

static CUresult
cuda_event_create(TilecGpu *g, void **ev)
{
	CUevent e = NULL;
	CUresult r = drv_of(g)->event_create(&e, CU_EVENT_DEFAULT);
	*ev = e;
	return r;
}

static CUresult
cuda_event_record(TilecGpu *g, void *ev, void *stream)
{
	return drv_of(g)->event_record(ev, stream);
}

static CUresult
cuda_event_synchronize(TilecGpu *g, void *ev)
{
	return drv_of(g)->event_synchronize(ev);
}

static CUresult
cuda_event_elapsed(TilecGpu *g, float *ms, void *start, void *stop)
{
	return drv_of(g)->event_elapsed_time(ms, start, stop);
}

const TilecGpuTarget tilec_rt_cuda_gpu = {
	.state_size = sizeof(CudaState),
	.rtc = &tilec_rt_nvrtc,
	.api = "CUDA",
	.device = "CUDA device",
	.driver = "CUDA driver",
	.arch_examples = "sm_80, sm_90a, ...",
	.record_name = "cuEventRecord",
	.elapsed_name = "cuEventElapsedTime",
	.not_found = CUDA_ERROR_NOT_FOUND,
	.shared_default = DEFAULT_SHARED_LIMIT,
	.open = cuda_open,
	.close = cuda_close,
	.describe = cu_describe,
	.set_current = cuda_set_current,
	.module_load = cuda_module_load,
	.module_unload = cuda_module_unload,
	.get_function = cuda_get_function,
	.set_shared = cuda_set_shared,
	.launch = cuda_launch,
	.tensor_map = cuda_tensor_map,
	.synchronize = cuda_synchronize,
	.mem_alloc = cuda_mem_alloc,
	.mem_free = cuda_mem_free,
	.mem_copy = cuda_mem_copy,
	.event_create = cuda_event_create,
	.event_record = cuda_event_record,
	.event_synchronize = cuda_event_synchronize,
	.event_elapsed = cuda_event_elapsed,
};
