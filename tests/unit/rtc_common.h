/*
 * rtc_common.h - the harness of the runtime-compiler tests.
 *
 * test_nvrtc.c (the cuda backend through NVRTC) and test_hiprtc.c (the
 * hip backend through hiprtc) check the same things through the same
 * runtime API (runtime/tilec_runtime.h).  Each describes its target in one
 * const RtcTarget and hands it to rtc_main, which exits 77 (meson: skipped)
 * where the compiler library cannot be loaded and otherwise runs the shared
 * tests in rtc_common.c (the cache keyed by arch, compile errors carrying
 * the compiler's log, what a compile-only context refuses, device 0), then
 * the target's own, among them every sample compiled (rtc_compile_samples)
 * with the target's checks of each module.
 *
 * Samples come from $TILEC_SOURCE_ROOT/samples and are translated here with
 * the translator library.  A session's compiles use $TILEC_CACHE_DIR when
 * set (meson points it into the build tree, so reruns are cache hits); the
 * other tests use a private cache under $TMPDIR.
 */
#ifndef TILEC_RTC_COMMON_H
#define TILEC_RTC_COMMON_H

#include <check.h>

#include "ir/tilec_int.h"
#include "tilec_runtime.h"

/* One translation to compile: a file, maybe with one tunable bound. */
typedef struct RtcCase {
	const char *file;   /* in the directory compiled from */
	const char *define; /* the NAME bound, or NULL */
	long long value;    /* its value */
} RtcCase;

#define RTC_MAX_ARCHS 4

/* A target: what its tests compile, and what its compiler and runtime
 * must say.  Lists of strings end with NULL. */
typedef struct RtcTarget {
	const char *name;         /* the test and its suite: "nvrtc"; the
				     private cache and the unknown flag
				     ("--no-such-nvrtc-flag") are named after
				     it */
	tilec_backend backend;    /* the runtime backend under test */
	const char *lang;         /* the translator's target: "cuda" */
	const char *compiler;     /* as its errors name it: "NVRTC" */
	const char *compiler_env; /* named when tilec_set_compiler is refused:
				     "TILEC_NVRTC" */
	const char *aot_compiler; /* a compiler it refuses: "nvcc" */
	const char *source_ext;   /* of the names compiles are given: ".cu" */
	const char *binary_ext;   /* in a cached module's path: ".cubin" */
	const char *binary;       /* a module's file in messages: "cubin" */
	const char *archs[RTC_MAX_ARCHS]; /* every sample is compiled for
				     each, in order */
	int known_archs;          /* the first this many must compile; a later
				     one the compiler does not know is dropped
				     with a note */
	const char *arch;         /* of the single compiles */
	const char *other_arch;   /* an arch with a cache key of its own, next
				     to arch */
	const char *const *not_archs; /* refused as no arch of this target */
	const char *not_arch_message; /* ... with this in the message */
	const char *arch_prefix;  /* of a device's arch: "sm_" */
	const char *const *no_device; /* device 0's refusal without a GPU
				     holds one of these */
	const char *no_device_hint; /* ... and this too, or NULL */
	const char *const *core;  /* samples that must translate for lang;
				     NULL: every one must */
	const RtcCase *variants;  /* compiled after their file with its
				     defaults, ended by a NULL file; or NULL */
	void (*add_tests)(TCase *tc); /* the target's own tests, added after
				     the shared ones */
} RtcTarget;

/* out[0] = a + b: one thread of one block. */
extern const char rtc_add_src[];

/* A compile-only context of t with a fresh private cache, which
 * rtc_remove_private_cache empties and removes. */
tilec_context *rtc_compile_only_context(const RtcTarget *t);
void rtc_remove_private_cache(void);

/* The embedded helpers as headers, named "tilec/<path>" as the generated
 * code includes them (as tilec run passes them). */
typedef struct RtcHeaders {
	tilec_header h[16];  /* the headers */
	char names[16][256]; /* their names */
	int n;               /* entries used */
} RtcHeaders;

/* A run of compiles: a compile-only context and the headers. */
typedef struct RtcSession {
	const RtcTarget *t;  /* the target compiled for */
	const char *root;    /* $TILEC_SOURCE_ROOT */
	tilec_context *ctx;  /* compile-only */
	bool private_cache;  /* ctx's cache is private (no $TILEC_CACHE_DIR);
				rtc_session_close removes it */
	RtcHeaders hs;       /* passed to every compile */
	bool dropped[RTC_MAX_ARCHS]; /* t->archs[i] is not known to the
				compiler: rtc_compile_samples skips it */
} RtcSession;

void rtc_session_open(RtcSession *s, const RtcTarget *t);
void rtc_session_close(RtcSession *s);

/* What rtc_compile did. */
typedef enum RtcResult {
	RTC_COMPILED,     /* the module was built or found in the cache */
	RTC_UNTRANSLATED, /* the translator refused the case (a note says
			     why); only where it need not translate */
	RTC_UNKNOWN_ARCH, /* the compiler does not know the arch;
			     tilec_error(s->ctx) names those it knows */
} RtcResult;

/* Translate case c in dir for s->t->lang and arch (verifying the IR after
 * each pass) and compile it.  On RTC_COMPILED, *info describes the module
 * (since freed), whose file has been checked to be an ELF file naming
 * every kernel.  A translation failure fails the test when must_translate,
 * any compile failure but an unknown arch always. */
RtcResult rtc_compile(RtcSession *s, const char *dir, const RtcCase *c,
		      const char *arch, bool must_translate,
		      tilec_module_info *info);

/* A look at one compiled case; what it prints continues the case's line. */
typedef void RtcCheck(void *arg, const RtcCase *c, const char *arch,
		      const tilec_module_info *info);

/* Every sample (sorted by name) with its defaults and then its variants,
 * compiled for each of s->t->archs; check (if not NULL) sees each module,
 * with arg. */
void rtc_compile_samples(RtcSession *s, RtcCheck *check, void *arg);
/* The same for the programs in `subdir` of the source root (every one
 * must translate). */
void rtc_compile_dir(RtcSession *s, const char *subdir, RtcCheck *check,
		     void *arg);

/* The program: skipped (77) without t's compiler, else the shared tests
 * and t->add_tests run; 0 when all pass, 1 otherwise. */
int rtc_main(const RtcTarget *t);

#endif /* TILEC_RTC_COMMON_H */
