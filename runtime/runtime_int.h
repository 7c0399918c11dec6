/*
 * runtime_int.h - the runtime's private vocabulary.
 *
 * Shared by runtime.c (the public API), cache.c (the disk cache),
 * sha256.c (hashing) and the backends (jit_cc.c: the system C compiler;
 * jit_nvrtc.c and cuda_driver.c: NVRTC and the CUDA driver; jit_hiprtc.c
 * and hip_driver.c: hiprtc and the HIP runtime; what the two GPU backends
 * share is in jit_rtc.c and gpu_driver.c, driven by per-target const
 * tables).  A backend is a const table of function pointers; runtime.c
 * drives every backend the same way: compile to an object file, store it
 * in the cache, load it, look up entry points, launch.  Functions shared
 * across runtime files carry the tilec_rt_ prefix; none is public.
 */
#ifndef TILEC_RUNTIME_INT_H
#define TILEC_RUNTIME_INT_H

#include "tilec_runtime.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define TILEC_RT_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define TILEC_RT_PRINTF(fmt, args)
#endif

/* ==== cpu_place.c: host buffers for CPU kernels ============================ */

/* Touch the pages of p (bytes long, just allocated) from threads on the
 * cores the kernels' OpenMP threads run on, each its share, so that each
 * page is in the memory node of the thread that will use it. */
void tilec_rt_first_touch(void *p, size_t bytes);

/* ==== runtime.c: growable strings and errors =============================== */

/* A growable NUL-terminated string.  On allocation failure it sets `oom`
 * and stops growing, so callers check once at the end. */
typedef struct TilecStr {
	char *data;  /* NUL-terminated text, malloc'd (NULL while empty) */
	size_t len;  /* bytes used, excluding the NUL */
	size_t cap;  /* bytes allocated */
	bool oom;    /* an append failed for lack of memory */
} TilecStr;

void tilec_rt_str_free(TilecStr *s);
void tilec_rt_str_append(TilecStr *s, const char *p, size_t n);
void tilec_rt_str_printf(TilecStr *s, const char *fmt, ...)
	TILEC_RT_PRINTF(2, 3);
/* The text, "" when empty. */
const char *tilec_rt_str_cstr(const TilecStr *s);

/* Replace the context's error with a formatted message; returns status. */
tilec_status tilec_rt_fail(tilec_context *ctx, tilec_status status,
			   const char *fmt, ...) TILEC_RT_PRINTF(3, 4);
/* Clear the context's error. */
void tilec_rt_clear_error(tilec_context *ctx);
/* Append text (a compiler log) to the context's current error. */
void tilec_rt_fail_append(tilec_context *ctx, const char *text, size_t n);

/* Split `words` at spaces and tabs into a malloc'd NULL-terminated vector
 * of malloc'd strings, appended to *argv (which has *argc entries). */
bool tilec_rt_split_words(const char *words, char ***argv, int *argc);
void tilec_rt_free_words(char **argv, int argc);

/* Read a whole file into malloc'd memory (NUL-terminated). */
tilec_status tilec_rt_read_file(const char *path, char **data, size_t *len);
/* Write a file, creating directories for names with '/'. */
tilec_status tilec_rt_write_file(const char *dir, const char *name,
				 const char *data, size_t len);
/* Remove a directory tree (a scratch directory). */
void tilec_rt_remove_tree(const char *dir);

/* ==== sha256.c: FIPS 180-4 SHA-256 ========================================= */

typedef struct TilecSha256 {
	uint32_t h[8];         /* the chaining state */
	uint64_t nbytes;       /* message bytes absorbed so far */
	uint8_t block[64];     /* the partial block */
	size_t nblock;         /* bytes in block */
} TilecSha256;

