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
 * d->hook (tilec_translator.h's diagnostic callback).  tc_nearest picks
 * the name a misspelt one most likely meant, for "did you mean".
 */
#include "ir/tilec_int.h"

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

/* --- "did you mean": the nearest name ------------------------------------ */

/* The optimal string alignment distance between a and b: insertions,
 * deletions, substitutions and swaps of two neighbours, each 1.  Words
 * longer than 63 characters are never near anything. */
static int
edit_distance(const char *a, size_t n, const char *b)
{
	size_t m = strlen(b);
	if (n > 63 || m > 63)
		return 1 << 20;
	int d[64][64];
	for (size_t i = 0; i <= n; i++)
		d[i][0] = (int)i;
	for (size_t j = 0; j <= m; j++)
		d[0][j] = (int)j;
	for (size_t i = 1; i <= n; i++) {
		for (size_t j = 1; j <= m; j++) {
			int cost = a[i - 1] != b[j - 1];
			int v = d[i - 1][j - 1] + cost;
			if (d[i - 1][j] + 1 < v)
				v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	}
	return d[n][m];
}

/* A third of the word's length apart (at least 1, at most 3) is a typo;
 * ties go to a candidate that begins with the word, then to the earlier
 * one. */
const char *
tc_nearest(const char *word, size_t n, const char *const *cands, int ncands)
{
	int limit = (int)n / 3;
	limit = limit < 1 ? 1 : limit > 3 ? 3 : limit;
	const char *best = NULL;
	int best_d = limit + 1;
	bool best_begins = false;
	for (int i = 0; i < ncands; i++) {
		int dist = edit_distance(word, n, cands[i]);
		/* A tie goes to a candidate the word begins (sm_90: sm_90a,
		 * not sm_80). */
		bool begins = strncmp(cands[i], word, n) == 0;
		if (dist > 0 && (dist < best_d ||
				 (dist == best_d && begins && !best_begins))) {
			best_begins = begins;
			best = cands[i];
			best_d = dist;
		}
	}
	return best;
}
