/*
 * hip_driver.c - the hip backend: hiprtc compiles (jit_hiprtc.c), the HIP
 * runtime's module API loads the code objects, moves memory and launches
 * kernels on AMD GPUs.  The backend's entries are gpu_driver.c's, driven
 * by the target table at the end; this file holds what is HIP's own: the
 * runtime's entry points and the hooks calling them, its error names, and
 * opening a device.
 *
 * libamdhip64 is loaded with dlopen and only the entry points below are
 * resolved; the types and constants they need are declared here, so the
 * runtime builds without any HIP header and runs its CPU path without
 * ROCm.  A context on device N makes that device current on the calling
 * thread (hipSetDevice) before every runtime call, so a tilec context may
 * move between threads, one at a time.
 *
 * A context on TILEC_DEVICE_NONE is compile-only: it needs hiprtc but no
 * GPU (not even the HIP runtime's device layer), compiles for the
 * architecture the options name, stores code objects in the cache, and
 * refuses to load kernels, allocate or launch.  A context on a device of a
 * machine without an AMD GPU fails with a sentence saying so; the HIP
 * runtime reports that as an error code, never by ending the process.
 *
 * Modules are code objects loaded with hipModuleLoadData; a kernel is the
 * `extern "C" __global__` function of its name.  Launches go through
 * hipModuleLaunchKernel with args as kernelParams.  Device pointers travel
 * as `void *` holding the device address.  CDNA GPUs give every block up
 * to 64 KiB of LDS without opting in, so no function attribute is set.
 */
#include "runtime_int.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The HIP runtime's types, as its ABI has them. */
typedef int hipError_t;
typedef struct ihipModule_t *hipModule_t;
typedef struct ihipModuleSymbol_t *hipFunction_t;
typedef struct ihipStream_t *hipStream_t;
typedef struct ihipEvent_t *hipEvent_t;

enum {
	hipSuccess = 0,
	hipErrorNotFound = 500,
};

/* The start of hipDeviceProp_t as hipGetDeviceProperties fills it (the
 * layout of HIP 5, which HIP 6 keeps under that symbol next to its
 * hipGetDevicePropertiesR0600), up to the architecture's name; the rest
 * of the 792-byte structure (more in later releases) is padding here. */
typedef struct HipDeviceProp {
	char name[256];             /* the marketing name */
	size_t total_global_mem;    /* device memory in bytes */
	size_t shared_mem_per_block; /* LDS a block may use */
	int regs_per_block;         /* registers per block */
	int warp_size;              /* lanes per wave: 64 on CDNA */
	int max_threads_per_block;  /* threads per block */
	int max_threads_dim[3];     /* block extents */
	int max_grid_size[3];       /* grid extents */
	int clock_rate;             /* kHz */
	int memory_clock_rate;      /* kHz */
	int memory_bus_width;       /* bits */
	size_t total_const_mem;     /* bytes */
	int major, minor;           /* HIP's compute capability */
	int multi_processor_count;  /* compute units */
	int l2_cache_size;          /* bytes */
	int max_threads_per_mp;     /* threads per compute unit */
	int compute_mode;           /* the device's mode */
	int clock_instruction_rate; /* kHz of the clock* instructions */
	unsigned arch_flags;        /* hipDeviceArch_t, feature bits */
	int concurrent_kernels;     /* several kernels may run at once */
	int pci_domain, pci_bus, pci_device; /* PCI location */
	size_t max_shared_per_mp;   /* LDS per compute unit */
	int is_multi_gpu_board;     /* one of several GPUs on a board */
	int can_map_host_memory;    /* host memory can be mapped */
	int gcn_arch;               /* deprecated number (908, 910, ...) */
	char gcn_arch_name[256];    /* "gfx90a:sramecc+:xnack-" */
	char padding[4096];         /* the fields that follow, any release */
} HipDeviceProp;

_Static_assert(offsetof(HipDeviceProp, multi_processor_count) == 336,
	       "hipDeviceProp_t layout");
_Static_assert(offsetof(HipDeviceProp, gcn_arch_name) == 396,
	       "hipDeviceProp_t layout");

/* The HIP runtime's library (ROCm 6, ROCm 5). */
static const char *const runtime_sonames[] = {
	"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5",
};