void tilec_rt_sha256_init(TilecSha256 *s);
void tilec_rt_sha256_update(TilecSha256 *s, const void *data, size_t n);
void tilec_rt_sha256_final(TilecSha256 *s, uint8_t digest[32]);
/* digest -> 64 lower-case hex digits and a NUL. */
void tilec_rt_sha256_hex(const uint8_t digest[32], char hex[65]);
/* Hash a buffer. */
void tilec_rt_sha256(const void *data, size_t n, uint8_t digest[32]);
/* Hash what is left to read of fd; false on a read error or when it holds
 * more than `limit` bytes.  *size is the bytes hashed. */
bool tilec_rt_sha256_fd(int fd, uint64_t limit, uint8_t digest[32],
			uint64_t *size);

/* ==== json.c: a small JSON reader ========================================= */

typedef enum TilecJsonKind {
	TILEC_JSON_NULL,
	TILEC_JSON_BOOL,
	TILEC_JSON_NUMBER,
	TILEC_JSON_STRING,
	TILEC_JSON_ARRAY,
	TILEC_JSON_OBJECT,
} TilecJsonKind;

/* One value of a parsed document; every part malloc'd. */
typedef struct TilecJson {
	TilecJsonKind kind;
	bool boolean;             /* BOOL */
	bool integral;            /* NUMBER: no fraction or exponent */
	long long ivalue;         /* NUMBER, integral: the value (fits) */
	double fvalue;            /* NUMBER: the value */
	char *string;             /* STRING: UTF-8, NUL-terminated */
	struct TilecJson **items; /* ARRAY, OBJECT: n values in order */
	char **keys;              /* OBJECT: the n member names */
	int n, cap;               /* items used and allocated */
} TilecJson;

/* Parse len bytes of JSON; NULL with a sentence in error[nerror] (where
 * and why) if they are not one JSON value. */
TilecJson *tilec_rt_json_parse(const char *text, size_t len, char *error,
			       size_t nerror);
void tilec_rt_json_free(TilecJson *j);
/* Member `key` of object j (the first of that name), or NULL. */
const TilecJson *tilec_rt_json_get(const TilecJson *j, const char *key);

/* ==== signature.c: kernel signatures and checked launches ================= */

typedef struct TilecSignature TilecSignature;

/* The signatures of the kernels of launch document `text`
 * (docs/launch.md), which must be for backend `backend` ("openmp"):
 * *sigs gets *nsigs of them (free each with tilec_rt_signature_free, then
 * the array).  A malformed document is TILEC_ERR_INVALID with the
 * context's error saying what is wrong. */
tilec_status tilec_rt_signatures_parse(tilec_context *ctx, const char *backend,
				       const char *text, TilecSignature ***sigs,
				       int *nsigs);
const char *tilec_rt_signature_kernel(const TilecSignature *s);
void tilec_rt_signature_free(TilecSignature *s);
/* The caller's room for a launch's working arrays: enough for a kernel
 * of up to 16 parameters called with up to 16 arguments, so that such a
 * launch allocates nothing. */
typedef struct TilecLaunchBuf {
	union {
		max_align_t align;
		unsigned char bytes[3072];
	} room;
	void *heap; /* the malloc'd block used instead, or NULL: free it */
} TilecLaunchBuf;
/* Check nargs arguments against s (tilec_launch_checked says how; the
 * context runs `backend` on GPU `device`, which has `sms` SMs, 0 where
 * none is known: a grid that reads them is then refused) and
 * prepare the launch: *argv gets a pointer per parameter, in `buf` when
 * the working arrays fit there and in one malloc'd block otherwise
 * (buf->heap: free it after the launch; on failure nothing is left to
 * free), *cfg the grid, block, shared memory and stream, *empty
 * whether the grid is empty, *aligned whether the launch is aligned
 * (docs/runtime.md, "Aligned launches": the kernel's TILEC_ALIGNED build
 * may run it).  A mismatch is TILEC_ERR_INVALID, the
 * context's error naming the kernel and the parameter, *problem its
 * TILEC_PROBLEM_ kind. */
tilec_status tilec_rt_prepare_launch(tilec_context *ctx,
				     const TilecSignature *s,
				     tilec_backend backend, int device,
				     int sms, const tilec_arg *args, int nargs,
				     void *stream, TilecLaunchBuf *buf,
				     void ***argv, tilec_launch_config *cfg,
				     bool *empty, bool *aligned, int *problem);

