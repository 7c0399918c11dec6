/*
 * api_errors.c - the public API's failures, built against the installed
 * files (install.sh, case c): a tile program with an error gives its
 * located diagnostic with the caret, to the callback and as text, and no
 * kernel; an unknown target, an uninitialized options struct and a
 * missing kernel are refused with a sentence.
 */
#include <stdio.h>
#include <string.h>
#include <tilec_translator.h>

static int failures;

#define CHECK(cond)                                                   \
	do {                                                          \
		if (!(cond)) {                                        \
			fprintf(stderr, "api_errors.c:%d: %s\n", __LINE__, \
				#cond);                               \
			failures++;                                   \
		}                                                     \
	} while (0)

/* What the callback saw. */
typedef struct Seen {
	int errors;       /* TILEC_ERROR diagnostics */
	int line, col;    /* the first one's place */
	char message[256];
} Seen;

static void
on_diag(void *user, const tilec_diagnostic *d)
{
	Seen *s = user;
	if (d->severity == TILEC_ERROR && s->errors++ == 0) {
		s->line = d->line;
		s->col = d->col;
		snprintf(s->message, sizeof s->message, "%s", d->message);
	}
}

static const char bad[] =
	"#include <tilec.h>\n"
	"TILE_KERNEL void\n"
	"k(int N, const f32 X[N], f32 Y[N])\n"
	"{\n"
	"\ttile_threads(128);\n"
	"\tint b = tile_grid_x(ceildiv(N, 64));\n"
	"\ttile_fragment f32 x[0];\n"
	"\ttile_copy(x, &X[b * 64]);\n"
	"\ttile_copy(&Y[b * 64], x);\n"
	"}\n";

int
main(void)
{
	tilec_translator *tr = tilec_translator_new();
	Seen seen = { 0 };
	tilec_translator_set_diagnostic_fn(tr, on_diag, &seen);

	/* A located error, with the line and a caret. */
	CHECK(tilec_translate_string(tr, "bad.c", bad, strlen(bad)) ==
	      TILEC_ERR_COMPILE);
	const char *text = tilec_translator_diagnostics(tr);
	CHECK(strncmp(text, "bad.c:7:", 8) == 0);
	CHECK(strstr(text, "error:") != NULL);
	CHECK(strstr(text, "\ttile_fragment f32 x[0];\n") != NULL);
	CHECK(strchr(text, '^') != NULL);
	CHECK(seen.errors >= 1 && seen.line == 7 && seen.col > 0);
	CHECK(strstr(text, seen.message) != NULL);
	CHECK(strcmp(tilec_translator_output(tr, NULL), "") == 0);

	/* The same through tilec_jit: no kernel, no module, the caret. */
	tilec_init_error ierr;
	tilec_context *ctx = tilec_context_new(TILEC_BACKEND_OPENMP, 0, &ierr);
	CHECK(ctx != NULL);
	tilec_module *mod = (tilec_module *)&seen;
	CHECK(tilec_jit(ctx, tr, "bad.c", bad, strlen(bad), "k", NULL, &mod) ==
	      NULL);
	CHECK(mod == NULL);
	CHECK(strstr(tilec_translator_diagnostics(tr), "bad.c:7:") != NULL);

	/* No kernel named. */
	CHECK(tilec_jit(ctx, tr, "bad.c", bad, strlen(bad), NULL, NULL, &mod) ==
	      NULL);
	CHECK(strstr(tilec_translator_diagnostics(tr), "name of the kernel"));

	/* Options that tilec_compile_options_init never saw. */
	tilec_compile_options o;
	memset(&o, 0, sizeof o);
	CHECK(tilec_compile(ctx, "int x;\n", 7, &o) == NULL);
	CHECK(strstr(tilec_error(ctx), "tilec_compile_options_init") != NULL);

	/* An unknown target names the valid ones. */
	CHECK(tilec_translator_set_target(tr, "cuda", "sm_70") ==
	      TILEC_ERR_INVALID);
	CHECK(strstr(tilec_translator_diagnostics(tr), "sm_90a") != NULL);

	printf("tilec %s (%s): %d failures\n", tilec_version(),
	       tilec_revision(), failures);
	tilec_context_free(ctx);
	tilec_translator_free(tr);
	return failures != 0;
}
