/*
 * gpu_driver.c - the cuda and hip backends: their TilecBackendOps tables,
 * whose entries are shared and driven by a TilecGpuTarget (cuda_driver.c:
 * the CUDA driver API, hip_driver.c: the HIP runtime).
 *
 * A context on device N opens it through the target's hook (which loads
 * the driver library with dlopen and fills the device info) and makes
 * it current on the calling thread before every driver call, so a tilec
 * context may move between threads, one at a time.  A context on
 * TILEC_DEVICE_NONE is compile-only: it needs the runtime compiler but no
 * driver or GPU, compiles for the architecture the options name, stores
 * objects in the cache, and refuses to load kernels, allocate or launch.
 *
 * A module is the target's module handle and the kernels looked up in it;
 * a kernel is the `extern "C" __global__` function of its name.  Launches
 * pass args as kernelParams; where the target has set_shared, a launch
 * asking for more than shared_default bytes of dynamic shared memory
 * first raises the function's limit, once per size.  Device pointers
 * travel as `void *` holding the device address.  Messages name the
 * target with its table's words.
 */
#include "runtime_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One kernel looked up in a module. */
typedef struct GpuKernel {
	void *fn;                 /* the __global__ function */
	size_t shared_optin;      /* dynamic shared memory opted in so far */
	struct GpuKernel *next;   /* next kernel of the module */
	char name[];              /* its name */
} GpuKernel;

/* A loaded object (cubin, code object). */
typedef struct GpuModule {
	void *mod;                /* NULL on a compile-only context */
	GpuKernel *kernels;       /* kernels looked up so far */
} GpuModule;

/* --- Errors and the device ----------------------------------------------------- */