/* Bytes of an element of dtype (0 for i4, packed two a byte). */
int tilec_rt_dtype_bytes(tilec_dtype dtype);
/* How many tensor maps s's kernel takes after its parameters (0 for a
 * NULL s). */
int tilec_rt_signature_tmaps(const TilecSignature *s);
/* Whether s's grid (or a shape) reads the device's SMs (false for a
 * NULL s). */
bool tilec_rt_signature_sms(const TilecSignature *s);
/* A raw launch's argument array (args: a pointer per parameter, as
 * tilec_launch takes it) with s's tensor maps built and appended, in
 * `buf` or one malloc'd block (buf->heap: free it after the launch).
 * *aligned: whether the launch is aligned (docs/runtime.md, "Aligned
 * launches"), as tilec_rt_prepare_launch's. */
tilec_status tilec_rt_raw_tmaps(tilec_context *ctx, const TilecSignature *s,
				void **args, TilecLaunchBuf *buf,
				void ***argv, bool *aligned);
/* How many tensors s lists under "aligned" (0 for a NULL s): nonzero
 * where its kernel has a build for aligned launches. */
int tilec_rt_signature_aligned(const TilecSignature *s);

/* ==== cache.c: the disk cache ============================================== *
 * An entry is two files in the cache directory: the object, named by the
 * SHA-256 of its own bytes (<objhash><ext>), and a small record named by the
 * key (<key>.entry) giving the object's size and hash.  Both are written to
 * a temporary file in the same directory, fsync'd and renamed into place,
 * the object first; a reader trusts an object only after checking its size
 * and hash against the record. */

typedef enum TilecCacheResult {
	TILEC_CACHE_HIT,     /* a verified object is at path */
	TILEC_CACHE_MISS,    /* no record for the key */
	TILEC_CACHE_CORRUPT, /* a record that is damaged or refused, or whose
				object is missing, altered or refused */
} TilecCacheResult;

/* An open, checked cache directory. */
typedef struct TilecCache {
	int fd;          /* the directory, opened by tilec_rt_trusted_dir;
			    -1 when the compile is uncached */
	char dir[4096];  /* its resolved path ("" when uncached) */
} TilecCache;

/* Open `dir` (resolved into real[]) as a directory fd, walking from "/"
 * without following links, and check that nobody but the user can change
 * it: with `own` it must be the user's and writable by nobody else (it is
 * written in); the directories above it root's or the user's, writable by
 * others only if sticky.  A directory that fails is TILEC_ERR_UNTRUSTED,
 * the message naming it (`what` says what it is for) and the fix. */
tilec_status tilec_rt_trusted_dir(tilec_context *ctx, const char *what,
				  const char *dir, bool own, int *fd,
				  char *real, size_t reallen);
/* Open the cache directory `dir`, creating it (and its parents) 0700 if
 * needed.  "" or NULL, or a directory that cannot be made or written, is
 * TILEC_OK with c->fd == -1 (uncached); one that others could change is
 * TILEC_ERR_UNTRUSTED. */
tilec_status tilec_rt_cache_open(tilec_context *ctx, const char *dir,
				 TilecCache *c);
void tilec_rt_cache_close(TilecCache *c);
/* Look key up; on a hit write the object's path into path[pathlen].  On
 * CORRUPT, why[] names the file and what was wrong with it. */
TilecCacheResult tilec_rt_cache_lookup(const TilecCache *c, const char *key,
				       const char *ext, char *path,
				       size_t pathlen, char *why, size_t nwhy);
/* Move the object at `object` (a file in the cache's scratch directory)
 * into the cache under key; on success path[] names the cached object.
 * Errors go to ctx. */
tilec_status tilec_rt_cache_store(tilec_context *ctx, const TilecCache *c,
				  const char *key, const char *ext,
				  const char *object, char *path,
				  size_t pathlen);