/* The runtime entry points used. */
typedef struct HipRuntime {
	void *lib; /* the dlopen handle, NULL when compile-only */
	char path[4096]; /* the library loaded */
	hipError_t (*init)(unsigned flags);
	const char *(*get_error_name)(hipError_t e);
	const char *(*get_error_string)(hipError_t e);
	hipError_t (*get_device_count)(int *n);
	hipError_t (*set_device)(int ordinal);
	hipError_t (*get_device_properties)(HipDeviceProp *prop, int ordinal);
	hipError_t (*device_synchronize)(void);
	hipError_t (*module_load_data)(hipModule_t *mod, const void *image);
	hipError_t (*module_unload)(hipModule_t mod);
	hipError_t (*module_get_function)(hipFunction_t *fn, hipModule_t mod,
					  const char *name);
	hipError_t (*module_launch_kernel)(hipFunction_t fn, unsigned gx,
					   unsigned gy, unsigned gz, unsigned bx,
					   unsigned by, unsigned bz,
					   unsigned shared, hipStream_t stream,
					   void **params, void **extra);
	hipError_t (*malloc_)(void **ptr, size_t bytes);
	hipError_t (*free_)(void *ptr);
	hipError_t (*memcpy_htod)(void *dst, const void *src, size_t n);
	hipError_t (*memcpy_dtoh)(void *dst, const void *src, size_t n);
	hipError_t (*event_create)(hipEvent_t *ev);
	hipError_t (*event_record)(hipEvent_t ev, hipStream_t stream);
	hipError_t (*event_synchronize)(hipEvent_t ev);
	hipError_t (*event_elapsed_time)(float *ms, hipEvent_t start,
					 hipEvent_t end);
	hipError_t (*event_destroy)(hipEvent_t ev);
} HipRuntime;

static const struct {
	const char *name; /* the exported symbol */
	size_t offset;    /* its slot in HipRuntime */
} runtime_symbols[] = {
#define SYM(name, field) { name, offsetof(HipRuntime, field) }
	SYM("hipInit", init),
	SYM("hipGetErrorName", get_error_name),
	SYM("hipGetErrorString", get_error_string),
	SYM("hipGetDeviceCount", get_device_count),
	SYM("hipSetDevice", set_device),
	SYM("hipGetDeviceProperties", get_device_properties),
	SYM("hipDeviceSynchronize", device_synchronize),
	SYM("hipModuleLoadData", module_load_data),
	SYM("hipModuleUnload", module_unload),
	SYM("hipModuleGetFunction", module_get_function),
	SYM("hipModuleLaunchKernel", module_launch_kernel),
	SYM("hipMalloc", malloc_),
	SYM("hipFree", free_),
	SYM("hipMemcpyHtoD", memcpy_htod),
	SYM("hipMemcpyDtoH", memcpy_dtoh),
	SYM("hipEventCreate", event_create),
	SYM("hipEventRecord", event_record),
	SYM("hipEventSynchronize", event_synchronize),
	SYM("hipEventElapsedTime", event_elapsed_time),
	SYM("hipEventDestroy", event_destroy),
#undef SYM
};

/* Per-context state of the backend. */
typedef struct HipState {
	TilecGpu gpu;             /* what gpu_driver.c keeps; first */
	HipRuntime rt;            /* the runtime; rt.lib NULL if compile-only */
} HipState;

/* --- Errors ------------------------------------------------------------------ */

/* "hipErrorNoDevice (no ROCm-capable device is detected)", or the name
 * alone where the runtime's description is only the name again. */
static void
hip_describe(const TilecGpu *g, hipError_t e, char *out, size_t n)
{
	const HipRuntime *rt = &((const HipState *)g)->rt;
	const char *name = rt->get_error_name ? rt->get_error_name(e) : NULL;
	const char *text = rt->get_error_string ? rt->get_error_string(e) : NULL;
	if (name && text && strcmp(name, text) != 0)
		snprintf(out, n, "%s (%s)", name, text);
	else if (name)
		snprintf(out, n, "%s", name);
	else
		snprintf(out, n, "HIP error %d", e);
}

/* --- Opening the device ------------------------------------------------------- */

