/*
 * runtime_int.h - the runtime's private vocabulary.
 *
 * Shared by runtime.c (the public API), cache.c (the disk cache),
 * sha256.c (hashing) and the backends (jit_cc.c: the system C compiler;
 * jit_nvrtc.c and cuda_driver.c: NVRTC and the CUDA driver; jit_hiprtc.c
 * and hip_driver.c: hiprtc and the HIP runtime).  A backend is a const
 * table of function pointers; runtime.c drives every backend the same way:
 * compile to an object file, store it in the cache, load it, look up entry
 * points, launch.  Functions shared
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
/* Hash a buffer, or a whole file (false on a read error). */
void tilec_rt_sha256(const void *data, size_t n, uint8_t digest[32]);
bool tilec_rt_sha256_file(const char *path, uint8_t digest[32],
			  uint64_t *size);

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
	TILEC_CACHE_CORRUPT, /* a record whose object is missing or altered */
} TilecCacheResult;

/* Look key up; on a hit write the object's path into path[pathlen]. */
TilecCacheResult tilec_rt_cache_lookup(const char *dir, const char *key,
				       const char *ext, char *path,
				       size_t pathlen);
/* Move the object at `object` (a file in dir) into the cache under key;
 * on success path[] names the cached object.  Errors go to ctx. */
tilec_status tilec_rt_cache_store(tilec_context *ctx, const char *dir,
				  const char *key, const char *ext,
				  const char *object, char *path,
				  size_t pathlen);
/* Create dir (and its parents) if needed; false if it is unusable. */
bool tilec_rt_cache_prepare(const char *dir);
/* A fresh private scratch directory inside `parent` (mkdtemp). */
tilec_status tilec_rt_scratch_dir(tilec_context *ctx, const char *parent,
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

typedef struct TilecBackendOps {
	tilec_backend backend; /* which backend this is */
	const char *name;      /* "openmp" */
	const char *obj_ext;   /* object file extension: ".so", ".cubin" */
	const char *src_ext;   /* source extension: ".c", ".cu" */
	/* The compiler works from job->source and job->headers in memory:
	 * runtime.c writes neither into the scratch directory. */
	bool in_memory;
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
} TilecBackendOps;

/* jit_cc.c: the openmp backend (system C compiler). */
extern const TilecBackendOps tilec_rt_cc_backend;
/* cuda_driver.c: the cuda backend (NVRTC and the driver API). */
extern const TilecBackendOps tilec_rt_cuda_backend;
/* hip_driver.c: the hip backend (hiprtc and the HIP runtime). */
extern const TilecBackendOps tilec_rt_hip_backend;

/* Backend-private state hangs off the context. */
void *tilec_rt_backend_state(tilec_context *ctx);
void tilec_rt_set_backend_state(tilec_context *ctx, void *state);
/* The compiler command (openmp) as set on the context, or NULL. */
const char *tilec_rt_compiler(const tilec_context *ctx);

/* ==== jit_nvrtc.c: NVRTC, loaded with dlopen ================================= */

typedef struct TilecNvrtc TilecNvrtc; /* a loaded libnvrtc */

/* Load libnvrtc ($TILEC_NVRTC, then libnvrtc.so, .so.13, .so.12 on the
 * library path, $CUDA_HOME, $CUDA_PATH and /usr/local/cuda) and find the
 * directory holding cuda_fp16.h.  Fails with TILEC_ERR_UNAVAILABLE and a
 * message naming every file tried. */
tilec_status tilec_rt_nvrtc_open(tilec_context *ctx, TilecNvrtc **out);
void tilec_rt_nvrtc_close(TilecNvrtc *nv);
/* "nvrtc 13.0 ..." : the version, the fixed options and the include
 * directory, for cache keys. */
const char *tilec_rt_nvrtc_identity(const TilecNvrtc *nv);
/* Compile job->source (with job->headers) for job->arch ("sm_90a") into a
 * cubin written at job->out_path.  A rejected source is TILEC_ERR_COMPILE
 * with NVRTC's log. */
tilec_status tilec_rt_nvrtc_compile(tilec_context *ctx, TilecNvrtc *nv,
				    const TilecCompileJob *job,
				    double *seconds);
/* Whether arch names a real architecture NVRTC can make a cubin for:
 * "sm_" digits, optionally followed by 'a' or 'f'. */
bool tilec_rt_nvrtc_arch_ok(const char *arch);

/* ==== jit_hiprtc.c: hiprtc, loaded with dlopen =============================== */

typedef struct TilecHiprtc TilecHiprtc; /* a loaded hiprtc */

/* Load hiprtc ($TILEC_HIPRTC, then libhiprtc.so, .so.6, libamdhip64.so,
 * .so.6, .so.5 on the library path and under $ROCM_PATH/lib,
 * $HIP_PATH/lib and /opt/rocm/lib: the first that exports
 * hiprtcCompileProgram) and ask libamd_comgr which ISAs it knows.  Fails
 * with TILEC_ERR_UNAVAILABLE and a message naming every file tried. */
tilec_status tilec_rt_hiprtc_open(tilec_context *ctx, TilecHiprtc **out);
void tilec_rt_hiprtc_close(TilecHiprtc *h);
/* "hiprtc 9.0 (/usr/lib/.../libamdhip64.so.5.2.21153); comgr 2.4; options
 * ...": the version, the library, comgr's version and the fixed options,
 * for cache keys. */
const char *tilec_rt_hiprtc_identity(const TilecHiprtc *h);
/* Compile job->source (with job->headers) for job->arch ("gfx90a") into a
 * code object written at job->out_path.  A rejected source is
 * TILEC_ERR_COMPILE with hiprtc's log; an ISA comgr does not know is
 * TILEC_ERR_UNAVAILABLE naming those it knows. */
tilec_status tilec_rt_hiprtc_compile(tilec_context *ctx, TilecHiprtc *h,
				     const TilecCompileJob *job,
				     double *seconds);
/* Whether arch is an AMD GPU processor or target ID: "gfx" and 3 or 4 hex
 * digits, then any ":feature+" / ":feature-". */
bool tilec_rt_hip_arch_ok(const char *arch);

/* jit_cc.c: run argv (argv[0] found on PATH), capturing stdout and stderr
 * together into *out; *exit_status is the exit code, or -1 with the
 * signal in *signo.  Returns TILEC_ERR_UNAVAILABLE if argv[0] could not be
 * started (the message says why). */
tilec_status tilec_rt_run_process(tilec_context *ctx, char *const argv[],
				  TilecStr *out, int *exit_status,
				  int *signo);

#endif /* TILEC_RUNTIME_INT_H */