/* Remove key's record (an entry found bad after it was loaded). */
void tilec_rt_cache_drop(const TilecCache *c, const char *key);
/* Take key's compile lock (flock on <key>.lock, a regular file of the
 * user's that nobody else can write), waiting at most wait_s seconds (0:
 * cache.c's LOCK_WAIT_MAX); a descriptor for tilec_rt_cache_unlock, or -1
 * if it could not be had (the caller compiles anyway). */
int tilec_rt_cache_lock(const TilecCache *c, const char *key, double wait_s);
/* Remove the lock file and let go of it (nothing if fd is -1). */
void tilec_rt_cache_unlock(const TilecCache *c, const char *key, int fd);
/* A fresh private scratch directory (mkdtemp): in the cache, or, uncached,
 * in $TMPDIR (or /tmp), which must pass tilec_rt_trusted_dir. */
tilec_status tilec_rt_scratch_dir(tilec_context *ctx, const TilecCache *c,
				  char *out, size_t outlen);

/* ==== Backends ============================================================== */

/* What a backend compile is asked to do. */
typedef struct TilecCompileJob {
	const char *scratch;  /* private directory, removed afterwards */
	const char *src_path; /* the source in scratch (not written for
				 in-memory backends) */
	const char *inc_dir;  /* headers directory, or NULL if none (not
				 written for in-memory backends) */
	const char *name;     /* the source's file name, for messages */
	const char *source;   /* the source text */
	size_t source_len;    /* bytes in source */
	const tilec_header *headers; /* the compile's headers */
	int nheaders;         /* entries in headers */
	const char *out_path; /* where to write the object */
	const char *arch;     /* target architecture (never NULL) */
	char **flags;         /* extra flags: context's then compile's */
	int nflags;           /* entries in flags */
} TilecCompileJob;

/* A kernel's tensor map parameter (docs/launch.md, "tensor_maps"): the
 * 128-byte descriptor, a 32-bit flag (nonzero: built), padding to 64
 * bytes' multiple. */
#define TILEC_TMAP_BYTES 192
/* What a tensor map describes, innermost dim first: a dense tensor of
 * rank 2 to 5 at base, its extents, the byte strides of dims 1 .. rank -
 * 1, the box one copy moves and the swizzle of its rows (32, 64 or 128
 * bytes). */
typedef struct TilecTmapSpec {
	tilec_dtype dtype;
	int rank;
	void *base;
	unsigned long long dims[5], strides[4];
	unsigned box[5];
	int swizzle;
} TilecTmapSpec;
/* What tensor map i of s describes for a tensor at ptr whose extents
 * the scalar values vals (by parameter index) give: whether it can be
 * built (the base 16-byte aligned, every extent 1 to 2^32 - 1, every
 * stride a whole 16-byte multiple), and *spec. */
bool tilec_rt_tmap_spec(const TilecSignature *s, int i, void *ptr,
			const long long *vals, TilecTmapSpec *spec);