static tilec_status
open_runtime(tilec_context *ctx, HipRuntime *rt)
{
	TilecStr tried = { 0 };
	size_t n = sizeof runtime_sonames / sizeof *runtime_sonames;
	for (size_t i = 0; i < n && !rt->lib; i++) {
		dlerror();
		/* Never unloaded: the runtime keeps threads of its own. */
		rt->lib = dlopen(runtime_sonames[i],
				 RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
		if (rt->lib)
			snprintf(rt->path, sizeof rt->path, "%s",
				 runtime_sonames[i]);
		else
			tilec_rt_str_printf(&tried, "%s%s", i ? ", " : "",
					    runtime_sonames[i]);
	}
	if (!rt->lib) {
		tilec_status st = tilec_rt_fail(
			ctx, TILEC_ERR_UNAVAILABLE,
			"no HIP runtime: cannot load libamdhip64 (tried %s); "
			"running on an AMD GPU needs ROCm's HIP runtime (a "
			"compile-only context, TILEC_DEVICE_NONE, needs only "
			"hiprtc)",
			tilec_rt_str_cstr(&tried));
		tilec_rt_str_free(&tried);
		return st;
	}
	tilec_rt_str_free(&tried);
	TilecStr missing = { 0 };
	for (size_t i = 0; i < sizeof runtime_symbols / sizeof *runtime_symbols;
	     i++) {
		void *sym = dlsym(rt->lib, runtime_symbols[i].name);
		if (!sym)
			tilec_rt_str_printf(&missing, "%s%s",
					    missing.len ? ", " : "",
					    runtime_symbols[i].name);
		memcpy((char *)rt + runtime_symbols[i].offset, &sym, sizeof sym);
	}
	if (missing.len || missing.oom) {
		tilec_status st = tilec_rt_fail(
			ctx, TILEC_ERR_UNAVAILABLE,
			"the HIP runtime %s is too old for tilec: it lacks %s",
			rt->path, tilec_rt_str_cstr(&missing));
		tilec_rt_str_free(&missing);
		dlclose(rt->lib);
		memset(rt, 0, sizeof *rt);
		return st;
	}
	return TILEC_OK;
}

static tilec_status
open_device(tilec_context *ctx, HipState *s, int ordinal)
{
	HipRuntime *rt = &s->rt;
	hipError_t init = rt->init(0);
	int count = 0;
	hipError_t e = rt->get_device_count(&count);
	if (e != hipSuccess || count == 0) {
		char why[512];
		hip_describe(&s->gpu, init != hipSuccess ? init : e, why, sizeof why);
		return tilec_rt_fail(ctx, TILEC_ERR_UNAVAILABLE,
				     "no AMD GPU: the HIP runtime (%s) sees no "
				     "device (%s: %s); running a kernel needs a "
				     "GPU that ROCm supports (a compile-only "
				     "context, TILEC_DEVICE_NONE, does not)",
				     rt->path,
				     init != hipSuccess ? "hipInit"
							: "hipGetDeviceCount",
				     why);
	}
	if (init != hipSuccess)
		return tilec_rt_gpu_fail(ctx, &s->gpu, TILEC_ERR_UNAVAILABLE, init,
				"the HIP runtime cannot start (hipInit)");
	if (ordinal >= count)
		return tilec_rt_fail(ctx, TILEC_ERR_INVALID,
				     "no AMD GPU %d: the machine has %d", ordinal,
				     count);
	tilec_status st = tilec_rt_gpu_current(ctx, &s->gpu);
	if (st != TILEC_OK)
		return st;
	HipDeviceProp *prop = calloc(1, sizeof *prop);
	if (!prop)
		return tilec_rt_fail(ctx, TILEC_ERR_NOMEM, "out of memory");
	e = rt->get_device_properties(prop, ordinal);
	if (e != hipSuccess) {
		free(prop);
		return tilec_rt_gpu_fail(ctx, &s->gpu, TILEC_ERR_UNAVAILABLE, e,
				"cannot query AMD GPU %d", ordinal);
	}
	tilec_device_info *info = &s->gpu.info;
	snprintf(info->name, sizeof info->name, "%.*s",
		 (int)strnlen(prop->name, sizeof prop->name), prop->name);
	/* The processor without its target features (sramecc, xnack): a code
	 * object built for it loads in either mode. */
	const char *arch = prop->gcn_arch_name;
	size_t n = strnlen(arch, sizeof prop->gcn_arch_name);
	n = strcspn(arch, ":") < n ? strcspn(arch, ":") : n;
	if (n >= sizeof info->arch)
		n = 0;
	snprintf(info->arch, sizeof info->arch, "%.*s", (int)n, arch);
	info->multiprocessors = prop->multi_processor_count;
	info->max_shared_bytes = prop->shared_mem_per_block;
	info->total_memory = prop->total_global_mem;
	free(prop);
	if (strncmp(info->arch, "gfx", 3) != 0)
		info->arch[0] = '\0'; /* default_arch says what to do */
	return TILEC_OK;
}

/* --- The hooks gpu_driver.c calls -------------------------------------------- */

static HipRuntime *
rt_of(TilecGpu *g)
{
	return &((HipState *)g)->rt;
}

static tilec_status
hip_open(tilec_context *ctx, TilecGpu *g, int ordinal)
{
	HipState *s = (HipState *)g;
	tilec_status st = open_runtime(ctx, &s->rt);
	if (st == TILEC_OK)
		st = open_device(ctx, s, ordinal);
	return st;
}

static void
hip_close(TilecGpu *g)
{
	HipRuntime *rt = rt_of(g);
	if (rt->lib && (g->ev_start || g->ev_stop) &&
	    rt->set_device(g->ordinal) == hipSuccess) {
		if (g->ev_start)
			rt->event_destroy(g->ev_start);
		if (g->ev_stop)
			rt->event_destroy(g->ev_stop);
	}
	if (rt->lib)
		dlclose(rt->lib);
}

static hipError_t
hip_set_current(TilecGpu *g)
{
	return rt_of(g)->set_device(g->ordinal);
}

static hipError_t
hip_module_load(TilecGpu *g, void **mod, const void *image)
{
	hipModule_t m = NULL;
	hipError_t e = rt_of(g)->module_load_data(&m, image);
	*mod = m;
	return e;
}

static void
hip_module_unload(TilecGpu *g, void *mod)
{
	rt_of(g)->module_unload(mod);
}

static hipError_t
hip_get_function(TilecGpu *g, void *mod, const char *name, void **fn)
{
	hipFunction_t f = NULL;
	hipError_t e = rt_of(g)->module_get_function(&f, mod, name);
	*fn = f;
	return e;
}

static hipError_t
hip_launch(TilecGpu *g, void *fn, void **args, const tilec_launch_config *cfg)
{
	return rt_of(g)->module_launch_kernel(
		fn, cfg->grid[0], cfg->grid[1], cfg->grid[2], cfg->block[0],
		cfg->block[1], cfg->block[2], (unsigned)cfg->shared_bytes,
		(hipStream_t)cfg->stream, args, NULL);
}

static hipError_t
hip_synchronize(TilecGpu *g)
{
	return rt_of(g)->device_synchronize();
}

static hipError_t
hip_mem_alloc(TilecGpu *g, void **ptr, size_t bytes)
{
	return rt_of(g)->malloc_(ptr, bytes);
}

static hipError_t
hip_mem_free(TilecGpu *g, void *ptr)
{
	return rt_of(g)->free_(ptr);
}

static hipError_t
hip_mem_copy(TilecGpu *g, void *dst, const void *src, size_t bytes,
	     bool to_device)
{
	HipRuntime *rt = rt_of(g);
	return to_device ? rt->memcpy_htod(dst, src, bytes)
			 : rt->memcpy_dtoh(dst, src, bytes);
}

static hipError_t
hip_event_create(TilecGpu *g, void **ev)
{
	hipEvent_t e = NULL;
	hipError_t r = rt_of(g)->event_create(&e);
	*ev = e;
	return r;
}

static hipError_t
hip_event_record(TilecGpu *g, void *ev, void *stream)
{
	return rt_of(g)->event_record(ev, stream);
}

static hipError_t
hip_event_synchronize(TilecGpu *g, void *ev)
{
	return rt_of(g)->event_synchronize(ev);
}

static hipError_t
hip_event_elapsed(TilecGpu *g, float *ms, void *start, void *stop)
{
	return rt_of(g)->event_elapsed_time(ms, start, stop);
}

const TilecGpuTarget tilec_rt_hip_gpu = {
	.state_size = sizeof(HipState),
	.rtc = &tilec_rt_hiprtc,
	.api = "HIP",
	.device = "AMD GPU",
	.driver = "HIP runtime",
	.arch_examples = "gfx90a, gfx942, ...",
	.record_name = "hipEventRecord",
	.elapsed_name = "hipEventElapsedTime",
	.not_found = hipErrorNotFound,
	.shared_default = 0,
	.open = hip_open,
	.close = hip_close,
	.describe = hip_describe,
	.set_current = hip_set_current,
	.module_load = hip_module_load,
	.module_unload = hip_module_unload,
	.get_function = hip_get_function,
	.set_shared = NULL, /* CDNA: 64 KiB of LDS without opting in */
	.launch = hip_launch,
	.synchronize = hip_synchronize,
	.mem_alloc = hip_mem_alloc,
	.mem_free = hip_mem_free,
	.mem_copy = hip_mem_copy,
	.event_create = hip_event_create,
	.event_record = hip_event_record,
	.event_synchronize = hip_event_synchronize,
	.event_elapsed = hip_event_elapsed,
};
