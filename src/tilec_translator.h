/*
 * tilec_translator.h - the tilec translator as a library (libtilec), and
 * one call from a tile program to a loaded kernel.
 *
 * The shape follows libtcc: create a translator, set its options (target,
 * arch, tunable bindings, a tuning record, the kernel), translate a file or
 * a string, read the output (the target's source, or a kernel's launch
 * manifest), destroy it.  Problems in the tile program are located
 * diagnostics, exactly as the tilec command prints them
 * (`file:line:col: error: ...`, the source line, a caret): each is passed
 * to the diagnostic callback as it is reported, and all of them are kept
 * as text (tilec_translator_diagnostics).  Nothing here prints or exits.
 *
 * A translator is used by one thread at a time; separate translators are
 * independent.  Setters copy their strings.  Every function returns
 * TILEC_OK (0) or a tilec_status from tilec_runtime.h.
 *
 * tilec_jit goes further: it translates for a runtime context's backend
 * with the embedded helper headers (never the caller's include path),
 * compiles through the runtime's disk cache and returns the kernel.
 *
 * docs/runtime.md ("From tile source in one call") is the reference.
 */
#ifndef TILEC_TRANSLATOR_H
#define TILEC_TRANSLATOR_H

#include <stddef.h>

#include "tilec_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The translator's version ("0.1.0") and the source revision it was
 * built from (`git describe --always --dirty`, or "unknown"). */
TILEC_API
const char *tilec_version(void);
TILEC_API
const char *tilec_revision(void);

typedef struct tilec_translator tilec_translator;

typedef enum tilec_severity {
	TILEC_NOTE,
	TILEC_WARNING,
	TILEC_ERROR,
} tilec_severity;

/* One diagnostic, as passed to the callback.  The strings are valid for
 * the duration of the call. */
typedef struct tilec_diagnostic {
	tilec_severity severity;
	const char *file;    /* the tile program's path, a tuning record's, or
				"<command line>" for a binding */
	int line;            /* 1-based; 0 when the diagnostic has no place */
	int col;             /* 1-based byte column; 0 likewise */
	const char *message; /* the sentence alone ("extent of 'x' is 0 ...") */
	const char *text;    /* the whole rendering: "file:line:col: error:
				message", then the source line and a caret */
} tilec_diagnostic;

typedef void (*tilec_diagnostic_fn)(void *user, const tilec_diagnostic *d);

/* NULL when out of memory.  The defaults: target openmp with the host's
 * vector ISA, every kernel, tunables at their defaults. */
TILEC_API
tilec_translator *tilec_translator_new(void);
TILEC_API
void tilec_translator_free(tilec_translator *tr);

/* Call fn(user, d) for each diagnostic as it is reported; NULL stops. */
TILEC_API
void tilec_translator_set_diagnostic_fn(tilec_translator *tr,
					tilec_diagnostic_fn fn, void *user);

/* The target ("openmp", "cuda", "hip") and its arch ("avx512", "avx2",
 * "generic"; "sm_80", "sm_90a"; "gfx90a", "gfx942"), NULL for the
 * target's default.  TILEC_ERR_INVALID for a name tilec does not know
 * (tilec_translator_diagnostics lists the valid ones). */
TILEC_API
tilec_status tilec_translator_set_target(tilec_translator *tr,
					 const char *target, const char *arch);
/* Translate only kernel `name` (NULL: every kernel). */
TILEC_API
tilec_status tilec_translator_set_kernel(tilec_translator *tr,
					 const char *name);
/* Bind tunable `name` to `value` (as -D NAME=VALUE); later bindings of
 * the same name win.  TILEC_ERR_INVALID past 64 bindings. */
TILEC_API
tilec_status tilec_translator_define(tilec_translator *tr, const char *name,
				     long long value);
/* Bind the values of the tuning record at `path` (docs/tuning.md) at the
 * next translation; tilec_translator_define's bindings win.  NULL: none. */