typedef struct TilecBackendOps {
	tilec_backend backend; /* which backend this is */
	const char *name;      /* "openmp" */
	const char *obj_ext;   /* object file extension: ".so", ".cubin" */
	const char *src_ext;   /* source extension: ".c", ".cu" */
	/* The compiler works from job->source and job->headers in memory:
	 * runtime.c writes neither into the scratch directory. */
	bool in_memory;
	/* A loaded module refers to its file by path (dlopen; debuggers
	 * read it): after a fresh object moves into the cache, it is loaded
	 * again from there. */
	bool loads_by_path;
	/* Prepare the context: find and identify the compiler, dlopen vendor
	 * libraries, pick the device.  Sets the context's error on failure. */
	tilec_status (*init)(tilec_context *ctx, int device);
	void (*fini)(tilec_context *ctx);
	/* Compiler identity for cache keys, found on first use and kept for
	 * the context's life; fails (error set) if the compiler is absent. */
	tilec_status (*identity)(tilec_context *ctx, const char **id);
	/* Compile job->src_path into job->out_path. */
	tilec_status (*compile)(tilec_context *ctx, const TilecCompileJob *job,
				double *seconds);
	/* Load an object file; *handle is the backend's module. */
	tilec_status (*load)(tilec_context *ctx, const char *path,
			     void **handle);
	void (*unload)(tilec_context *ctx, void *handle);
	/* The entry point of kernel `name`, or NULL. */
	void *(*symbol)(tilec_context *ctx, void *handle, const char *name);
	tilec_status (*launch)(tilec_context *ctx, void *entry, void **args,
			       const tilec_launch_config *cfg);
	tilec_status (*synchronize)(tilec_context *ctx);

	/* Optional entries; NULL where the backend has no use for them. */
	/* The architecture compiled for when the options name none; NULL
	 * (with the context's error set) if the backend cannot pick one.
	 * NULL entry: "native". */
	const char *(*default_arch)(tilec_context *ctx);
	/* What the context runs on.  NULL entry: the host CPU. */
	tilec_status (*device_info)(tilec_context *ctx,
				    tilec_device_info *info);
	/* Device memory.  NULL entries: host memory (malloc, memcpy). */
	tilec_status (*mem_alloc)(tilec_context *ctx, size_t bytes,
				  void **ptr);
	tilec_status (*mem_free)(tilec_context *ctx, void *ptr);
	tilec_status (*mem_copy)(tilec_context *ctx, void *dst,
				 const void *src, size_t bytes, bool to_device);
	/* Launch once and measure the launch on the device (events), after
	 * waiting for it.  NULL entry: tilec_bench times with the host clock
	 * around launch and synchronize. */
	tilec_status (*time_launch)(tilec_context *ctx, void *entry,
				    void **args,
				    const tilec_launch_config *cfg,
				    double *seconds);
	/* Encode a tensor map (TMA's descriptor, 128 bytes) into out;
	 * fails (no error set) where the driver cannot.  NULL entry: the
	 * backend has no TMA, and kernels' tensor maps stay unbuilt. */
	tilec_status (*tensor_map)(tilec_context *ctx,
				   const struct TilecTmapSpec *spec, void *out);
} TilecBackendOps;

/* jit_cc.c: the openmp backend (system C compiler). */
extern const TilecBackendOps tilec_rt_cc_backend;
/* gpu_driver.c: the cuda backend (NVRTC and the driver API,
 * cuda_driver.c). */
extern const TilecBackendOps tilec_rt_cuda_backend;
/* gpu_driver.c: the hip backend (hiprtc and the HIP runtime,
 * hip_driver.c). */
extern const TilecBackendOps tilec_rt_hip_backend;

/* The context's backend. */
const TilecBackendOps *tilec_rt_ops(const tilec_context *ctx);
/* Backend-private state hangs off the context. */
void *tilec_rt_backend_state(tilec_context *ctx);
void tilec_rt_set_backend_state(tilec_context *ctx, void *state);
/* The compiler command (openmp) as set on the context, or NULL. */
const char *tilec_rt_compiler(const tilec_context *ctx);
/* Seconds a compiler process may run; 0: no limit. */
double tilec_rt_compile_timeout(const tilec_context *ctx);

/* ==== jit_rtc.c: a runtime compiler (NVRTC, hiprtc), loaded with dlopen === */

typedef int TilecRtcResult; /* nvrtcResult, hiprtcResult: 0 is success */
typedef struct TilecRtcProgram_ *TilecRtcProgram; /* nvrtcProgram, ... */

