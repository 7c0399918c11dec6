/*
 * tilec_runtime.h - the tilec runtime: compile generated kernels, cache
 * them on disk, load them and launch them.
 *
 * The shape follows libtcc: create a context for a backend and a device,
 * compile source text with options into a module, look kernels up by name,
 * launch them, read the last error (with the compiler's log) as a string,
 * destroy what you created.  Nothing here prints, exits or keeps global
 * state: every function reports failure through its return value and the
 * context's error string.  A context and everything made from it is used by
 * one thread at a time; separate contexts are independent.
 *
 * Backends: openmp (generated C compiled by the system C compiler into a
 * shared object and loaded with dlopen) and cuda (generated CUDA C++
 * compiled by NVRTC into a cubin, loaded and launched through the driver
 * API; libnvrtc and libcuda are loaded with dlopen, so the runtime never
 * links them and their absence is TILEC_ERR_UNAVAILABLE) and hip (generated
 * HIP C++ compiled by hiprtc into a code object, loaded and launched
 * through the HIP runtime's module API; hiprtc and libamdhip64 are loaded
 * with dlopen likewise).
 *
 * Entry-point convention (what generated code provides): on the CPU, for
 * each kernel K an exported `void tilec_entry_K(void **args)`; on CUDA the
 * `extern "C" __global__` function K itself.  args[i] points to the value
 * of parameter i in signature order (CUDA's kernelParams); for a tensor
 * parameter args[i] points to a `void *` holding its data pointer, which
 * on a GPU is a device pointer from tilec_alloc (a CUdeviceptr value).
 * Tensor data is row-major and contiguous in the declared dtype.
 *
 * docs/runtime.md is the reference.
 */
#ifndef TILEC_RUNTIME_H
#define TILEC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the library's public functions: the shared libraries are built
 * with -fvisibility=hidden and export exactly these. */
#ifndef TILEC_API
#if defined(__GNUC__) && __GNUC__ >= 4
#define TILEC_API __attribute__((visibility("default")))
#else
#define TILEC_API
#endif
#endif

/* The runtime's version; part of every cache key. */
#define TILEC_RUNTIME_VERSION "0.1.0"

typedef enum tilec_backend {
	TILEC_BACKEND_OPENMP, /* C + OpenMP, system C compiler, dlopen */
	TILEC_BACKEND_CUDA,   /* CUDA C++ through NVRTC and the driver API */
	TILEC_BACKEND_HIP,    /* HIP C++ through hiprtc and the HIP runtime */
	TILEC_BACKEND_COUNT
} tilec_backend;

typedef enum tilec_status {
	TILEC_OK = 0,
	TILEC_ERR_INVALID,     /* a bad argument (NULL, unknown name, ...) */
	TILEC_ERR_UNAVAILABLE, /* backend, compiler or vendor library absent */
	TILEC_ERR_COMPILE,     /* the compiler rejected the source: see log */
	TILEC_ERR_LOAD,        /* the compiled module could not be loaded */
	TILEC_ERR_NOT_FOUND,   /* no such kernel in the module */
	TILEC_ERR_IO,          /* a file or process operation failed */
	TILEC_ERR_NOMEM,       /* out of memory */
	TILEC_ERR_LAUNCH,      /* the launch failed */
	TILEC_ERR_UNTRUSTED,   /* the cache (or scratch) directory could be
				  changed by another user: refused */
} tilec_status;

/* The device of a compile-only context (tilec_context_new): it compiles
 * for the architecture given in the options and loads nothing, so it works
 * on machines without a GPU or a driver. */
#define TILEC_DEVICE_NONE (-1)

typedef struct tilec_context tilec_context; /* a backend on one device */
typedef struct tilec_module tilec_module;   /* one compiled source */
typedef struct tilec_kernel tilec_kernel;   /* one entry point of a module */

