/*
 * api.c - the public translator API (tilec_translator.h) over tc_translate.
 *
 * Input: the options a caller sets on a tilec_translator, and a tile
 * program as a file or a string.  Output: the target's source, each
 * kernel's launch manifest, and the diagnostics, rendered exactly as the
 * tilec command prints them and also passed one by one to the caller's
 * callback.  Each translation uses its own arena; what the caller reads
 * afterwards is copied out of it.
 *
 * Everything here is a thin layer: the options become a TcOptions as the
 * CLI builds them (main.c), so the library and `tilec FILE` translate
 * identically.
 */
#include "ir/tilec_int.h"
#include "tilec_translator.h"
#include "tilec_version.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct tilec_translator {
	char *target;                 /* "openmp" unless set */
	char *arch;                   /* NULL: the target's default */
	char *kernel;                 /* NULL: every kernel */
	char *config;                 /* a tuning record's path, or NULL */
	unsigned flags;               /* TILEC_STANDALONE, ... */
	int ndefines;                 /* bindings, in order */
	char *define_name[TC_MAX_DEFINES];
	long long define_value[TC_MAX_DEFINES];
	tilec_diagnostic_fn diag_fn;  /* the caller's callback, or NULL */
	void *diag_user;              /* its first argument */
	TcBuf output;                 /* the last translation's source */
	TcBuf manifest;               /* its launch manifests */
	TcBuf diagnostics;            /* its rendered diagnostics */
};

const char *
tilec_version(void)
{
	return TILEC_VERSION;
}

const char *
tilec_revision(void)
{
	return TILEC_GIT_REVISION;
}

tilec_translator *
tilec_translator_new(void)
{
	tilec_translator *tr = calloc(1, sizeof *tr);
	if (!tr)
		return NULL;
	if (!(tr->target = strdup("openmp"))) {
		free(tr);
		return NULL;
	}
	tc_buf_init(&tr->output);
	tc_buf_init(&tr->manifest);
	tc_buf_init(&tr->diagnostics);
	return tr;
}

void
tilec_translator_free(tilec_translator *tr)
{
	if (!tr)
		return;
	free(tr->target);
	free(tr->arch);
	free(tr->kernel);
	free(tr->config);
	for (int i = 0; i < tr->ndefines; i++)
		free(tr->define_name[i]);
	tc_buf_free(&tr->output);
	tc_buf_free(&tr->manifest);
	tc_buf_free(&tr->diagnostics);
	free(tr);
}

void
tilec_translator_set_diagnostic_fn(tilec_translator *tr,
				   tilec_diagnostic_fn fn, void *user)
{
	if (!tr)
		return;
	tr->diag_fn = fn;
	tr->diag_user = user;
}

/* Replace *slot by a copy of s (NULL clears it). */
static tilec_status
set_string(char **slot, const char *s)
{
	char *copy = NULL;
	if (s && !(copy = strdup(s)))
		return TILEC_ERR_NOMEM;
	free(*slot);
	*slot = copy;
	return TILEC_OK;
}

/* An error of the translator itself (not of the program), kept as the
 * diagnostics' text and passed to the callback. */
static tilec_status
fail(tilec_translator *tr, tilec_status st, const char *fmt, ...)
	TC_PRINTF(3, 4);

static tilec_status
fail(tilec_translator *tr, tilec_status st, const char *fmt, ...)
{
	TcBuf msg;
	tc_buf_init(&msg);
	va_list ap;
	va_start(ap, fmt);
	tc_buf_vprintf(&msg, fmt, ap);
	va_end(ap);
	tc_buf_free(&tr->diagnostics);
	tc_buf_init(&tr->diagnostics);
	tc_buf_printf(&tr->diagnostics, "tilec: error: %s\n", msg.data);
	if (tr->diag_fn) {
		tilec_diagnostic d = { TILEC_ERROR, NULL, 0, 0, msg.data,
				       tr->diagnostics.data };
		tr->diag_fn(tr->diag_user, &d);
	}
	tc_buf_free(&msg);
	return st;
}

