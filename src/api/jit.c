/*
 * jit.c - tilec_jit: from a tile program to a loaded kernel in one call.
 *
 * Input: a runtime context (its backend and device decide the target and
 * arch), a translator carrying the bindings, tuning record and flags, the
 * tile program and a kernel name.  Output: the kernel, in a module the
 * caller frees.  Steps: pick the arch, translate in-process (api.c),
 * compile through the context with the embedded helper headers as
 * `tilec/<path>` (never the caller's include path: generated code gets
 * exactly the templates this translator emitted against), load, look up.
 *
 * This lives in libtilec, not in the runtime: the runtime stays free of
 * libclang (a GPU machine runs generated code without the translator),
 * and libtilec already needs the runtime's types.  docs/runtime.md says
 * so for users.
 */
#include "ir/tilec_int.h"
#include "tilec_translator.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The architecture to translate for, from the context's device when the
 * translator names none; NULL (after an error) when there is none. */
static const char *
pick_arch(tilec_translator *tr, tilec_backend backend, const char *given,
	  const tilec_device_info *info)
{
	char msg[512];
	if (backend == TILEC_BACKEND_OPENMP)
		return given; /* NULL: the host's vector ISA */
	if (given)
		return given;
	if (info->compile_only) {
		snprintf(msg, sizeof msg, "a compile-only %s context has no "
			 "device to take the arch from: set one with "
			 "tilec_translator_set_target",
			 tilec_backend_name(backend));
		tc_api_fail(tr, msg);
		return NULL;
	}
	/* The target table says which arch serves which devices. */
	const char *target = tilec_backend_name(backend);
	const char *arch = tc_target_device_arch(target, info->arch,
						 info->cc_major * 10 + info->cc_minor);
	if (arch)
		return arch;
	TcBuf devices;
	tc_buf_init(&devices);
	tc_target_devices(&devices, target);
	snprintf(msg, sizeof msg, "%s (%s) is not a GPU tilec generates %s code "
		 "for (%s)", info->name, info->arch, target,
		 devices.data ? devices.data : "none");
	tc_buf_free(&devices);
	tc_api_fail(tr, msg);
	return NULL;
}

/* "softmax.openmp.c": the name the compiler sees, whose extension picks
 * the language (the runtime compiles .c as C, .cu and .hip as C++). */
static void
compile_name(const char *path, const char *target, char *out, size_t n)
{
	const char *base = path ? strrchr(path, '/') : NULL;
	base = base ? base + 1 : path ? path : "kernel.c";
	const char *dot = strrchr(base, '.');
	int stem = dot && dot != base ? (int)(dot - base) : (int)strlen(base);
	const char *ext = strcmp(target, "cuda") == 0 ? ".cu"
			  : strcmp(target, "hip") == 0 ? ".hip" : ".c";
	snprintf(out, n, "%.*s.%s%s", stem, base, target, ext);
}

tilec_kernel *
tilec_jit(tilec_context *ctx, tilec_translator *tr, const char *path,
	  const char *text, size_t len, const char *kernel,
	  const tilec_compile_options *opts, tilec_module **mod)
{
	if (mod)
		*mod = NULL;
	if (!tr)
		return NULL;
	if (!ctx || !mod) {
		tc_api_fail(tr, "tilec_jit needs a context and a place for the "
			    "module");
		return NULL;
	}
	int backend = tilec_context_backend(ctx);
	const char *target = tilec_backend_name((tilec_backend)backend);
	if (!kernel || !*kernel) {
		tc_api_fail(tr, "tilec_jit needs the name of the kernel to "
			    "load");
		return NULL;
	}
	tilec_device_info info;
	if (tilec_device_get_info(ctx, &info) != TILEC_OK) {
		tc_api_fail(tr, tilec_error(ctx));
		return NULL;
	}
	/* The caller's options, read as the runtime reads them (by their
	 * size); tilec_compile checks them again. */
	tilec_compile_options given;
	tilec_compile_options_init(&given);
	if (opts) {
		if (opts->size < sizeof opts->size) {
			tc_api_fail(tr, "tilec_compile_options was not "
				    "initialized: call tilec_compile_options_"
				    "init first");
			return NULL;
		}
		memcpy(&given, opts, opts->size < sizeof given ? opts->size
								: sizeof given);
		given.size = sizeof given;
	}
	TcTarget t;
	if (!tc_target_init(&t, target, NULL) || !tc_backend_find(t.kind)) {
		char msg[128];
		snprintf(msg, sizeof msg, "the %s backend is not built", target);
		tc_api_fail(tr, msg);
		return NULL;
	}
	/* The translator's arch holds only when its target is the
	 * context's. */
	const char *arch = pick_arch(tr, (tilec_backend)backend,
				     tc_api_target_arch(tr, target), &info);
	if (backend != TILEC_BACKEND_OPENMP && !arch)
		return NULL;
	if (tc_api_translate(tr, path, text, len, target, arch, kernel) !=
	    TILEC_OK)
		return NULL;

	/* The helper headers, as generated code includes them. */
	int n = 0;
	while (tc_embedded[n].path)
		n++;
	tilec_header *headers = calloc((size_t)n, sizeof *headers);
	char **names = calloc((size_t)n, sizeof *names);
	bool ok = headers && names;
	for (int i = 0; ok && i < n; i++) {
		size_t nl = strlen(tc_embedded[i].path) + 7;
		ok = (names[i] = malloc(nl)) != NULL;
		if (ok)
			snprintf(names[i], nl, "tilec/%s", tc_embedded[i].path);
		headers[i] = (tilec_header){ names[i], tc_embedded[i].text,
					     tc_embedded[i].len };
	}
	tilec_kernel *k = NULL;
	if (!ok) {
		tc_api_fail(tr, "out of memory");
	} else {
		char name[256];
		compile_name(path, target, name, sizeof name);
		given.name = name;
		given.headers = headers;
		given.nheaders = n;
		/* With a device the runtime compiles for it; a compile-only
		 * context for the arch translated for.  On the CPU the code
		 * is built for the host (-march=native). */
		given.arch = backend != TILEC_BACKEND_OPENMP && info.compile_only
				     ? arch
				     : NULL;
		/* The kernel's signature, for tilec_launch_checked. */
		given.manifest = tilec_translator_manifest(tr);
		size_t srclen;
		const char *src = tilec_translator_output(tr, &srclen);
		*mod = tilec_compile(ctx, src, srclen, &given);
		if (*mod && !(k = tilec_module_kernel(*mod, kernel))) {
			tilec_module_free(*mod);
			*mod = NULL;
		}
		if (!k)
			tc_api_fail(tr, tilec_error(ctx));
	}
	for (int i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
	free(headers);
	return k;
}