/* Why tilec_context_new failed. */
typedef struct tilec_init_error {
	tilec_status status; /* TILEC_OK when the context was created */
	char message[512];   /* a sentence saying why; "" on success */
} tilec_init_error;

/* The backend's name ("openmp", "cuda", "hip"), or NULL. */
TILEC_API
const char *tilec_backend_name(tilec_backend backend);
/* The backend named `name`; returns -1 if unknown. */
TILEC_API
int tilec_backend_from_name(const char *name);
/* A short English phrase for a status ("compile error"). */
TILEC_API
const char *tilec_status_string(tilec_status status);

/* --- Contexts ---------------------------------------------------------------
 * tilec_context_new reads the environment once: TILEC_CC (the C compiler,
 * default "cc"), TILEC_CACHE_DIR (default $XDG_CACHE_HOME/tilec, or
 * ~/.cache/tilec), TILEC_COMPILE_TIMEOUT (seconds a C compiler may run,
 * default 300, 0 for no limit), and for cuda TILEC_NVRTC (the libnvrtc to load) and
 * CUDA_HOME / CUDA_PATH (where to look for it and for cuda_fp16.h).
 * For hip: TILEC_HIPRTC (the library with hiprtc to load), TILEC_COMGR
 * (libamd_comgr, asked which ISAs it knows), ROCM_PATH and HIP_PATH
 * (where to look for both).  `device` is 0 for openmp; for cuda and hip a
 * device ordinal, or TILEC_DEVICE_NONE for a compile-only context.  On failure it returns
 * NULL and fills *err (err may be NULL). */
TILEC_API
tilec_context *tilec_context_new(tilec_backend backend, int device,
				 tilec_init_error *err);
/* Free the context.  Modules still loaded keep it alive (their kernels
 * still launch); it is released with the last of them.  The context
 * itself must not be used afterwards. */
TILEC_API
void tilec_context_free(tilec_context *ctx);

/* The error of the last call on the context (every call clears it first),
 * with the compiler's log when a compile failed; "" if that call
 * succeeded.  Valid until the next call on the context. */
TILEC_API
const char *tilec_error(const tilec_context *ctx);

/* Context options; each copies its string.  NULL restores the default.
 * One that is refused (an error status) leaves the option as it was. */
/* Cache directory; "" disables the disk cache. */
TILEC_API
tilec_status tilec_set_cache_dir(tilec_context *ctx, const char *dir);
/* Compiler command (openmp): a program name or path, optionally followed
 * by words put before every other argument ("ccache gcc").  The cuda and
 * hip backends have none (TILEC_ERR_INVALID; TILEC_NVRTC and TILEC_HIPRTC
 * pick the library). */
TILEC_API
tilec_status tilec_set_compiler(tilec_context *ctx, const char *cc);
/* Extra compiler flags for every compile, space-separated. */
TILEC_API
tilec_status tilec_set_flags(tilec_context *ctx, const char *flags);
/* Seconds a compiler process (openmp) may run before it and everything it
 * started are killed and the compile fails; 0 for no limit.  NVRTC and
 * hiprtc compile inside the process and are not limited. */
TILEC_API
tilec_status tilec_set_compile_timeout(tilec_context *ctx, double seconds);
/* The directory the cache is using, or "" when disabled. */
TILEC_API
const char *tilec_cache_dir(const tilec_context *ctx);
/* The context's backend (a tilec_backend), or -1 for NULL. */
TILEC_API
int tilec_context_backend(const tilec_context *ctx);

/* --- Devices ------------------------------------------------------------- */