tilec_status
tilec_translator_set_target(tilec_translator *tr, const char *target,
			    const char *arch)
{
	if (!tr)
		return TILEC_ERR_INVALID;
	TcTarget t;
	if (!target)
		target = "openmp";
	if (!tc_target_init(&t, target, arch))
		return fail(tr, TILEC_ERR_INVALID, "unknown target or "
			    "architecture '%s%s%s' (targets: openmp with avx512, "
			    "avx2 or generic; cuda with sm_80 or sm_90a; hip "
			    "with gfx90a or gfx942)", target, arch ? "/" : "",
			    arch ? arch : "");
	tilec_status st = set_string(&tr->target, target);
	return st ? st : set_string(&tr->arch, arch);
}

tilec_status
tilec_translator_set_kernel(tilec_translator *tr, const char *name)
{
	return tr ? set_string(&tr->kernel, name) : TILEC_ERR_INVALID;
}

tilec_status
tilec_translator_set_config(tilec_translator *tr, const char *path)
{
	return tr ? set_string(&tr->config, path) : TILEC_ERR_INVALID;
}

tilec_status
tilec_translator_set_flags(tilec_translator *tr, unsigned flags)
{
	if (!tr || (flags & ~(unsigned)(TILEC_STANDALONE |
				       TILEC_LINE_DIRECTIVES | TILEC_VERIFY)))
		return TILEC_ERR_INVALID;
	tr->flags = flags;
	return TILEC_OK;
}

tilec_status
tilec_translator_define(tilec_translator *tr, const char *name,
			long long value)
{
	if (!tr || !name || !*name)
		return TILEC_ERR_INVALID;
	for (int i = 0; i < tr->ndefines; i++)
		if (strcmp(tr->define_name[i], name) == 0) {
			tr->define_value[i] = value;
			return TILEC_OK;
		}
	if (tr->ndefines == TC_MAX_DEFINES)
		return fail(tr, TILEC_ERR_INVALID, "more than %d tunable "
			    "bindings", TC_MAX_DEFINES);
	char *copy = strdup(name);
	if (!copy)
		return TILEC_ERR_NOMEM;
	tr->define_name[tr->ndefines] = copy;
	tr->define_value[tr->ndefines++] = value;
	return TILEC_OK;
}

/* TcDiags's hook: one diagnostic to the caller's callback. */
static void
forward(void *user, TcSeverity sev, TcLoc loc, const char *message,
	const char *text)
{
	tilec_translator *tr = user;
	tilec_diagnostic d = {
		sev == TC_ERROR ? TILEC_ERROR
		: sev == TC_WARNING ? TILEC_WARNING : TILEC_NOTE,
		loc.file, loc.line, loc.col, message, text,
	};
	tr->diag_fn(tr->diag_user, &d);
}

int
tc_api_translate(tilec_translator *tr, const char *path, const char *text,
		 size_t len, const char *target, const char *arch,
		 const char *kernel)
{
	tc_buf_free(&tr->output);
	tc_buf_free(&tr->manifest);
	tc_buf_free(&tr->diagnostics);
	tc_buf_init(&tr->output);
	tc_buf_init(&tr->manifest);
	tc_buf_init(&tr->diagnostics);

	TcOptions opt;
	if (!target) {
		target = tr->target;
		arch = tr->arch;
	}
	if (!tc_options_init(&opt, target, arch))
		return fail(tr, TILEC_ERR_INVALID, "unknown target or "
			    "architecture '%s%s%s'", target, arch ? "/" : "",
			    arch ? arch : "");
	opt.kernel = kernel ? kernel : tr->kernel;
	opt.standalone = tr->flags & TILEC_STANDALONE;
	opt.line_directives = tr->flags & TILEC_LINE_DIRECTIVES;
	opt.verify = tr->flags & TILEC_VERIFY;
	opt.ndefines = tr->ndefines;
	for (int i = 0; i < tr->ndefines; i++) {
		opt.define_name[i] = tr->define_name[i];
		opt.define_value[i] = tr->define_value[i];
		opt.define_loc[i] = (TcLoc){ "<command line>", 0, 0 };
	}

	char *owned = NULL;
	if (!text) {
		if (!path)
			return fail(tr, TILEC_ERR_INVALID, "no tile program: "
				    "give a path or text");
		if (!(owned = tc_read_file(path, &len)))
			return fail(tr, TILEC_ERR_IO, "cannot read '%s': %s",
				    path, strerror(errno));
		text = owned;
	} else if (!path) {
		path = "<string>";
	}
	/* The parser wants a NUL-terminated program. */
	if (!owned) {
		if (!(owned = malloc(len + 1)))
			return fail(tr, TILEC_ERR_NOMEM, "out of memory");
		memcpy(owned, text, len);
		owned[len] = '\0';
		text = owned;
	}

	TcDiags d;
	tc_diags_init(&d, path, text, len);
	if (tr->diag_fn) {
		d.hook = forward;
		d.hook_user = tr;
	}
	TcArena *a = tc_arena_new();
	TcProgram *p = NULL;
	bool ok = (!tr->config || tc_config_apply(tr->config, text, len, NULL,
						  a, &opt, &d)) &&
		  tc_translate(a, path, text, &opt, &d, &p, &tr->output) &&
		  d.errors == 0;
	if (ok)
		tc_launch_document(p, NULL, &opt.target, NULL, &tr->manifest);
	tc_buf_puts(&tr->diagnostics, d.text.data ? d.text.data : "");
	if (!ok) {
		tc_buf_free(&tr->output);
		tc_buf_free(&tr->manifest);
		tc_buf_init(&tr->output);
		tc_buf_init(&tr->manifest);
	}
	tc_arena_free(a);
	tc_diags_free(&d);
	free(owned);
	return ok ? TILEC_OK : TILEC_ERR_COMPILE;
}