tilec_status
tilec_rt_gpu_fail(tilec_context *ctx, const TilecGpu *g, tilec_status st,
		  TilecGpuResult r, const char *fmt, ...)
{
	char msg[1024], why[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	g->t->describe(g, r, why, sizeof why);
	return tilec_rt_fail(ctx, st, "%s: %s", msg, why);
}

static TilecGpu *
gpu_state(tilec_context *ctx)
{
	return tilec_rt_backend_state(ctx);
}

tilec_status
tilec_rt_gpu_current(tilec_context *ctx, TilecGpu *g)
{
	TilecGpuResult r = g->t->set_current(g);
	if (r != 0)
		return tilec_rt_gpu_fail(ctx, g, TILEC_ERR_UNAVAILABLE, r,
					 "cannot make %s %d current",
					 g->t->device, g->ordinal);
	return TILEC_OK;
}

/* A device-only operation on a compile-only context. */
static tilec_status
need_device(tilec_context *ctx, const TilecGpu *g, const char *what)
{
	if (!g->info.compile_only)
		return TILEC_OK;
	return tilec_rt_fail(ctx, TILEC_ERR_UNAVAILABLE,
			     "this %s context is compile-only "
			     "(TILEC_DEVICE_NONE): it cannot %s; create the "
			     "context on a device",
			     g->t->api, what);
}

/* --- The backend table's entries ---------------------------------------------- */

static void gpu_fini(tilec_context *ctx);

static tilec_status
gpu_init(tilec_context *ctx, int device, const TilecGpuTarget *t)
{
	if (device < TILEC_DEVICE_NONE)
		return tilec_rt_fail(ctx, TILEC_ERR_INVALID,
				     "%s %d: use an ordinal (0, 1, ...) or "
				     "TILEC_DEVICE_NONE (-1) to compile only",
				     t->device, device);
	TilecGpu *g = calloc(1, t->state_size);
	if (!g)
		return tilec_rt_fail(ctx, TILEC_ERR_NOMEM, "out of memory");
	g->t = t;
	g->ordinal = device;
	g->info.compile_only = device == TILEC_DEVICE_NONE;
	tilec_rt_set_backend_state(ctx, g);
	tilec_status st = TILEC_OK;
	if (device != TILEC_DEVICE_NONE)
		st = t->open(ctx, g, device);
	if (st == TILEC_OK)
		st = t->rtc->open(ctx, &g->rtc);
	if (st != TILEC_OK)
		gpu_fini(ctx);
	return st;
}

static void
gpu_fini(tilec_context *ctx)
{
	TilecGpu *g = gpu_state(ctx);
	if (!g)
		return;
	g->t->close(g);
	tilec_rt_rtc_close(g->rtc);
	free(g);
	tilec_rt_set_backend_state(ctx, NULL);
}

static tilec_status
gpu_identity(tilec_context *ctx, const char **id)
{
	TilecGpu *g = gpu_state(ctx);
	if (!g || !g->rtc)
		return tilec_rt_fail(ctx, TILEC_ERR_UNAVAILABLE,
				     "%s is not loaded",
				     g ? g->t->rtc->name : "the compiler");
	*id = g->rtc->identity;
	return TILEC_OK;
}

static tilec_status
gpu_compile(tilec_context *ctx, const TilecCompileJob *job,
		     double *seconds)
{
	TilecGpu *g = gpu_state(ctx);
	if (!g || !g->rtc)
		return tilec_rt_fail(ctx, TILEC_ERR_UNAVAILABLE,
				     "%s is not loaded",
				     g ? g->t->rtc->name : "the compiler");
	return g->rtc->t->compile(ctx, g->rtc, job, seconds);
}

static const char *
gpu_default_arch(tilec_context *ctx)
{
	TilecGpu *g = gpu_state(ctx);
	if (g && !g->info.compile_only && g->info.arch[0])
		return g->info.arch;
	if (g && !g->info.compile_only)
		tilec_rt_fail(ctx, TILEC_ERR_INVALID,
			      "the %s does not say which architecture %s is: "
			      "name one in tilec_compile_options.arch (%s)",
			      g->t->driver, g->info.name, g->t->arch_examples);
	else if (g)
		tilec_rt_fail(ctx, TILEC_ERR_INVALID,
			      "a compile-only %s context has no device to take "
			      "the architecture from: name one in "
			      "tilec_compile_options.arch (%s)",
			      g->t->api, g->t->arch_examples);
	return NULL;
}

static tilec_status
gpu_load(tilec_context *ctx, const char *path, void **handle)
{
	TilecGpu *g = gpu_state(ctx);
	GpuModule *m = calloc(1, sizeof *m);
	if (!m)
		return tilec_rt_fail(ctx, TILEC_ERR_NOMEM, "out of memory");
	if (g->info.compile_only) {
		*handle = m; /* compile-only: the object stays on disk */
		return TILEC_OK;
	}
	char *image;
	size_t len;
	tilec_status st = tilec_rt_read_file(path, &image, &len);
	if (st != TILEC_OK) {
		free(m);
		return tilec_rt_fail(ctx, st, "cannot read %s", path);
	}
	st = tilec_rt_gpu_current(ctx, g);
	TilecGpuResult r = 0;
	if (st == TILEC_OK && (r = g->t->module_load(g, &m->mod, image)) != 0)
		st = tilec_rt_gpu_fail(ctx, g, TILEC_ERR_LOAD, r,
				       "cannot load %s on %s %d (%s, %s)", path,
				       g->t->device, g->ordinal, g->info.name,
				       g->info.arch);
	free(image);
	if (st != TILEC_OK) {
		free(m);
		return st;
	}
	*handle = m;
	return TILEC_OK;
}

static void
gpu_unload(tilec_context *ctx, void *handle)
{
	TilecGpu *g = gpu_state(ctx);
	GpuModule *m = handle;
	for (GpuKernel *k = m->kernels, *next; k; k = next) {
		next = k->next;
		free(k);
	}
	if (m->mod && tilec_rt_gpu_current(ctx, g) == TILEC_OK)
		g->t->module_unload(g, m->mod);
	free(m);
}

static void *
gpu_symbol(tilec_context *ctx, void *handle, const char *name)
{
	TilecGpu *g = gpu_state(ctx);
	GpuModule *m = handle;
	if (need_device(ctx, g, "load kernels") != TILEC_OK)
		return NULL;
	if (tilec_rt_gpu_current(ctx, g) != TILEC_OK)
		return NULL;
	void *fn;
	TilecGpuResult r = g->t->get_function(g, m->mod, name, &fn);
	if (r == g->t->not_found) {
		tilec_rt_fail(ctx, TILEC_ERR_NOT_FOUND,
			      "no kernel '%s' in the module (no extern \"C\" "
			      "__global__ function of that name)",
			      name);
		return NULL;
	}
	if (r != 0) {
		tilec_rt_gpu_fail(ctx, g, TILEC_ERR_LOAD, r,
				  "cannot find kernel %s", name);
		return NULL;
	}
	size_t n = strlen(name) + 1;
	GpuKernel *k = calloc(1, sizeof *k + n);
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

/* Check cfg against the device's limits and raise the kernel's
 * shared-memory limit if it needs to. */
static tilec_status
prepare_launch(tilec_context *ctx, TilecGpu *g, GpuKernel *k,
	       const tilec_launch_config *cfg)
{
	if (!cfg)
		return tilec_rt_fail(ctx, TILEC_ERR_INVALID,
				     "a %s launch of %s needs a launch "
				     "configuration (grid, block, shared "
				     "memory)",
				     g->t->api, k->name);
	for (int d = 0; d < 3; d++)
		if (cfg->grid[d] == 0 || cfg->block[d] == 0)
			return tilec_rt_fail(
				ctx, TILEC_ERR_INVALID,
				"launch of %s with grid (%u, %u, %u) and block "
				"(%u, %u, %u): every extent must be at least 1",
				k->name, cfg->grid[0], cfg->grid[1],
				cfg->grid[2], cfg->block[0], cfg->block[1],
				cfg->block[2]);
	if (cfg->shared_bytes > g->info.max_shared_bytes)
		return tilec_rt_fail(ctx, TILEC_ERR_LAUNCH,
				     "%s needs %zu bytes of shared memory per "
				     "block; %s allows at most %zu",
				     k->name, cfg->shared_bytes, g->info.name,
				     g->info.max_shared_bytes);
	if (g->t->set_shared && cfg->shared_bytes > g->t->shared_default &&
	    cfg->shared_bytes > k->shared_optin) {
		TilecGpuResult r = g->t->set_shared(g, k->fn,
						    (int)cfg->shared_bytes);
		if (r != 0)
			return tilec_rt_gpu_fail(ctx, g, TILEC_ERR_LAUNCH, r,
						 "cannot let %s use %zu bytes "
						 "of dynamic shared memory",
						 k->name, cfg->shared_bytes);
		k->shared_optin = cfg->shared_bytes;
	}
	return TILEC_OK;
}

static tilec_status
launch_now(tilec_context *ctx, TilecGpu *g, GpuKernel *k, void **args,
	   const tilec_launch_config *cfg)
{
	TilecGpuResult r = g->t->launch(g, k->fn, args, cfg);
	if (r != 0)
		return tilec_rt_gpu_fail(ctx, g, TILEC_ERR_LAUNCH, r,
					 "launch of %s (grid %ux%ux%u, block "
					 "%ux%ux%u, %zu bytes of shared "
					 "memory) failed",
					 k->name, cfg->grid[0], cfg->grid[1],
					 cfg->grid[2], cfg->block[0],
					 cfg->block[1], cfg->block[2],
					 cfg->shared_bytes);
	return TILEC_OK;
}

static tilec_status
gpu_launch(tilec_context *ctx, void *entry, void **args,
		    const tilec_launch_config *cfg)
{
	TilecGpu *g = gpu_state(ctx);
	GpuKernel *k = entry;
	tilec_status st = tilec_rt_gpu_current(ctx, g);
	if (st == TILEC_OK)
		st = prepare_launch(ctx, g, k, cfg);
	if (st == TILEC_OK)
		st = launch_now(ctx, g, k, args, cfg);
	return st;
}

static tilec_status
gpu_synchronize(tilec_context *ctx)
{
	TilecGpu *g = gpu_state(ctx);
	if (g->info.compile_only)
		return TILEC_OK; /* compile-only: nothing ever runs */
	tilec_status st = tilec_rt_gpu_current(ctx, g);
	if (st != TILEC_OK)
		return st;
	TilecGpuResult r = g->t->synchronize(g);
	if (r != 0)
		return tilec_rt_gpu_fail(ctx, g, TILEC_ERR_LAUNCH, r,
					 "a kernel on %s %d failed",
					 g->t->device, g->ordinal);
	return TILEC_OK;
}

static tilec_status
gpu_device_info(tilec_context *ctx, tilec_device_info *info)
{
	*info = gpu_state(ctx)->info;
	return TILEC_OK;
}

static tilec_status
gpu_mem_alloc(tilec_context *ctx, size_t bytes, void **ptr)
{
	TilecGpu *g = gpu_state(ctx);
	*ptr = NULL;
	tilec_status st = need_device(ctx, g, "allocate device memory");
	if (st == TILEC_OK)
		st = tilec_rt_gpu_current(ctx, g);
	if (st != TILEC_OK)
		return st;
	void *p = NULL;
	TilecGpuResult r = g->t->mem_alloc(g, &p, bytes ? bytes : 1);
	if (r != 0)
		return tilec_rt_gpu_fail(ctx, g, TILEC_ERR_NOMEM, r,
					 "cannot allocate %zu bytes on %s %d",
					 bytes, g->t->device, g->ordinal);
	*ptr = p;
	return TILEC_OK;
}

static tilec_status
gpu_mem_free(tilec_context *ctx, void *ptr)
{
	TilecGpu *g = gpu_state(ctx);
	tilec_status st = need_device(ctx, g, "free device memory");
	if (st == TILEC_OK)
		st = tilec_rt_gpu_current(ctx, g);
	if (st != TILEC_OK)
		return st;
	TilecGpuResult r = g->t->mem_free(g, ptr);
	if (r != 0)
		return tilec_rt_gpu_fail(ctx, g, TILEC_ERR_INVALID, r,
					 "cannot free device memory at %p", ptr);
	return TILEC_OK;
}

static tilec_status
gpu_mem_copy(tilec_context *ctx, void *dst, const void *src,
		      size_t bytes, bool to_device)
{
	TilecGpu *g = gpu_state(ctx);
	tilec_status st = need_device(ctx, g, "copy device memory");
	if (st == TILEC_OK)
		st = tilec_rt_gpu_current(ctx, g);
	if (st != TILEC_OK || bytes == 0)
		return st;
	TilecGpuResult r = g->t->mem_copy(g, dst, src, bytes, to_device);
	if (r != 0)
		return tilec_rt_gpu_fail(ctx, g, TILEC_ERR_LAUNCH, r,
					 "copying %zu bytes %s %s %d failed",
					 bytes, to_device ? "to" : "from",
					 g->t->device, g->ordinal);
	return TILEC_OK;
}

static tilec_status
gpu_time_launch(tilec_context *ctx, void *entry, void **args,
			 const tilec_launch_config *cfg, double *seconds)
{
	TilecGpu *g = gpu_state(ctx);
	const TilecGpuTarget *t = g->t;
	GpuKernel *k = entry;
	tilec_status st = tilec_rt_gpu_current(ctx, g);
	if (st == TILEC_OK)
		st = prepare_launch(ctx, g, k, cfg);
	if (st != TILEC_OK)
		return st;
	TilecGpuResult r = 0;
	if (!g->ev_start)
		r = t->event_create(g, &g->ev_start);
	if (r == 0 && !g->ev_stop)
		r = t->event_create(g, &g->ev_stop);
	if (r != 0)
		return tilec_rt_gpu_fail(ctx, g, TILEC_ERR_UNAVAILABLE, r,
					 "cannot create %s events for timing",
					 t->api);
	void *stream = cfg->stream;
	if ((r = t->event_record(g, g->ev_start, stream)) != 0)
		return tilec_rt_gpu_fail(ctx, g, TILEC_ERR_LAUNCH, r,
					 "%s failed", t->record_name);
	if ((st = launch_now(ctx, g, k, args, cfg)) != TILEC_OK)
		return st;
	if ((r = t->event_record(g, g->ev_stop, stream)) != 0 ||
	    (r = t->event_synchronize(g, g->ev_stop)) != 0)
		return tilec_rt_gpu_fail(ctx, g, TILEC_ERR_LAUNCH, r,
					 "timed launch of %s failed", k->name);
	float ms = 0;
	if ((r = t->event_elapsed(g, &ms, g->ev_start, g->ev_stop)) != 0)
		return tilec_rt_gpu_fail(ctx, g, TILEC_ERR_LAUNCH, r,
					 "%s failed", t->elapsed_name);
	*seconds = ms * 1e-3;
	return TILEC_OK;
}

static tilec_status
gpu_tensor_map(tilec_context *ctx, const TilecTmapSpec *spec, void *out)
{
	TilecGpu *g = gpu_state(ctx);
	if (g->info.compile_only || !g->t->tensor_map ||
	    g->t->tensor_map(g, spec, out) != 0)
		return TILEC_ERR_UNAVAILABLE;
	return TILEC_OK;
}

/* --- The backend tables ---------------------------------------------------------- */

static tilec_status
cuda_init(tilec_context *ctx, int device)
{
	return gpu_init(ctx, device, &tilec_rt_cuda_gpu);
}

static tilec_status
hip_init(tilec_context *ctx, int device)
{
	return gpu_init(ctx, device, &tilec_rt_hip_gpu);
}

/* The entries every GPU backend shares: all but the name and init. */
#define GPU_ENTRIES                             \
	.in_memory = true,                      \
	.fini = gpu_fini,                       \
	.identity = gpu_identity,               \
	.compile = gpu_compile,                 \
	.load = gpu_load,                       \
	.unload = gpu_unload,                   \
	.symbol = gpu_symbol,                   \
	.launch = gpu_launch,                   \
	.synchronize = gpu_synchronize,         \
	.default_arch = gpu_default_arch,       \
	.device_info = gpu_device_info,         \
	.mem_alloc = gpu_mem_alloc,             \
	.mem_free = gpu_mem_free,               \
	.mem_copy = gpu_mem_copy,               \
	.time_launch = gpu_time_launch,         \
	.tensor_map = gpu_tensor_map

const TilecBackendOps tilec_rt_cuda_backend = {
	.backend = TILEC_BACKEND_CUDA,
	.name = "cuda",
	.obj_ext = ".cubin",
	.src_ext = ".cu",
	.init = cuda_init,
	GPU_ENTRIES,
};

const TilecBackendOps tilec_rt_hip_backend = {
	.backend = TILEC_BACKEND_HIP,
	.name = "hip",
	.obj_ext = ".hsaco",
	.src_ext = ".hip",
	.init = hip_init,
	GPU_ENTRIES,
};