/* What a context runs on. */
typedef struct tilec_device_info {
	char name[256];        /* "NVIDIA H200"; the CPU's model on openmp;
				  "" when compile-only */
	char arch[32];         /* what compiles target when the options name
				  no arch: "sm_90a", "gfx90a", "native"; "" when
				  compile-only (the options must name one) */
	int compile_only;      /* 1: TILEC_DEVICE_NONE, nothing runs */
	int cc_major;          /* CUDA compute capability; 0 elsewhere */
	int cc_minor;
	int multiprocessors;   /* SMs; 0 on the CPU */
	size_t max_shared_bytes; /* dynamic shared memory a block may opt
				    in to; 0 on the CPU */
	size_t total_memory;   /* device memory in bytes; 0 on the CPU */
} tilec_device_info;

TILEC_API
tilec_status tilec_device_get_info(tilec_context *ctx,
				   tilec_device_info *info);

/* --- Memory -----------------------------------------------------------------
 * Buffers a kernel can read and write: device memory on a GPU (the
 * `void *` holds the device address, a CUdeviceptr on cuda, and must not
 * be dereferenced on the host), 64-byte aligned host memory on the CPU,
 * whose pages (of a buffer of 4 MiB or more) tilec_alloc first touches
 * from threads on the cores the kernels' threads run on, each in the
 * memory node of the thread whose share of a grid uses it
 * (docs/runtime.md, "Host memory and threads").
 * Copies are synchronous: they wait for earlier work on the default stream
 * and are complete when they return.  tilec_free(ctx, NULL) does nothing. */
TILEC_API
tilec_status tilec_alloc(tilec_context *ctx, size_t bytes, void **ptr);
TILEC_API
tilec_status tilec_free(tilec_context *ctx, void *ptr);
TILEC_API
tilec_status tilec_memcpy_h2d(tilec_context *ctx, void *dst,
			      const void *src, size_t bytes);
TILEC_API
tilec_status tilec_memcpy_d2h(tilec_context *ctx, void *dst,
			      const void *src, size_t bytes);

/* --- Compiling ----------------------------------------------------------- */

/* A header made visible to the compiled source under `name`
 * (`#include "name"`), like NVRTC's headers.  Names are relative paths
 * ("cpu/tilec_cpu.h"); no "..", no leading '/'. */
typedef struct tilec_header {
	const char *name; /* the include name */
	const char *text; /* its contents */
	size_t len;       /* bytes in text */
} tilec_header;

/* Versioned by its first field: tilec_compile_options_init sets `size`
 * to sizeof the struct the caller was compiled with, so a program built
 * against an older header keeps working when fields are added at the end
 * (they read as zero), and a newer program's fields that this library
 * does not know are refused unless zero.  A struct not initialized by it
 * (size 0) is TILEC_ERR_INVALID. */
typedef struct tilec_compile_options {
	size_t size; /* set by tilec_compile_options_init; never by hand */
	/* File name the source is compiled under (compiler messages name
	 * it), e.g. "gemm.c"; NULL gives "kernel.c". */
	const char *name;
	/* Target architecture: -march= value for openmp ("native" when
	 * NULL); for cuda "sm_80", "sm_90a" ... (the device's own when NULL;
	 * required by a compile-only context); gfx arch for hip. */
	const char *arch;
	/* Extra flags for this compile, space-separated, after the
	 * context's; NULL for none. */
	const char *flags;
	const tilec_header *headers; /* nheaders headers, or NULL */
	int nheaders;
	int no_cache; /* nonzero: neither read nor write the disk cache */
	/* Kernels the module must define (nkernels names, or NULL): a
	 * freshly compiled object lacking one is TILEC_ERR_COMPILE and is
	 * not cached; a cached one lacking one is rebuilt. */
	const char *const *kernels;
	int nkernels;
	/* The source's launch document (`tilec --emit=launch`,
	 * docs/launch.md), or NULL: each kernel it describes gets that
	 * signature, which tilec_launch_checked checks arguments against.
	 * tilec_jit passes its translation's.  A malformed document, or one
	 * for another backend, is TILEC_ERR_INVALID. */
	const char *manifest;
} tilec_compile_options;

/* Fill *o with the defaults (every field zero/NULL) and set o->size. */
TILEC_API
void tilec_compile_options_init(tilec_compile_options *o);

