/*
 * test_hiprtc.c - the runtime's hip backend (jit_hiprtc.c, hip_driver.c)
 * on any machine: every sample's HIP output compiled through hiprtc for
 * gfx90a (and gfx942 where hiprtc's comgr knows it) by a compile-only
 * context; the code objects of the kernels whose gemms take the MFMA path
 * disassembled, which must show v_mfma instructions and no scratch (no
 * private segment, no scratch_ or buffer_ instruction), and those of
 * tests/hip_emu/matrix_paths.c the f16, bf16 and f32 forms; the cache keyed by
 * arch; compile errors carrying hiprtc's log; what a compile-only context
 * refuses; and a context on device 0, which on a machine without an AMD
 * GPU must fail with a sentence saying so (and on a machine with one must
 * run a kernel).
 *
 * Its own program, not a suite of `unit`: without hiprtc it exits 77,
 * which meson reports as skipped.  Samples come from
 * $TILEC_SOURCE_ROOT/samples and are translated here with the translator
 * library; compiles use $TILEC_CACHE_DIR when set (meson points it into
 * the build tree, so reruns are cache hits), other tests a private cache
 * under $TMPDIR.  The disassembler is $TILEC_LLVM_OBJDUMP and the note
 * reader $TILEC_LLVM_READELF (meson finds Debian's llvm-15 ones, which
 * hipcc brings).
 */
#include <check.h>

#include "tilec_int.h"
#include "tilec_runtime.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* out[0] = a + b: one thread of one block. */
static const char add_src[] =
	"extern \"C\" __global__ void add(float a, float b, float *out)\n"
	"{\n"
	"\tout[0] = a + b;\n"
	"}\n";

static char private_cache[4096];

/* A compile-only context with a fresh private cache. */
static tilec_context *
compile_only_context(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(private_cache, sizeof private_cache, "%s/tilec-hiprtc-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	ck_assert(mkdtemp(private_cache));
	tilec_init_error err;
	tilec_context *ctx = tilec_context_new(TILEC_BACKEND_HIP,
					       TILEC_DEVICE_NONE, &err);
	ck_assert_msg(ctx, "%s", err.message);
	ck_assert_int_eq(tilec_set_cache_dir(ctx, private_cache), TILEC_OK);
	return ctx;
}

static void
remove_private_cache(void)
{
	DIR *d = opendir(private_cache);
	ck_assert(d);
	struct dirent *e;
	while ((e = readdir(d))) {
		char path[8192];
		snprintf(path, sizeof path, "%s/%s", private_cache, e->d_name);
		if (e->d_name[0] != '.')
			ck_assert_int_eq(unlink(path), 0);
	}
	closedir(d);
	ck_assert_int_eq(rmdir(private_cache), 0);
}

/* A whole file, NUL-terminated (binary safe). */
static char *
read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0, got;
	char *buf = malloc(cap + 1);
	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap)
			buf = realloc(buf, (cap *= 2) + 1);
	}
	fclose(f);
	if (buf)
		buf[n] = '\0';
	*len = n;
	return buf;
}

/* Whether the n bytes at hay contain the string needle. */
static bool
contains(const char *hay, size_t n, const char *needle)
{
	size_t m = strlen(needle);
	for (size_t i = 0; m <= n && i <= n - m; i++)
		if (memcmp(hay + i, needle, m) == 0)
			return true;
	return false;
}

/* The embedded helpers as hiprtc headers, named "tilec/<path>" as the
 * generated code includes them (as tilec run passes them). */
typedef struct Headers {
	tilec_header h[16];  /* the headers */
	char names[16][256]; /* their names */
	int n;               /* entries used */
} Headers;

static void
headers_init(Headers *hs)
{
	memset(hs, 0, sizeof *hs);
	for (int i = 0; tc_embedded[i].path; i++) {
		ck_assert_int_lt(hs->n, 16);
		snprintf(hs->names[hs->n], sizeof hs->names[0], "tilec/%s",
			 tc_embedded[i].path);
		hs->h[hs->n].name = hs->names[hs->n];
		hs->h[hs->n].text = tc_embedded[i].text;
		hs->h[hs->n].len = tc_embedded[i].len;
		hs->n++;
	}
}

/* --- The code object, disassembled ---------------------------------------- */

