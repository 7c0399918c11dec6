/*
 * hip_driver.c - the hip backend: hiprtc compiles (jit_hiprtc.c), the HIP
 * runtime's module API loads the code objects, moves memory and launches
 * kernels on AMD GPUs.
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
	TilecHiprtc *hiprtc;      /* the compiler */
	HipRuntime rt;            /* the runtime; rt.lib NULL if compile-only */
	int ordinal;              /* the device, or TILEC_DEVICE_NONE */
	tilec_device_info info;   /* what tilec_device_get_info reports */
	hipEvent_t ev_start, ev_stop; /* for timing; NULL until first used */
} HipState;

/* One kernel looked up in a module. */
typedef struct HipKernel {
	hipFunction_t fn;         /* the __global__ function */
	struct HipKernel *next;   /* next kernel of the module */
	char name[];              /* its name */
} HipKernel;

/* A loaded code object. */
typedef struct HipModule {
	hipModule_t mod;          /* NULL on a compile-only context */
	HipKernel *kernels;       /* kernels looked up so far */
} HipModule;

/* --- Errors ------------------------------------------------------------------ */

/* "hipErrorNoDevice (no ROCm-capable device is detected)", or the name
 * alone where the runtime's description is only the name again. */
static void
hip_describe(const HipRuntime *rt, hipError_t e, char *out, size_t n)
{
	const char *name = rt->get_error_name ? rt->get_error_name(e) : NULL;
	const char *text = rt->get_error_string ? rt->get_error_string(e) : NULL;
	if (name && text && strcmp(name, text) != 0)
		snprintf(out, n, "%s (%s)", name, text);
	else if (name)
		snprintf(out, n, "%s", name);
	else
		snprintf(out, n, "HIP error %d", e);
}

/* Fail with status st: the formatted message, ": ", the runtime's words
 * for e. */