/* Compile `len` bytes of generated source into a module (from the disk
 * cache when an identical compile was done before).  opts may be NULL.
 * Every object is loaded (and checked for opts->kernels) before it is
 * cached.  Returns NULL on failure; tilec_error says why, with the
 * compiler log.  A cache directory that someone else could write to is
 * refused: TILEC_ERR_UNTRUSTED (docs/runtime.md, "Trust"). */
TILEC_API
tilec_module *tilec_compile(tilec_context *ctx, const char *source,
			    size_t len, const tilec_compile_options *opts);
/* Free a module and its kernels.  Freeing it twice, or using it or one of
 * its kernels afterwards, is a bug; builds without NDEBUG catch it and
 * abort with a message. */
TILEC_API
void tilec_module_free(tilec_module *mod);

/* How a module came to be. */
typedef struct tilec_module_info {
	int from_cache;         /* 1: loaded from the disk cache */
	int rebuilt_corrupt;    /* 1: a damaged or refused cache entry was
				   replaced (note says which and why) */
	double compile_seconds; /* compiler wall time; 0 on a cache hit */
	double total_seconds;   /* tilec_compile's wall time */
	char key[65];           /* cache key, SHA-256 in hex */
	char path[4096];        /* the loaded object file (.so, .cubin; ""
				   once unlinked) */
	char note[1024];        /* with rebuilt_corrupt, the entry's file and
				   what was wrong with it; else "" */
} tilec_module_info;

TILEC_API
tilec_status tilec_module_get_info(const tilec_module *mod,
				   tilec_module_info *info);

/* The kernel `name` (resolves the entry point tilec_entry_<name>, or the
 * __global__ function <name> on cuda).  The kernel belongs to the module.
 * NULL if absent, or on a compile-only context (see tilec_error). */
TILEC_API
tilec_kernel *tilec_module_kernel(tilec_module *mod, const char *name);

/* --- Launching ---------------------------------------------------------------
 * On the CPU a launch runs the whole grid and returns when it is done; the
 * entry point derives the grid from the arguments.  GPU launches take the
 * grid, block size, dynamic shared memory and stream from cfg (required;
 * every grid and block extent at least 1) and are asynchronous on the
 * stream: errors inside the kernel show at the next tilec_synchronize.
 * On cuda, shared_bytes above 48 KiB sets the kernel's opt-in limit
 * (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) first. */
typedef struct tilec_launch_config {
	unsigned grid[3];     /* blocks along x, y, z (GPU) */
	unsigned block[3];    /* threads per block (GPU) */
	size_t shared_bytes;  /* dynamic shared memory (GPU) */
	void *stream;         /* CUstream / hipStream_t, NULL = default */
} tilec_launch_config;

/* The unchecked launch, for callers that know the kernel's ABI (the
 * generated launch functions of `tilec export`, tools that read the
 * launch document themselves).  cfg may be NULL on the CPU.  args must
 * hold one pointer per parameter of the kernel, in signature order, each
 * to a value of the parameter's C type (docs/launch.md): the runtime
 * cannot check their number or types (a short array is read past its
 * end, a swapped one computes garbage).  tilec_launch_checked is the safe
 * way. */
TILEC_API
tilec_status tilec_launch(tilec_kernel *k, void **args,
			  const tilec_launch_config *cfg);

/* --- Checked launches ---------------------------------------------------------
 * A kernel whose module was compiled with its launch document (the
 * manifest option; tilec_jit does it) knows its signature: the
 * parameters, their dtypes, ranks and declared extents, which scalars
 * are the extents of which tensor dims, its grid as expressions, threads
 * and shared memory.  tilec_launch_checked takes the arguments as
 * tensors (pointer, dtype, rank, shape, strides) and scalars, checks them
 * against it and computes the launch itself.  docs/runtime.md ("Checked
 * launches") is the reference. */