/* What the disassembly and the metadata of a code object show. */
typedef struct Isa {
	int mfma;          /* v_mfma instructions */
	int f16, bf16, f32; /* ... of each operand type (16x16x16f16,
			       16x16x16bf16_1k, 16x16x4f32) */
	int scratch;       /* scratch_* and buffer_* instructions */
	int kernels;       /* kernels in the metadata */
	int private_bytes; /* largest .private_segment_fixed_size */
	int vgprs, agprs;  /* largest .vgpr_count (AGPRs included on
			      gfx90a), .agpr_count */
	int vgpr_spills;   /* largest .vgpr_spill_count (into AGPRs when no
			      private segment) */
} Isa;

/* The value after "KEY:" on a line of llvm-readelf's notes, or -1. */
static int
note_value(const char *line, const char *key)
{
	const char *p = strstr(line, key);
	if (!p || p[strlen(key)] != ':')
		return -1;
	return atoi(p + strlen(key) + 1);
}

static int
max_int(int a, int b)
{
	return a > b ? a : b;
}

/* Disassemble the code object at path for arch. */
static void
inspect(const char *path, const char *arch, Isa *isa)
{
	memset(isa, 0, sizeof *isa);
	const char *objdump = getenv("TILEC_LLVM_OBJDUMP");
	const char *readelf = getenv("TILEC_LLVM_READELF");
	ck_assert_msg(objdump && *objdump && readelf && *readelf,
		      "no llvm-objdump / llvm-readelf to inspect code objects "
		      "(install llvm-15, as tools/setup.sh does, and "
		      "reconfigure)");
	char cmd[8192], line[4096];
	snprintf(cmd, sizeof cmd, "'%s' -d --mcpu=%s '%s'", objdump, arch, path);
	FILE *p = popen(cmd, "r");
	ck_assert_msg(p, "cannot run %s", cmd);
	while (fgets(line, sizeof line, p)) {
		isa->mfma += strstr(line, "\tv_mfma") != NULL;
		isa->f16 += strstr(line, "\tv_mfma_f32_16x16x16f16 ") != NULL;
		isa->bf16 += strstr(line, "\tv_mfma_f32_16x16x16bf16_1k ") != NULL;
		isa->f32 += strstr(line, "\tv_mfma_f32_16x16x4f32 ") != NULL;
		isa->scratch += strstr(line, "\tscratch_") != NULL ||
				strstr(line, "\tbuffer_") != NULL;
	}
	ck_assert_msg(pclose(p) == 0, "%s failed", cmd);
	snprintf(cmd, sizeof cmd, "'%s' --notes '%s'", readelf, path);
	p = popen(cmd, "r");
	ck_assert_msg(p, "cannot run %s", cmd);
	int v;
	while (fgets(line, sizeof line, p)) {
		if ((v = note_value(line, ".private_segment_fixed_size")) >= 0) {
			isa->kernels++;
			isa->private_bytes = max_int(isa->private_bytes, v);
		}
		if ((v = note_value(line, ".vgpr_count")) >= 0)
			isa->vgprs = max_int(isa->vgprs, v);
		if ((v = note_value(line, ".agpr_count")) >= 0)
			isa->agprs = max_int(isa->agprs, v);
		if ((v = note_value(line, ".vgpr_spill_count")) >= 0)
			isa->vgpr_spills = max_int(isa->vgpr_spills, v);
	}
	ck_assert_msg(pclose(p) == 0, "%s failed", cmd);
}

/* --- Samples ------------------------------------------------------------------ */

/* One translation to compile: a sample, maybe with a tunable bound. */
typedef struct Case {
	const char *file;   /* in samples/ */
	const char *define; /* "NAME" bound to value, or NULL */
	long long value;
	bool mfma;          /* its gemms must take the MFMA path */
} Case;

/* Translate c for hip `arch` and compile it with ctx.  Returns the
 * module's info; a translation or compile failure fails the test, except
 * that an arch hiprtc does not know returns false. */
