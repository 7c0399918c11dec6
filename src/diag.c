/*
 * diag.c - located diagnostics.
 *
 * Every problem with a tile program is reported as
 *
 *     file:line:col: error: message
 *         the source line
 *             ^
 *
 * and counted; phases check d->errors and stop.  Diagnostics are rendered
 * into d->text (the runtime hands that to its caller) and, for the CLI, to
 * stderr as they happen; a library caller may also take each one through
 * d->hook (tilec_translator.h's diagnostic callback).
 */
#include "tilec_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* n bytes of s as a malloc'd string; NULL when out of memory. */
static char *
strndup_malloc(const char *s, size_t n)
{
	char *p = malloc(n + 1);
	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

static const char *const severity_names[] = {
	[TC_NOTE] = "note",
	[TC_WARNING] = "warning",
	[TC_ERROR] = "error",
};

void
tc_diags_init(TcDiags *d, const char *path, const char *text, size_t len)
{
	memset(d, 0, sizeof *d);
	tc_buf_init(&d->text);
	d->src_path = path;
	d->src_text = text;
	d->src_len = len;
}

void
tc_diags_free(TcDiags *d)
{
	tc_buf_free(&d->text);
}

/* Append line `line` of the source and a caret under column `col`. */
static void
render_caret(TcDiags *d, TcBuf *out, TcLoc loc)
{
	if (!d->src_text || loc.line <= 0 || !loc.file || !d->src_path ||
	    strcmp(loc.file, d->src_path) != 0)
		return;
	const char *p = d->src_text, *end = d->src_text + d->src_len;
	for (int l = 1; l < loc.line && p < end; l++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			return;
		p = nl + 1;
	}
	const char *eol = memchr(p, '\n', (size_t)(end - p));
	size_t n = eol ? (size_t)(eol - p) : (size_t)(end - p);
	tc_buf_printf(out, "%.*s\n", (int)n, p);
	/* The caret line keeps the source's tabs so it lines up. */
	for (int c = 1; c < loc.col && (size_t)(c - 1) < n; c++)
		tc_buf_puts(out, p[c - 1] == '\t' ? "\t" : " ");
	tc_buf_puts(out, "^\n");
}

void
tc_vdiag(TcDiags *d, TcSeverity sev, TcLoc loc, const char *fmt, va_list ap)
{
	TcBuf one;
	tc_buf_init(&one);
	if (loc.file && loc.line > 0)
		tc_buf_printf(&one, "%s:%d:%d: ", loc.file, loc.line,
			      loc.col > 0 ? loc.col : 1);
	else if (loc.file)
		tc_buf_printf(&one, "%s: ", loc.file);
	else
		tc_buf_puts(&one, "tilec: ");
	tc_buf_printf(&one, "%s: ", severity_names[sev]);
	size_t message_at = one.len;
	tc_buf_vprintf(&one, fmt, ap);
	size_t message_end = one.len;
	tc_buf_puts(&one, "\n");
	render_caret(d, &one, loc);

	if (sev == TC_ERROR)
		d->errors++;
	else if (sev == TC_WARNING)
		d->warnings++;
	tc_buf_puts(&d->text, one.data);
	if (d->to_stderr)
		fputs(one.data, stderr);
	if (d->hook) {
		char *message = strndup_malloc(one.data + message_at,
						  message_end - message_at);
		d->hook(d->hook_user, sev, loc, message ? message : "",
			one.data);
		free(message);
	}
	tc_buf_free(&one);
}

void
tc_diag(TcDiags *d, TcSeverity sev, TcLoc loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tc_vdiag(d, sev, loc, fmt, ap);
	va_end(ap);
}