/* The entry points both compilers have, under their own prefixes. */
typedef struct TilecRtcApi {
	TilecRtcResult (*version)(int *major, int *minor);
	const char *(*error_string)(TilecRtcResult r);
	TilecRtcResult (*create)(TilecRtcProgram *prog, const char *src,
				 const char *name, int nheaders,
				 const char *const *headers,
				 const char *const *include_names);
	TilecRtcResult (*compile)(TilecRtcProgram prog, int noptions,
				  const char *const *options);
	TilecRtcResult (*log_size)(TilecRtcProgram prog, size_t *size);
	TilecRtcResult (*log)(TilecRtcProgram prog, char *log);
	TilecRtcResult (*code_size)(TilecRtcProgram prog, size_t *size);
	TilecRtcResult (*code)(TilecRtcProgram prog, char *code);
	TilecRtcResult (*destroy)(TilecRtcProgram *prog);
} TilecRtcApi;

/* Indexes of TilecRtcTarget.symbols, in TilecRtcApi's order. */
enum {
	TILEC_RTC_VERSION,
	TILEC_RTC_ERROR_STRING,
	TILEC_RTC_CREATE,
	TILEC_RTC_COMPILE,
	TILEC_RTC_LOG_SIZE,
	TILEC_RTC_LOG,
	TILEC_RTC_CODE_SIZE,
	TILEC_RTC_CODE,
	TILEC_RTC_DESTROY,
	TILEC_RTC_NSYMBOLS
};

typedef struct TilecRtc TilecRtc;

/* One runtime compiler, as a const table. */
typedef struct TilecRtcTarget {
	const char *name;     /* "NVRTC": the compiler in messages */
	const char *object;   /* "cubin": what it produces, in messages */
	const char *symbols[TILEC_RTC_NSYMBOLS]; /* exported entry points */
	const char *const *fixed_options; /* every compile's options, after
					     the architecture's */
	size_t nfixed;        /* entries in fixed_options */
	const char *required; /* a library counts only if it exports this
				 (NULL: any library that loads) */
	bool path_from_candidate; /* path is the file name loaded until the
				     target resolves it */
	const char *library;  /* "libnvrtc": what could not be loaded */
	const char *install;  /* "the CUDA toolkit": what to install */
	const char *env;      /* "TILEC_NVRTC": the variable naming it */
	const char *too_old;  /* " (NVRTC 11.1 or later is needed)" or "" */
	/* Open the compiler: *out is a TilecRtc (freed by
	 * tilec_rt_rtc_close) or NULL with the context's error set. */
	tilec_status (*open)(tilec_context *ctx, TilecRtc **out);
	/* Compile job->source (with job->headers) for job->arch into an
	 * object written at job->out_path. */
	tilec_status (*compile)(tilec_context *ctx, TilecRtc *rc,
				const TilecCompileJob *job, double *seconds);
	/* Free what the target added to the TilecRtc; NULL if nothing. */
	void (*fini)(TilecRtc *rc);
} TilecRtcTarget;

/* A loaded compiler.  A target's own state embeds it first. */
struct TilecRtc {
	const TilecRtcTarget *t; /* which compiler */
	void *lib;            /* the dlopen handle */
	char path[4096];      /* the library (for messages and keys) */
	int major, minor;     /* its version */
	char who[4200];       /* "NVRTC 13.0": the compiler in messages */
	char *identity;       /* for cache keys */
	TilecRtcApi api;      /* the entry points */
};

/* Candidate library files, at most this many. */
#define TILEC_RT_RTC_MAX_CANDIDATES 32

/* Append dir/name (name alone if dir is NULL; nothing if dir is "") to
 * the candidate list, once. */
void tilec_rt_rtc_add_candidate(char **list, int *n, const char *dir,
				const char *name);
/* Resolve one entry point into *fn_ptr; false (name appended to
 * missing) if the library lacks it. */
bool tilec_rt_rtc_resolve(void *lib, const char *name, void *fn_ptr,
			  TilecStr *missing);
/* dlopen the first of cand[] that loads (and exports rc->t->required),
 * freeing cand[].  Fails with TILEC_ERR_UNAVAILABLE naming every file
 * tried. */
tilec_status tilec_rt_rtc_load(tilec_context *ctx, TilecRtc *rc, char **cand,
			       int ncand);