TILEC_RT_PRINTF(5, 6)
static tilec_status
hip_fail(tilec_context *ctx, const HipRuntime *rt, tilec_status st,
	 hipError_t e, const char *fmt, ...)
{
	char msg[1024], why[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	hip_describe(rt, e, why, sizeof why);
	return tilec_rt_fail(ctx, st, "%s: %s", msg, why);
}

static HipState *
hip_state(tilec_context *ctx)
{
	return tilec_rt_backend_state(ctx);
}

/* Make the context's device current on this thread. */
static tilec_status
make_current(tilec_context *ctx, HipState *s)
{
	hipError_t e = s->rt.set_device(s->ordinal);
	if (e != hipSuccess)
		return hip_fail(ctx, &s->rt, TILEC_ERR_UNAVAILABLE, e,
				"cannot make AMD GPU %d current", s->ordinal);
	return TILEC_OK;
}

/* A device-only operation on a compile-only context. */
static tilec_status
need_device(tilec_context *ctx, const HipState *s, const char *what)
{
	if (s->rt.lib)
		return TILEC_OK;
	return tilec_rt_fail(ctx, TILEC_ERR_UNAVAILABLE,
			     "this HIP context is compile-only "
			     "(TILEC_DEVICE_NONE): it cannot %s; create the "
			     "context on a device",
			     what);
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
		hip_describe(rt, init != hipSuccess ? init : e, why, sizeof why);
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
		return hip_fail(ctx, rt, TILEC_ERR_UNAVAILABLE, init,
				"the HIP runtime cannot start (hipInit)");
	if (ordinal >= count)
		return tilec_rt_fail(ctx, TILEC_ERR_INVALID,
				     "no AMD GPU %d: the machine has %d", ordinal,
				     count);
	tilec_status st = make_current(ctx, s);
	if (st != TILEC_OK)
		return st;
	HipDeviceProp *prop = calloc(1, sizeof *prop);
	if (!prop)
		return tilec_rt_fail(ctx, TILEC_ERR_NOMEM, "out of memory");
	e = rt->get_device_properties(prop, ordinal);
	if (e != hipSuccess) {
		free(prop);
		return hip_fail(ctx, rt, TILEC_ERR_UNAVAILABLE, e,
				"cannot query AMD GPU %d", ordinal);
	}
	tilec_device_info *info = &s->info;
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

/* --- The backend table's entries ---------------------------------------------- */

static void hip_fini(tilec_context *ctx);

static tilec_status
hip_init(tilec_context *ctx, int device)
{
	if (device < TILEC_DEVICE_NONE)
		return tilec_rt_fail(ctx, TILEC_ERR_INVALID,
				     "AMD GPU %d: use an ordinal (0, 1, ...) or "
				     "TILEC_DEVICE_NONE (-1) to compile only",
				     device);
	HipState *s = calloc(1, sizeof *s);
	if (!s)
		return tilec_rt_fail(ctx, TILEC_ERR_NOMEM, "out of memory");
	s->ordinal = device;
	s->info.compile_only = device == TILEC_DEVICE_NONE;
	tilec_rt_set_backend_state(ctx, s);
	tilec_status st = TILEC_OK;
	if (device != TILEC_DEVICE_NONE) {
		st = open_runtime(ctx, &s->rt);
		if (st == TILEC_OK)
			st = open_device(ctx, s, device);
	}
	if (st == TILEC_OK)
		st = tilec_rt_hiprtc_open(ctx, &s->hiprtc);
	if (st != TILEC_OK)
		hip_fini(ctx);
	return st;
}

static void
hip_fini(tilec_context *ctx)
{
	HipState *s = hip_state(ctx);
	if (!s)
		return;
	if (s->rt.lib && (s->ev_start || s->ev_stop) &&
	    s->rt.set_device(s->ordinal) == hipSuccess) {
		if (s->ev_start)
			s->rt.event_destroy(s->ev_start);
		if (s->ev_stop)
			s->rt.event_destroy(s->ev_stop);
	}
	if (s->rt.lib)
		dlclose(s->rt.lib);
	tilec_rt_hiprtc_close(s->hiprtc);
	free(s);
	tilec_rt_set_backend_state(ctx, NULL);
}

static tilec_status
hip_identity(tilec_context *ctx, const char **id)
{
	HipState *s = hip_state(ctx);
	if (!s || !s->hiprtc)
		return tilec_rt_fail(ctx, TILEC_ERR_UNAVAILABLE,
				     "hiprtc is not loaded");
	*id = tilec_rt_hiprtc_identity(s->hiprtc);
	return TILEC_OK;
}

static tilec_status
hip_compile(tilec_context *ctx, const TilecCompileJob *job, double *seconds)
{
	HipState *s = hip_state(ctx);
	if (!s || !s->hiprtc)
		return tilec_rt_fail(ctx, TILEC_ERR_UNAVAILABLE,
				     "hiprtc is not loaded");
	return tilec_rt_hiprtc_compile(ctx, s->hiprtc, job, seconds);
}

static const char *
hip_default_arch(tilec_context *ctx)
{
	HipState *s = hip_state(ctx);
	if (s && s->rt.lib && s->info.arch[0])
		return s->info.arch;
	if (s && s->rt.lib)
		tilec_rt_fail(ctx, TILEC_ERR_INVALID,
			      "the HIP runtime does not say which architecture "
			      "%s is: name one in tilec_compile_options.arch "
			      "(gfx90a, gfx942, ...)",
			      s->info.name);
	else
		tilec_rt_fail(ctx, TILEC_ERR_INVALID,
			      "a compile-only HIP context has no device to take "
			      "the architecture from: name one in "
			      "tilec_compile_options.arch (gfx90a, gfx942, ...)");
	return NULL;
}

static tilec_status
hip_load(tilec_context *ctx, const char *path, void **handle)
{
	HipState *s = hip_state(ctx);
	HipModule *m = calloc(1, sizeof *m);
	if (!m)
		return tilec_rt_fail(ctx, TILEC_ERR_NOMEM, "out of memory");
	if (!s->rt.lib) {
		*handle = m; /* compile-only: the code object stays on disk */
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
	hipError_t e = hipSuccess;
	if (st == TILEC_OK &&
	    (e = s->rt.module_load_data(&m->mod, image)) != hipSuccess)
		st = hip_fail(ctx, &s->rt, TILEC_ERR_LOAD, e,
			      "cannot load %s on AMD GPU %d (%s, %s)", path,
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
hip_unload(tilec_context *ctx, void *handle)
{
	HipState *s = hip_state(ctx);
	HipModule *m = handle;
	for (HipKernel *k = m->kernels, *next; k; k = next) {
		next = k->next;
		free(k);
	}
	if (m->mod && make_current(ctx, s) == TILEC_OK)
		s->rt.module_unload(m->mod);
	free(m);
}

static void *
hip_symbol(tilec_context *ctx, void *handle, const char *name)
{
	HipState *s = hip_state(ctx);
	HipModule *m = handle;
	if (need_device(ctx, s, "load kernels") != TILEC_OK)
		return NULL;
	if (make_current(ctx, s) != TILEC_OK)
		return NULL;
	hipFunction_t fn;
	hipError_t e = s->rt.module_get_function(&fn, m->mod, name);
	if (e == hipErrorNotFound) {
		tilec_rt_fail(ctx, TILEC_ERR_NOT_FOUND,
			      "no kernel '%s' in the module (no extern \"C\" "
			      "__global__ function of that name)",
			      name);
		return NULL;
	}
	if (e != hipSuccess) {
		hip_fail(ctx, &s->rt, TILEC_ERR_LOAD, e, "cannot find kernel %s",
			 name);
		return NULL;
	}
	size_t n = strlen(name) + 1;
	HipKernel *k = calloc(1, sizeof *k + n);
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

/* Check cfg against the device's limits. */
static tilec_status
check_launch(tilec_context *ctx, HipState *s, HipKernel *k,
	     const tilec_launch_config *cfg)
{
	if (!cfg)
		return tilec_rt_fail(ctx, TILEC_ERR_INVALID,
				     "a HIP launch of %s needs a launch "
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
	return TILEC_OK;
}

static tilec_status
launch_now(tilec_context *ctx, HipState *s, HipKernel *k, void **args,
	   const tilec_launch_config *cfg)
{
	hipError_t e = s->rt.module_launch_kernel(
		k->fn, cfg->grid[0], cfg->grid[1], cfg->grid[2], cfg->block[0],
		cfg->block[1], cfg->block[2], (unsigned)cfg->shared_bytes,
		(hipStream_t)cfg->stream, args, NULL);
	if (e != hipSuccess)
		return hip_fail(ctx, &s->rt, TILEC_ERR_LAUNCH, e,
				"launch of %s (grid %ux%ux%u, block %ux%ux%u, "
				"%zu bytes of shared memory) failed",
				k->name, cfg->grid[0], cfg->grid[1],
				cfg->grid[2], cfg->block[0], cfg->block[1],
				cfg->block[2], cfg->shared_bytes);
	return TILEC_OK;
}

static tilec_status
hip_launch(tilec_context *ctx, void *entry, void **args,
	   const tilec_launch_config *cfg)
{
	HipState *s = hip_state(ctx);
	HipKernel *k = entry;
	tilec_status st = make_current(ctx, s);
	if (st == TILEC_OK)
		st = check_launch(ctx, s, k, cfg);
	if (st == TILEC_OK)
		st = launch_now(ctx, s, k, args, cfg);
	return st;
}

static tilec_status
hip_synchronize(tilec_context *ctx)
{
	HipState *s = hip_state(ctx);
	if (!s->rt.lib)
		return TILEC_OK; /* compile-only: nothing ever runs */
	tilec_status st = make_current(ctx, s);
	if (st != TILEC_OK)
		return st;
	hipError_t e = s->rt.device_synchronize();
	if (e != hipSuccess)
		return hip_fail(ctx, &s->rt, TILEC_ERR_LAUNCH, e,
				"a kernel on AMD GPU %d failed", s->ordinal);
	return TILEC_OK;
}

static tilec_status
hip_device_info(tilec_context *ctx, tilec_device_info *info)
{
	*info = hip_state(ctx)->info;
	return TILEC_OK;
}

static tilec_status
hip_mem_alloc(tilec_context *ctx, size_t bytes, void **ptr)
{
	HipState *s = hip_state(ctx);
	*ptr = NULL;
	tilec_status st = need_device(ctx, s, "allocate device memory");
	if (st == TILEC_OK)
		st = make_current(ctx, s);
	if (st != TILEC_OK)
		return st;
	hipError_t e = s->rt.malloc_(ptr, bytes ? bytes : 1);
	if (e != hipSuccess) {
		*ptr = NULL;
		return hip_fail(ctx, &s->rt, TILEC_ERR_NOMEM, e,
				"cannot allocate %zu bytes on AMD GPU %d", bytes,
				s->ordinal);
	}
	return TILEC_OK;
}

static tilec_status
hip_mem_free(tilec_context *ctx, void *ptr)
{
	HipState *s = hip_state(ctx);
	tilec_status st = need_device(ctx, s, "free device memory");
	if (st == TILEC_OK)
		st = make_current(ctx, s);
	if (st != TILEC_OK)
		return st;
	hipError_t e = s->rt.free_(ptr);
	if (e != hipSuccess)
		return hip_fail(ctx, &s->rt, TILEC_ERR_INVALID, e,
				"cannot free device memory at %p", ptr);
	return TILEC_OK;
}

static tilec_status
hip_mem_copy(tilec_context *ctx, void *dst, const void *src, size_t bytes,
	     bool to_device)
{
	HipState *s = hip_state(ctx);
	tilec_status st = need_device(ctx, s, "copy device memory");
	if (st == TILEC_OK)
		st = make_current(ctx, s);
	if (st != TILEC_OK || bytes == 0)
		return st;
	hipError_t e = to_device ? s->rt.memcpy_htod(dst, src, bytes)
				 : s->rt.memcpy_dtoh(dst, src, bytes);
	if (e != hipSuccess)
		return hip_fail(ctx, &s->rt, TILEC_ERR_LAUNCH, e,
				"copying %zu bytes %s AMD GPU %d failed", bytes,
				to_device ? "to" : "from", s->ordinal);
	return TILEC_OK;
}

static tilec_status
hip_time_launch(tilec_context *ctx, void *entry, void **args,
		const tilec_launch_config *cfg, double *seconds)
{
	HipState *s = hip_state(ctx);
	HipKernel *k = entry;
	tilec_status st = make_current(ctx, s);
	if (st == TILEC_OK)
		st = check_launch(ctx, s, k, cfg);
	if (st != TILEC_OK)
		return st;
	hipError_t e = hipSuccess;
	if (!s->ev_start)
		e = s->rt.event_create(&s->ev_start);
	if (e == hipSuccess && !s->ev_stop)
		e = s->rt.event_create(&s->ev_stop);
	if (e != hipSuccess)
		return hip_fail(ctx, &s->rt, TILEC_ERR_UNAVAILABLE, e,
				"cannot create HIP events for timing");
	hipStream_t stream = (hipStream_t)cfg->stream;
	if ((e = s->rt.event_record(s->ev_start, stream)) != hipSuccess)
		return hip_fail(ctx, &s->rt, TILEC_ERR_LAUNCH, e,
				"hipEventRecord failed");
	if ((st = launch_now(ctx, s, k, args, cfg)) != TILEC_OK)
		return st;
	if ((e = s->rt.event_record(s->ev_stop, stream)) != hipSuccess ||
	    (e = s->rt.event_synchronize(s->ev_stop)) != hipSuccess)
		return hip_fail(ctx, &s->rt, TILEC_ERR_LAUNCH, e,
				"timed launch of %s failed", k->name);
	float ms = 0;
	if ((e = s->rt.event_elapsed_time(&ms, s->ev_start, s->ev_stop)) !=
	    hipSuccess)
		return hip_fail(ctx, &s->rt, TILEC_ERR_LAUNCH, e,
				"hipEventElapsedTime failed");
	*seconds = ms * 1e-3;
	return TILEC_OK;
}

const TilecBackendOps tilec_rt_hip_backend = {
	.backend = TILEC_BACKEND_HIP,
	.name = "hip",
	.obj_ext = ".hsaco",
	.src_ext = ".hip",
	.in_memory = true,
	.init = hip_init,
	.fini = hip_fini,
	.identity = hip_identity,
	.compile = hip_compile,
	.load = hip_load,
	.unload = hip_unload,
	.symbol = hip_symbol,
	.launch = hip_launch,
	.synchronize = hip_synchronize,
	.default_arch = hip_default_arch,
	.device_info = hip_device_info,
	.mem_alloc = hip_mem_alloc,
	.mem_free = hip_mem_free,
	.mem_copy = hip_mem_copy,
	.time_launch = hip_time_launch,
};