TILEC_API
tilec_status tilec_translator_set_config(tilec_translator *tr,
					 const char *path);

/* Of several tuning records of one kernel, tuned at different shapes,
 * the one a launch whose integer scalars are names[i] = values[i] takes:
 * the rule of `tilec export`'s entry point and `tilec run --config A
 * --config B` (docs/tuning.md, "Shape dispatch": smallest shape bucket
 * first, the first that holds every scalar it names, else the largest).
 * Returns the index in records, or -1 after an error (a record that
 * cannot be read or has no bucket, two records of one bucket, a scalar a
 * bucket names missing from names), in the diagnostics. */
TILEC_API
int tilec_select_config(tilec_translator *tr, const char *const *records,
			int nrecords, const char *const *names,
			const long long *values, int nvalues);

/* Output flags (tilec_translator_set_flags), as the CLI's options. */
enum {
	TILEC_STANDALONE = 1 << 0,      /* --standalone: helpers inlined */
	TILEC_LINE_DIRECTIVES = 1 << 1, /* --line-directives */
	TILEC_VERIFY = 1 << 2,          /* --verify: the IR after each pass */
};
TILEC_API
tilec_status tilec_translator_set_flags(tilec_translator *tr,
					unsigned flags);

/* Translate the tile program at `path`.  TILEC_ERR_COMPILE when it has
 * errors (located, in the diagnostics), TILEC_ERR_IO when it cannot be
 * read.  Each call replaces the previous output and diagnostics. */
TILEC_API
tilec_status tilec_translate_file(tilec_translator *tr, const char *path);
/* The same for `len` bytes of tile source; `name` is the file name the
 * diagnostics use (NULL: "<string>"). */
TILEC_API
tilec_status tilec_translate_string(tilec_translator *tr, const char *name,
				    const char *text, size_t len);

/* The last translation's target source ("" after a failure); *len, if
 * len is not NULL, gets its length.  Valid until the next translation. */
TILEC_API
const char *tilec_translator_output(const tilec_translator *tr, size_t *len);
/* The last translation's launch document (`tilec --emit=launch`,
 * docs/launch.md): one JSON object with each translated kernel's
 * parameters, grid, threads and shared memory ("" after a failure). */
TILEC_API
const char *tilec_translator_manifest(const tilec_translator *tr);
/* Every diagnostic of the last translation, rendered, in order ("" if
 * none); errors end the translation, warnings do not. */
TILEC_API
const char *tilec_translator_diagnostics(const tilec_translator *tr);

/* --- From tile source to a kernel in one call ------------------------------
 * Translate the tile program (`text`, `len` bytes, or when text is NULL
 * the file at `path`) for ctx's backend, with tr's bindings, tuning record
 * and flags (its target is replaced by ctx's), keeping only kernel
 * `kernel`;
 * compile it through ctx (its disk cache, compiler and flags), with the
 * embedded helper headers and `opts` (name, headers and arch are
 * tilec_jit's own; flags and no_cache are taken; opts may be NULL); load
 * it and look the kernel up.
 *
 * The arch: tr's when set; otherwise, on openmp, the host's vector ISA
 * (compiled with -march=native) and on GPUs the context's device's, mapped
 * to the newest one tilec generates code for (sm_90a on compute 9.0,
 * sm_80 on other 8.x and later; gfx942, gfx90a).
 *
 * On success returns the kernel and sets *mod to its module (free it with
 * tilec_module_free; the kernel belongs to it).  On failure returns NULL
 * and *mod is NULL; tilec_translator_diagnostics(tr) says why, whatever
 * failed: the tile program's located errors, or the runtime's error (with
 * the compiler's log), which tilec_error(ctx) also holds. */
TILEC_API
tilec_kernel *tilec_jit(tilec_context *ctx, tilec_translator *tr,
			const char *path, const char *text, size_t len,
			const char *kernel, const tilec_compile_options *opts,
			tilec_module **mod);

#ifdef __cplusplus
}
#endif

#endif /* TILEC_TRANSLATOR_H */