/* Resolve rc->api, appending the names the library lacks to missing. */
void tilec_rt_rtc_resolve_api(TilecRtc *rc, TilecStr *missing);
/* Set rc->path to the resolved file holding the function pointer at
 * slot; false (path unchanged) if that cannot be found. */
bool tilec_rt_rtc_real_path(TilecRtc *rc, const void *slot);
/* Fail if missing names anything (freeing it), else ask the version. */
tilec_status tilec_rt_rtc_check(tilec_context *ctx, TilecRtc *rc,
				TilecStr *missing);
void tilec_rt_rtc_close(TilecRtc *rc);
/* Compile with options: arch_option, the target's fixed options, extra,
 * then job->flags.  A rejected source is TILEC_ERR_COMPILE with the
 * compiler's log (after hint, if any). */
tilec_status tilec_rt_rtc_compile(tilec_context *ctx, const TilecRtc *rc,
				  const TilecCompileJob *job,
				  const char *arch_option,
				  const char *const *extra, int nextra,
				  const char *hint, double *seconds);

/* jit_nvrtc.c: NVRTC.  Loaded from $TILEC_NVRTC, then libnvrtc.so, .so.13,
 * .so.12 on the library path, $CUDA_HOME, $CUDA_PATH and /usr/local/cuda;
 * it also finds the directory holding cuda_fp16.h.  Its identity ("nvrtc
 * 13.0 ...") gives the version, the fixed options and the include
 * directory; it compiles for "sm_90a" into a cubin. */
extern const TilecRtcTarget tilec_rt_nvrtc;
/* Whether arch names a real architecture NVRTC can make a cubin for:
 * "sm_" digits, optionally followed by 'a' or 'f'. */
bool tilec_rt_nvrtc_arch_ok(const char *arch);

/* jit_hiprtc.c: hiprtc.  Loaded from $TILEC_HIPRTC, then libhiprtc.so,
 * .so.6, libamdhip64.so, .so.6, .so.5 on the library path and under
 * $ROCM_PATH/lib, $HIP_PATH/lib and /opt/rocm/lib: the first that exports
 * hiprtcCompileProgram; it asks libamd_comgr which ISAs it knows.  Its
 * identity ("hiprtc 9.0 (/usr/lib/.../libamdhip64.so.5.2.21153); comgr
 * 2.4; options ...") gives the version, the library, comgr's version and
 * the fixed options; it compiles for "gfx90a" into a code object, and an
 * ISA comgr does not know is TILEC_ERR_UNAVAILABLE naming those it knows. */
extern const TilecRtcTarget tilec_rt_hiprtc;
/* Whether arch is an AMD GPU processor or target ID: "gfx" and 3 or 4 hex
 * digits, then any ":feature+" / ":feature-". */
bool tilec_rt_hip_arch_ok(const char *arch);

/* ==== gpu_driver.c: a GPU backend driven by a target table ================ *
 * cuda_driver.c and hip_driver.c each give a TilecGpuTarget: their loaded
 * library's entry points behind small hooks, and the words of their
 * messages.  gpu_driver.c holds the cuda and hip backend tables (declared
 * with the backends above), whose entries all run through the target. */

typedef int TilecGpuResult; /* CUresult, hipError_t: 0 is success */

/* A GPU backend's per-context state.  A target's own state embeds it
 * first. */
typedef struct TilecGpu {
	const struct TilecGpuTarget *t; /* the target's table */
	TilecRtc *rtc;            /* the compiler */
	int ordinal;              /* the device, or TILEC_DEVICE_NONE */
	tilec_device_info info;   /* what tilec_device_get_info reports;
				     info.compile_only: no driver loaded */
	void *ev_start, *ev_stop; /* events for timing; NULL until used */
} TilecGpu;

/* One GPU target.  Hooks return the driver's result (0 on success); what
 * they take as void * is the driver's module, function, event or stream
 * handle, or a device address. */