/* Element types, as the tile language names them (tilec_dtype_name). */
typedef enum tilec_dtype {
	TILEC_F64,
	TILEC_F32,
	TILEC_F16,
	TILEC_BF16,
	TILEC_FP8E4M3,
	TILEC_FP8E5M2,
	TILEC_I64,
	TILEC_I32,
	TILEC_I8,
	TILEC_U8,
	TILEC_I4,   /* two a byte, low nibble first */
	TILEC_BOOL, /* one byte each */
	TILEC_DTYPE_COUNT
} tilec_dtype;

/* "f16", or NULL for a value outside the enum. */
TILEC_API
const char *tilec_dtype_name(tilec_dtype dtype);
/* The dtype named `name`; -1 if unknown. */
TILEC_API
int tilec_dtype_from_name(const char *name);

typedef enum tilec_arg_kind {
	TILEC_ARG_TENSOR = 1, /* data, dtype, rank, shape, strides */
	TILEC_ARG_INT,        /* ivalue */
	TILEC_ARG_FLOAT,      /* fvalue */
} tilec_arg_kind;

/* One argument.  Made by tilec_arg_tensor, tilec_arg_int or
 * tilec_arg_float, which set `size`: the runtime steps through an array
 * of them by the first one's size, so an array built against an older or
 * newer header works as tilec_compile_options does (fields a runtime
 * does not know must be zero). */
typedef struct tilec_arg {
	size_t size;          /* sizeof the struct the caller was built with */
	const char *name;     /* the parameter; NULL: by position */
	tilec_arg_kind kind;
	/* TILEC_ARG_TENSOR: the data (a device pointer on GPUs), its
	 * element type, rank, extents (rank of them, outermost first) and
	 * strides in elements (NULL: row-major contiguous). */
	void *data;
	tilec_dtype dtype;
	int rank;
	const int64_t *shape;
	const int64_t *strides;
	long long ivalue;     /* TILEC_ARG_INT */
	double fvalue;        /* TILEC_ARG_FLOAT */
	/* TILEC_ARG_TENSOR: where data is, when the caller knows it
	 * (TILEC_MEMORY_HOST, or TILEC_MEMORY_DEVICE on GPU `device`);
	 * TILEC_MEMORY_UNKNOWN, as tilec_arg_tensor sets it: not checked. */
	int memory;
	int device;
	/* TILEC_ARG_TENSOR: nonzero when the data must not be written (a
	 * read-only NumPy array, a read-only buffer): refused for a
	 * parameter that is not const, which the kernel may write.  Added
	 * after `device`: an argument whose size ends before it is
	 * writable. */
	int read_only;
} tilec_arg;

enum {
	TILEC_MEMORY_UNKNOWN = 0,
	TILEC_MEMORY_HOST = 1,
	TILEC_MEMORY_DEVICE = 2,
};

TILEC_API
tilec_arg tilec_arg_tensor(const char *name, void *data, tilec_dtype dtype,
			   int rank, const int64_t *shape,
			   const int64_t *strides);
TILEC_API
tilec_arg tilec_arg_int(const char *name, long long value);
TILEC_API
tilec_arg tilec_arg_float(const char *name, double value);

/* Launch k with nargs arguments on `stream` (NULL: the default stream;
 * ignored on the CPU).  Named arguments go to their parameter; the ones
 * without a name fill, in signature order, either every parameter or
 * every parameter that cannot be inferred (the tensors and the scalars
 * that are no tensor dim's extent).  A scalar that is a tensor dim's
 * extent may be left out: it is taken from the tensor's shape.  Checked:
 * every parameter given once and no argument left over; tensors for
 * tensors, integers for integer scalars (numbers for float ones); each
 * tensor's dtype and rank; its shape against the declared extents, every
 * extent scalar agreeing with every dim it is the extent of; row-major
 * contiguous data (strides of dims of extent 1 do not matter), aligned to
 * its element, not NULL unless empty, not read-only where the parameter
 * is not const; integer scalars within their C
 * type; a tensor in the memory the backend runs on (host memory on
 * openmp, the context's device on GPUs) when the argument says where it
 * is.  The grid is computed from the kernel's expressions
 * (docs/launch.md); an empty grid launches nothing.  Any mismatch is
 * TILEC_ERR_INVALID with tilec_error naming the parameter; a kernel
 * without a signature is TILEC_ERR_INVALID too.  GPU launches are
 * asynchronous, as tilec_launch's. */