tilec_status
tilec_translate_file(tilec_translator *tr, const char *path)
{
	if (!tr)
		return TILEC_ERR_INVALID;
	if (!path)
		return fail(tr, TILEC_ERR_INVALID, "no file to translate");
	return tc_api_translate(tr, path, NULL, 0, NULL, NULL, NULL);
}

tilec_status
tilec_translate_string(tilec_translator *tr, const char *name,
		       const char *text, size_t len)
{
	if (!tr)
		return TILEC_ERR_INVALID;
	if (!text)
		return fail(tr, TILEC_ERR_INVALID, "no text to translate");
	return tc_api_translate(tr, name ? name : "<string>", text, len, NULL,
				NULL, NULL);
}

int
tilec_select_config(tilec_translator *tr, const char *const *records,
		    int nrecords, const char *const *names,
		    const long long *values, int nvalues)
{
	if (!tr)
		return -1;
	if (!records || nrecords < 1 || nrecords > TC_BUCKET_MAX ||
	    nvalues < 0 || (nvalues > 0 && (!names || !values))) {
		fail(tr, TILEC_ERR_INVALID, "tilec_select_config: 1 to %d "
		     "records, and a value for each name", TC_BUCKET_MAX);
		return -1;
	}
	tc_buf_free(&tr->diagnostics);
	tc_buf_init(&tr->diagnostics);
	TcDiags d;
	tc_diags_init(&d, records[0], NULL, 0);
	if (tr->diag_fn) {
		d.hook = forward;
		d.hook_user = tr;
	}
	int at = tc_records_select(records, nrecords, names, values, nvalues,
				   &d, NULL);
	tc_buf_puts(&tr->diagnostics, d.text.data ? d.text.data : "");
	tc_diags_free(&d);
	return at;
}

const char *
tilec_translator_output(const tilec_translator *tr, size_t *len)
{
	if (len)
		*len = tr ? tr->output.len : 0;
	return tr && tr->output.data ? tr->output.data : "";
}

const char *
tilec_translator_manifest(const tilec_translator *tr)
{
	return tr && tr->manifest.data ? tr->manifest.data : "";
}

const char *
tilec_translator_diagnostics(const tilec_translator *tr)
{
	return tr && tr->diagnostics.data ? tr->diagnostics.data : "";
}

const char *
tc_api_target_arch(const tilec_translator *tr, const char *target)
{
	return strcmp(tr->target, target) == 0 ? tr->arch : NULL;
}

/* tilec_jit's way to add the runtime's error to the diagnostics. */
void
tc_api_fail(tilec_translator *tr, const char *message)
{
	fail(tr, TILEC_ERR_COMPILE, "%s", message);
}