typedef struct TilecGpuTarget {
	size_t state_size;      /* bytes of the target's state */
	const TilecRtcTarget *rtc; /* the compiler */
	const char *api;        /* "CUDA": "this CUDA context ..." */
	const char *device;     /* "CUDA device": "... on CUDA device 0" */
	const char *driver;     /* "CUDA driver": "the CUDA driver does not
				   say which architecture ..." */
	const char *arch_examples; /* "sm_80, sm_90a, ..." */
	const char *record_name;   /* "cuEventRecord": in messages */
	const char *elapsed_name;  /* "cuEventElapsedTime": in messages */
	TilecGpuResult not_found; /* looking up a kernel the module lacks */
	/* Dynamic shared memory a launch may use before set_shared. */
	size_t shared_default;
	/* Load the driver and open device `ordinal` (ordinal, info set);
	 * the context's error set on failure. */
	tilec_status (*open)(tilec_context *ctx, TilecGpu *g, int ordinal);
	/* Release what open acquired and the events, as far as it got. */
	void (*close)(TilecGpu *g);
	/* The driver's words for r: "CUDA_ERROR_NO_DEVICE (...)". */
	void (*describe)(const TilecGpu *g, TilecGpuResult r, char *out,
			 size_t n);
	/* Make the device current on the calling thread. */
	TilecGpuResult (*set_current)(TilecGpu *g);
	TilecGpuResult (*module_load)(TilecGpu *g, void **mod,
				      const void *image);
	void (*module_unload)(TilecGpu *g, void *mod);
	TilecGpuResult (*get_function)(TilecGpu *g, void *mod,
				       const char *name, void **fn);
	/* Let fn use `bytes` of dynamic shared memory; NULL if launches
	 * never need to opt in. */
	TilecGpuResult (*set_shared)(TilecGpu *g, void *fn, int bytes);
	TilecGpuResult (*launch)(TilecGpu *g, void *fn, void **args,
				 const tilec_launch_config *cfg);
	/* A tensor map (TilecTmapSpec) into out's 128 bytes; NULL where
	 * the target has no TMA. */
	TilecGpuResult (*tensor_map)(TilecGpu *g, const TilecTmapSpec *spec,
				     void *out);
	TilecGpuResult (*synchronize)(TilecGpu *g);
	TilecGpuResult (*mem_alloc)(TilecGpu *g, void **ptr, size_t bytes);
	TilecGpuResult (*mem_free)(TilecGpu *g, void *ptr);
	TilecGpuResult (*mem_copy)(TilecGpu *g, void *dst, const void *src,
				   size_t bytes, bool to_device);
	TilecGpuResult (*event_create)(TilecGpu *g, void **ev);
	TilecGpuResult (*event_record)(TilecGpu *g, void *ev, void *stream);
	TilecGpuResult (*event_synchronize)(TilecGpu *g, void *ev);
	TilecGpuResult (*event_elapsed)(TilecGpu *g, float *ms, void *start,
					void *stop);
} TilecGpuTarget;

/* Fail with status st: the formatted message, ": ", the driver's words
 * for r. */
tilec_status tilec_rt_gpu_fail(tilec_context *ctx, const TilecGpu *g,
			       tilec_status st, TilecGpuResult r,
			       const char *fmt, ...) TILEC_RT_PRINTF(5, 6);
/* Make the context's device current on this thread. */
tilec_status tilec_rt_gpu_current(tilec_context *ctx, TilecGpu *g);

/* cuda_driver.c: the CUDA driver API's target. */
extern const TilecGpuTarget tilec_rt_cuda_gpu;
/* hip_driver.c: the HIP runtime's target. */
extern const TilecGpuTarget tilec_rt_hip_gpu;

/* jit_cc.c: run argv (argv[0] found on PATH), capturing stdout and stderr
 * together into *out; *exit_status is the exit code, or -1 with the
 * signal in *signo.  Returns TILEC_ERR_UNAVAILABLE if argv[0] could not be
 * started (the message says why). */
tilec_status tilec_rt_run_process(tilec_context *ctx, char *const argv[],
				  TilecStr *out, int *exit_status,
				  int *signo);

#endif /* TILEC_RUNTIME_INT_H */