static bool
compile_case(tilec_context *ctx, const Headers *hs, const char *dir,
	     const Case *c, const char *arch, tilec_module_info *info)
{
	char path[8192];
	snprintf(path, sizeof path, "%s/%s", dir, c->file);
	size_t len;
	char *text = read_all(path, &len);
	ck_assert_msg(text, "cannot read %s", path);
	TcOptions opt;
	ck_assert(tc_options_init(&opt, "hip", arch));
	if (c->define) {
		opt.ndefines = 1;
		opt.define_name[0] = c->define;
		opt.define_value[0] = c->value;
		opt.define_loc[0] = (TcLoc){ "<command line>", 0, 0 };
	}
	opt.verify = true;
	TcDiags d;
	tc_diags_init(&d, path, text, len);
	TcArena *a = tc_arena_new();
	TcProgram *prog = NULL;
	TcBuf src;
	tc_buf_init(&src);
	bool translated = tc_translate(a, path, text, &opt, &d, &prog, &src) &&
			  d.errors == 0;
	ck_assert_msg(translated, "%s does not translate for hip %s: %s",
		      c->file, arch, d.text.data ? d.text.data : "");
	char name[1024]; /* gemm.c -> gemm.hip */
	snprintf(name, sizeof name, "%s", c->file);
	snprintf(name + strlen(name) - 2, 5, ".hip");
	tilec_compile_options o;
	tilec_compile_options_init(&o);
	o.name = name;
	o.arch = arch;
	o.headers = hs->h;
	o.nheaders = hs->n;
	tilec_module *m = tilec_compile(ctx, src.data, src.len, &o);
	bool unknown = !m && strstr(tilec_error(ctx), "does not know");
	ck_assert_msg(m || unknown, "%s for %s: %s", c->file, arch,
		      tilec_error(ctx));
	if (m) {
		ck_assert_int_eq(tilec_module_get_info(m, info), TILEC_OK);
		/* The code object: an ELF file naming every kernel. */
		size_t clen;
		char *code = read_all(info->path, &clen);
		ck_assert_msg(code, "no code object at '%s'", info->path);
		ck_assert(clen > 4 && memcmp(code, "\177ELF", 4) == 0);
		for (int i = 0; i < prog->kernels.len; i++) {
			const TcKernel *k = prog->kernels.items[i];
			ck_assert_msg(contains(code, clen, k->name),
				      "%s: kernel %s not in the code object",
				      c->file, k->name);
		}
		free(code);
		tilec_module_free(m);
	}
	tc_buf_free(&src);
	tc_arena_free(a);
	tc_diags_free(&d);
	free(text);
	return m != NULL;
}

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

