/*
 * fuzz_translate.c - libFuzzer target: any bytes, as a tile program.
 *
 * Each input is compiled for every target (OpenMP, CUDA, HIP) with the IR
 * verified after every pass, printed, and translated to source where the
 * backend is built; then read as IR text (read.c), whose reading must
 * print as a text that reads back the same.
 * Diagnostics are collected, not printed, and rendered without source
 * lines so that only the translator's own words are searched.  A crash, a
 * sanitizer report, an abort (tc_bug) or a verifier complaint (an internal
 * error reported as a diagnostic) is a finding; a located error for a bad
 * program is not.
 * Built and run by tools/fuzz.sh, not by meson.
 */
#include "ir/tilec_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An internal error among the diagnostics means a translator bug.  Each
 * line of d->text is one diagnostic (no source lines are rendered); only
 * the start of its message counts, since messages may quote the input. */
static void
abort_on_internal_error(const TcDiags *d)
{
	static const char sev[] = ": error: ";
	static const char bug[] = "internal error: ";
	for (const char *line = d->text.data; line && *line;) {
		const char *end = strchr(line, '\n');
		const char *at = strstr(line, sev);
		if (at && (!end || at < end) &&
		    strncmp(at + strlen(sev), bug, strlen(bug)) == 0) {
			fputs(d->text.data, stderr);
			abort();
		}
		line = end ? end + 1 : NULL;
	}
}

/* Compile text for one target, and emit it where the backend is built. */
static void
translate_for(const char *target, const char *text)
{
	TcOptions opt;
	if (!tc_options_init(&opt, target, NULL))
		return;
	opt.verify = true;
	TcDiags d;
	tc_diags_init(&d, "fuzz.c", NULL, 0);
	TcArena *a = tc_arena_new();
	TcProgram *p = NULL;
	TcBuf out;
	tc_buf_init(&out);
	bool ok;
	if (tc_backend_find(opt.target.kind))
		ok = tc_translate(a, "fuzz.c", text, &opt, &d, &p, &out);
	else
		ok = tc_compile(a, "fuzz.c", text, &opt, &d, &p);
	if (ok && p)
		tc_print_program(&out, p);
	abort_on_internal_error(&d);
	tc_buf_free(&out);
	tc_arena_free(a);
	tc_diags_free(&d);
}

/* The same bytes as IR text (read.c): read, verified and printed; what
 * is read must print again as it read. */
static void
read_ir(const char *text, size_t size)
{
	TcDiags d;
	tc_diags_init(&d, "fuzz.ir", NULL, 0);
	TcArena *a = tc_arena_new();
	TcProgram *p = tc_read_ir(a, "fuzz.ir", text, size, &d);
	if (p) {
		TcBuf one, two;
		tc_buf_init(&one);
		tc_buf_init(&two);
		tc_verify(p, "read", &d);
		tc_print_program(&one, p);
		TcProgram *q = tc_read_ir(a, "fuzz.ir", one.data, one.len, &d);
		if (q)
			tc_print_program(&two, q);
		if (q && strcmp(one.data, two.data) != 0) {
			fprintf(stderr, "read back otherwise:\n%s\n----\n%s",
				one.data, two.data);
			abort();
		}
		tc_buf_free(&one);
		tc_buf_free(&two);
	}
	tc_arena_free(a);
	tc_diags_free(&d);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	/* The CPU path, then the GPU scheduling passes. */
	translate_for("openmp", text);
	translate_for("cuda", text);
	translate_for("hip", text);
	read_ir(text, size);
	free(text);
	return 0;
}