TILEC_API
tilec_status tilec_launch_checked(tilec_kernel *k, const tilec_arg *args,
				  int nargs, void *stream);

/* What the last tilec_launch_checked of k found wrong, for callers that
 * sort errors (the Python package raises TypeError or ValueError):
 * TILEC_PROBLEM_TYPE for the form of the call (an argument of the wrong
 * kind or dtype, a missing, extra, unknown or repeated one),
 * TILEC_PROBLEM_VALUE for any other mismatch (rank, shape, strides,
 * alignment, memory, a read-only output, a value out of range, an
 * undefined grid), and
 * TILEC_PROBLEM_NONE after a launch that passed its checks. */
enum {
	TILEC_PROBLEM_NONE = 0,
	TILEC_PROBLEM_TYPE = 1,
	TILEC_PROBLEM_VALUE = 2,
};
TILEC_API
int tilec_launch_problem(const tilec_kernel *k);
/* Wait until every launch on the context has finished. */
TILEC_API
tilec_status tilec_synchronize(tilec_context *ctx);

/* --- Timing -----------------------------------------------------------------
 * Wall-clock timing on the CPU; device events around each launch on GPUs
 * (cuEventRecord before and after it on cfg's stream). */

/* Seconds on a monotonic clock. */
TILEC_API
double tilec_now(void);

typedef struct tilec_bench_result {
	double median_s; /* median time of one launch */
	double min_s;    /* fastest launch */
	double mean_s;   /* mean launch time */
	int runs;        /* timed launches */
} tilec_bench_result;

/* Launch k `warmup` times untimed, then `repeat` times timed, one launch
 * per timing.  Launch i uses arg_sets[i % nsets], so rotating through sets
 * of distinct buffers keeps caches from flattering the result. */
TILEC_API
tilec_status tilec_bench(tilec_kernel *k, void **const *arg_sets, int nsets,
			 const tilec_launch_config *cfg, int warmup,
			 int repeat, tilec_bench_result *out);

/* --- Hashing ---------------------------------------------------------------
 * The SHA-256 of n bytes as 64 lowercase hex digits and a NUL, as
 * `sha256sum` prints it: how tuning records and exported files name the
 * tile program they came from. */
TILEC_API
void tilec_sha256_hex(const void *data, size_t n, char hex[65]);

/* --- Host-side element conversions --------------------------------------------
 * For filling and reading tensors of narrow float types on the host.  All
 * round to nearest, ties to even.  Overflow gives infinity, except fp8e4m3,
 * which has no infinity: values that round past 448 give NaN (0x7f). */
TILEC_API
uint16_t tilec_f16_from_double(double x);
TILEC_API
double tilec_f16_to_double(uint16_t h);
TILEC_API
uint16_t tilec_bf16_from_double(double x);
TILEC_API
double tilec_bf16_to_double(uint16_t h);
TILEC_API
uint8_t tilec_fp8e4m3_from_double(double x);
TILEC_API
double tilec_fp8e4m3_to_double(uint8_t h);
TILEC_API
uint8_t tilec_fp8e5m2_from_double(double x);
TILEC_API
double tilec_fp8e5m2_to_double(uint8_t h);

#ifdef __cplusplus
}
#endif

#endif /* TILEC_RUNTIME_H */