START_TEST(every_sample_compiles_for_gfx90a)
{
	const char *root = getenv("TILEC_SOURCE_ROOT");
	ck_assert_msg(root, "TILEC_SOURCE_ROOT is not set");
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/samples", root);
	DIR *d = opendir(dir);
	ck_assert_msg(d, "cannot open %s", dir);
	char *files[256];
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < 256) {
		size_t len = strlen(e->d_name);
		if (len > 2 && strcmp(e->d_name + len - 2, ".c") == 0)
			files[n++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(files, (size_t)n, sizeof *files, cmp_names);
	ck_assert_int_gt(n, 0);

	tilec_context *ctx;
	const char *cache = getenv("TILEC_CACHE_DIR");
	bool private = !cache || !*cache;
	if (private) {
		ctx = compile_only_context();
	} else {
		tilec_init_error err;
		ctx = tilec_context_new(TILEC_BACKEND_HIP, TILEC_DEVICE_NONE, &err);
		ck_assert_msg(ctx, "%s", err.message);
	}
	Headers hs;
	headers_init(&hs);
	/* Every sample with its defaults, and causal attention. */
	Case cases[258];
	int ncases = 0;
	for (int i = 0; i < n; i++) {
		bool mfma = strncmp(files[i], "gemm", 4) == 0 ||
			    strcmp(files[i], "flash_attention.c") == 0;
		cases[ncases++] = (Case){ files[i], NULL, 0, mfma };
		if (strcmp(files[i], "flash_attention.c") == 0)
			cases[ncases++] = (Case){ files[i], "CAUSAL", 1, true };
	}
	int mfma_cases = 0;
	bool gfx942 = true;
	for (int i = 0; i < ncases; i++) {
		const Case *c = &cases[i];
		tilec_module_info info;
		ck_assert(compile_case(ctx, &hs, dir, c, "gfx90a", &info));
		printf("%-20s %-9s gfx90a %s %8.1f ms", c->file,
		       c->define ? "CAUSAL=1" : "", info.from_cache ? "cached"
								    : "hiprtc",
		       info.total_seconds * 1e3);
		Isa isa;
		inspect(info.path, "gfx90a", &isa);
		printf("  %4d v_mfma, %d VGPRs (%d AGPRs), %d spilled to "
		       "AGPRs, %d bytes of scratch\n", isa.mfma, isa.vgprs,
		       isa.agprs, isa.vgpr_spills, isa.private_bytes);
		ck_assert_msg(isa.kernels > 0, "%s: no kernel metadata", c->file);
		ck_assert_msg(isa.private_bytes == 0 && isa.scratch == 0,
			      "%s: the code object uses scratch memory (%d "
			      "bytes, %d instructions)", c->file,
			      isa.private_bytes, isa.scratch);
		if (c->mfma) {
			ck_assert_msg(isa.mfma > 0, "%s: no v_mfma in the code "
				      "object", c->file);
			mfma_cases++;
		}
		/* gfx942 where this hiprtc knows it. */
		if (gfx942 && !compile_case(ctx, &hs, dir, c, "gfx942", &info)) {
			printf("note: %s\n", tilec_error(ctx));
			gfx942 = false;
		} else if (gfx942) {
			printf("%-20s %-9s gfx942 %s %8.1f ms\n", c->file,
			       c->define ? "CAUSAL=1" : "",
			       info.from_cache ? "cached" : "hiprtc",
			       info.total_seconds * 1e3);
		}
	}
	ck_assert_int_ge(mfma_cases, 5);

	/* The paths the samples do not reach (tests/hip_emu/matrix_paths.c:
	 * bf16 with A transposed, f32 with B transposed, f16 into an atomic
	 * split-K): each operand type's own instruction. */
	char tests_dir[4096];
	snprintf(tests_dir, sizeof tests_dir, "%s/tests/hip_emu", root);
	const Case paths = { "matrix_paths.c", NULL, 0, true };
	tilec_module_info info;
	ck_assert(compile_case(ctx, &hs, tests_dir, &paths, "gfx90a", &info));
	Isa isa;
	inspect(info.path, "gfx90a", &isa);
	printf("%-30s gfx90a %s  %d v_mfma: %d f16, %d bf16, %d f32; %d bytes "
	       "of scratch\n", paths.file, info.from_cache ? "cached" : "hiprtc",
	       isa.mfma, isa.f16, isa.bf16, isa.f32, isa.private_bytes);
	ck_assert_int_eq(isa.kernels, 3);
	ck_assert(isa.f16 > 0 && isa.bf16 > 0 && isa.f32 > 0);
	ck_assert(isa.private_bytes == 0 && isa.scratch == 0);
	for (int i = 0; i < n; i++)
		free(files[i]);
	tilec_context_free(ctx);
	if (private)
		remove_private_cache();
}
END_TEST

START_TEST(the_cache_is_keyed_by_arch)
{
	tilec_context *ctx = compile_only_context();
	tilec_compile_options o;
	tilec_compile_options_init(&o);
	o.name = "add.hip";
	o.arch = "gfx90a";
	tilec_module_info a, b, c;
	tilec_module *m = tilec_compile(ctx, add_src, strlen(add_src), &o);
	ck_assert_msg(m, "%s", tilec_error(ctx));
	tilec_module_get_info(m, &a);
	tilec_module_free(m);
	ck_assert(!a.from_cache);
	ck_assert(a.compile_seconds > 0);
	ck_assert(strstr(a.path, ".hsaco"));
	m = tilec_compile(ctx, add_src, strlen(add_src), &o);
	ck_assert_msg(m, "%s", tilec_error(ctx));
	tilec_module_get_info(m, &b);
	tilec_module_free(m);
	ck_assert(b.from_cache);
	ck_assert_str_eq(a.key, b.key);
	ck_assert(b.compile_seconds == 0);
	/* A target ID is an arch of its own. */
	o.arch = "gfx90a:xnack-";
	m = tilec_compile(ctx, add_src, strlen(add_src), &o);
	ck_assert_msg(m, "%s", tilec_error(ctx));
	tilec_module_get_info(m, &c);
	tilec_module_free(m);
	ck_assert(!c.from_cache);
	ck_assert_str_ne(a.key, c.key);
	tilec_context_free(ctx);
	remove_private_cache();
}
END_TEST

START_TEST(compile_errors_carry_the_log)
{
	tilec_context *ctx = compile_only_context();
	static const char bad[] =
		"extern \"C\" __global__ void k(float *x)\n"
		"{\n"
		"\tx[0] = undeclared_name;\n"
		"}\n";
	tilec_compile_options o;
	tilec_compile_options_init(&o);
	o.name = "bad.hip";
	o.arch = "gfx90a";
	ck_assert(!tilec_compile(ctx, bad, strlen(bad), &o));
	const char *msg = tilec_error(ctx);
	ck_assert_msg(strstr(msg, "hiprtc") && strstr(msg, "bad.hip") &&
			      strstr(msg, "gfx90a") &&
			      strstr(msg, "undeclared_name"),
		      "%s", msg);
	/* Nothing of a failed compile is cached. */
	DIR *d = opendir(private_cache);
	struct dirent *e;
	int files = 0;
	while ((e = readdir(d)))
		files += e->d_name[0] != '.';
	closedir(d);
	ck_assert_int_eq(files, 0);
	/* Flags reach hiprtc: an unknown one is its error. */
	o.flags = "--no-such-hiprtc-flag";
	ck_assert(!tilec_compile(ctx, add_src, strlen(add_src), &o));
	ck_assert_msg(strstr(tilec_error(ctx), "no-such-hiprtc-flag"), "%s",
		      tilec_error(ctx));
	tilec_context_free(ctx);
	remove_private_cache();
}
END_TEST

START_TEST(compile_only_contexts_compile_and_nothing_else)
{
	tilec_context *ctx = compile_only_context();
	tilec_device_info info;
	ck_assert_int_eq(tilec_device_get_info(ctx, &info), TILEC_OK);
	ck_assert_int_eq(info.compile_only, 1);
	ck_assert_str_eq(info.arch, "");

	tilec_compile_options o;
	tilec_compile_options_init(&o);
	/* No arch: there is no device to take it from. */
	ck_assert(!tilec_compile(ctx, add_src, strlen(add_src), &o));
	ck_assert_msg(strstr(tilec_error(ctx), "tilec_compile_options.arch"),
		      "%s", tilec_error(ctx));
	static const char *const not_amd[] = { "sm_90a", "gfx", "gfx90a:xnack",
					       "gfx90a;rm", "native" };
	for (size_t i = 0; i < sizeof not_amd / sizeof *not_amd; i++) {
		o.arch = not_amd[i];
		ck_assert(!tilec_compile(ctx, add_src, strlen(add_src), &o));
		ck_assert_msg(strstr(tilec_error(ctx), "not an AMD GPU "
					     "architecture"),
			      "%s: %s", not_amd[i], tilec_error(ctx));
	}
	/* An ISA hiprtc's comgr does not know is refused before hiprtc
	 * sees it (some releases abort the process on one). */
	o.arch = "gfx9f0";
	ck_assert(!tilec_compile(ctx, add_src, strlen(add_src), &o));
	ck_assert_msg(strstr(tilec_error(ctx), "does not know gfx9f0") &&
			      strstr(tilec_error(ctx), "gfx90a"),
		      "%s", tilec_error(ctx));
	o.arch = "gfx90a";
	tilec_module *m = tilec_compile(ctx, add_src, strlen(add_src), &o);
	ck_assert_msg(m, "%s", tilec_error(ctx));
	ck_assert(!tilec_module_kernel(m, "add"));
	ck_assert_msg(strstr(tilec_error(ctx), "compile-only"), "%s",
		      tilec_error(ctx));
	tilec_module_free(m);

	void *p = NULL;
	ck_assert_int_eq(tilec_alloc(ctx, 16, &p), TILEC_ERR_UNAVAILABLE);
	ck_assert_msg(strstr(tilec_error(ctx), "compile-only"), "%s",
		      tilec_error(ctx));
	ck_assert_int_eq(tilec_free(ctx, NULL), TILEC_OK);
	ck_assert_int_eq(tilec_synchronize(ctx), TILEC_OK);
	ck_assert_int_eq(tilec_set_compiler(ctx, "hipcc"), TILEC_ERR_INVALID);
	ck_assert(strstr(tilec_error(ctx), "TILEC_HIPRTC"));
	tilec_context_free(ctx);
	remove_private_cache();

	tilec_init_error err;
	ck_assert(!tilec_context_new(TILEC_BACKEND_HIP, -2, &err));
	ck_assert_int_eq(err.status, TILEC_ERR_INVALID);
	ck_assert(strstr(err.message, "TILEC_DEVICE_NONE"));
}
END_TEST

/* Device 0: a clear refusal without an AMD GPU, a real run with one. */
START_TEST(device_zero_fails_clearly_or_runs)
{
	tilec_init_error err;
	tilec_context *ctx = tilec_context_new(TILEC_BACKEND_HIP, 0, &err);
	if (!ctx) {
		ck_assert_int_eq(err.status, TILEC_ERR_UNAVAILABLE);
		ck_assert_msg(strstr(err.message, "no AMD GPU") ||
				      strstr(err.message, "no HIP runtime"),
			      "%s", err.message);
		ck_assert(strstr(err.message, "TILEC_DEVICE_NONE"));
		printf("device 0: %s\n", err.message);
		return;
	}
	tilec_device_info info;
	ck_assert_int_eq(tilec_device_get_info(ctx, &info), TILEC_OK);
	ck_assert(!info.compile_only);
	ck_assert(strncmp(info.arch, "gfx", 3) == 0);
	ck_assert(info.name[0]);
	printf("device 0: %s (%s)\n", info.name, info.arch);
	tilec_compile_options o;
	tilec_compile_options_init(&o);
	o.no_cache = 1;
	tilec_module *m = tilec_compile(ctx, add_src, strlen(add_src), &o);
	ck_assert_msg(m, "%s", tilec_error(ctx));
	tilec_kernel *k = tilec_module_kernel(m, "add");
	ck_assert_msg(k, "%s", tilec_error(ctx));
	ck_assert(!tilec_module_kernel(m, "sub"));
	ck_assert(strstr(tilec_error(ctx), "no kernel 'sub'"));
	void *out = NULL;
	ck_assert_int_eq(tilec_alloc(ctx, sizeof(float), &out), TILEC_OK);
	float a = 1.5f, b = 2.25f, got = 0;
	void *args[] = { &a, &b, &out };
	tilec_launch_config cfg = { { 1, 1, 1 }, { 1, 1, 1 }, 0, NULL };
	ck_assert_int_eq(tilec_launch(k, args, NULL), TILEC_ERR_INVALID);
	ck_assert_int_eq(tilec_launch(k, args, &cfg), TILEC_OK);
	ck_assert_int_eq(tilec_synchronize(ctx), TILEC_OK);
	ck_assert_int_eq(tilec_memcpy_d2h(ctx, &got, out, sizeof got),
			 TILEC_OK);
	ck_assert(got == 3.75f);
	tilec_bench_result res;
	void **sets[] = { args };
	ck_assert_int_eq(tilec_bench(k, sets, 1, &cfg, 1, 3, &res), TILEC_OK);
	ck_assert(res.median_s > 0);
	ck_assert_int_eq(tilec_free(ctx, out), TILEC_OK);
	tilec_module_free(m);
	tilec_context_free(ctx);
}
END_TEST

static Suite *
hiprtc_suite(void)
{
	Suite *s = suite_create("hiprtc");
	TCase *t = tcase_create("hiprtc");
	/* Cold hiprtc compiles take a second or two each. */
	tcase_set_timeout(t, 900);
	tcase_add_test(t, the_cache_is_keyed_by_arch);
	tcase_add_test(t, compile_errors_carry_the_log);
	tcase_add_test(t, compile_only_contexts_compile_and_nothing_else);
	tcase_add_test(t, device_zero_fails_clearly_or_runs);
	tcase_add_test(t, every_sample_compiles_for_gfx90a);
	suite_add_tcase(s, t);
	return s;
}

int
main(void)
{
	tilec_init_error err;
	tilec_context *probe = tilec_context_new(TILEC_BACKEND_HIP,
						 TILEC_DEVICE_NONE, &err);
	if (!probe) {
		printf("skipped: %s\n", err.message);
		return 77;
	}
	tilec_context_free(probe);
	SRunner *sr = srunner_create(hiprtc_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
