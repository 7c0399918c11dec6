/*
 * test_tmap.c - tensor maps in launch documents (docs/launch.md,
 * "tensor_maps"; runtime/signature.c): what the runtime reads, what it
 * refuses, what it would build, and where a raw launch's argument array
 * puts them; and a persistent kernel's grid, which reads the device's
 * SM count.  No GPU: the descriptors themselves are the driver's; on an
 * openmp context none is ever built, so every map is flagged unbuilt
 * and the kernel's loop without TMA would run.
 */
#include "unit.h"
#include "runtime_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A kernel k(M, N, K, A[M][K] f16, B[K][N] f16, X[2][M][3][K] bf16) with
 * a tensor map of A (box 64 x 64, 128-byte swizzle) and one of X's dims
 * 1 and 3 (box 1 x 128 x 1 x 32, 64-byte swizzle); MAPS replaces the
 * tensor_maps member. */
static const char doc_head[] =
	"{\"format\": \"tilec-launch/1\", \"kernels\": [{\"kernel\": \"k\", "
	"\"target\": \"cuda\", \"arch\": \"sm_90a\", \"threads\": 256, "
	"\"smem_bytes\": 1024, \"tunables\": {}, \"params\": ["
	"{\"name\": \"M\", \"kind\": \"scalar\", \"dtype\": \"i32\", \"ctype\": \"int\"},"
	"{\"name\": \"N\", \"kind\": \"scalar\", \"dtype\": \"i32\", \"ctype\": \"int\"},"
	"{\"name\": \"K\", \"kind\": \"scalar\", \"dtype\": \"i32\", \"ctype\": \"int\"},"
	"{\"name\": \"A\", \"kind\": \"tensor\", \"dtype\": \"f16\", \"ctype\": "
	"\"const uint16_t *\", \"const\": true, \"rank\": 2, \"shape\": "
	"[{\"param\": \"M\"}, {\"param\": \"K\"}]},"
	"{\"name\": \"B\", \"kind\": \"tensor\", \"dtype\": \"f16\", \"ctype\": "
	"\"const uint16_t *\", \"const\": true, \"rank\": 2, \"shape\": "
	"[{\"param\": \"K\"}, {\"param\": \"N\"}]},"
	"{\"name\": \"X\", \"kind\": \"tensor\", \"dtype\": \"bf16\", \"ctype\": "
	"\"const uint16_t *\", \"const\": true, \"rank\": 4, \"shape\": "
	"[{\"int\": 2}, {\"param\": \"M\"}, {\"int\": 3}, {\"param\": \"K\"}]}], "
	"\"grid\": [{\"int\": 1}, {\"int\": 1}, {\"int\": 1}]";
static const char good_maps[] =
	", \"tensor_maps\": ["
	"{\"name\": \"A_map\", \"tensor\": \"A\", \"box\": [64, 64], \"swizzle\": 128},"
	"{\"name\": \"X_map\", \"tensor\": \"X\", \"box\": [1, 128, 1, 32], \"swizzle\": 64}]";

static tilec_context *
context(void)
{
	tilec_init_error err;
	tilec_context *ctx = tilec_context_new(TILEC_BACKEND_OPENMP, 0, &err);
	ck_assert_msg(ctx, "%s", err.message);
	return ctx;
}

/* The signatures of a document of doc_head and `maps`; *st the status. */
static TilecSignature *
parse(tilec_context *ctx, const char *maps, tilec_status *st)
{
	char doc[8192];
	snprintf(doc, sizeof doc, "%s%s}]}", doc_head, maps);
	TilecSignature **sigs = NULL;
	int n = 0;
	*st = tilec_rt_signatures_parse(ctx, "cuda", doc, &sigs, &n);
	if (*st != TILEC_OK)
		return NULL;
	ck_assert_int_eq(n, 1);
	TilecSignature *s = sigs[0];
	free(sigs);
	return s;
}

START_TEST(reads_the_maps)
{
	tilec_context *ctx = context();
	tilec_status st;
	TilecSignature *s = parse(ctx, good_maps, &st);
	ck_assert_msg(s, "%s", tilec_error(ctx));
	ck_assert_int_eq(tilec_rt_signature_tmaps(s), 2);
	tilec_rt_signature_free(s);
	s = parse(ctx, "", &st);
	ck_assert(s);
	ck_assert_int_eq(tilec_rt_signature_tmaps(s), 0);
	tilec_rt_signature_free(s);
	ck_assert_int_eq(tilec_rt_signature_tmaps(NULL), 0);
	tilec_context_free(ctx);
}
END_TEST

/* Each malformed map is refused with a message saying what is wrong. */
START_TEST(refuses_bad_maps)
{
	static const struct {
		const char *maps, *says;
	} bad[] = {
		{ ", \"tensor_maps\": {}", "not an array" },
		{ ", \"tensor_maps\": [{\"tensor\": \"M\", \"box\": [1, 1], "
		  "\"swizzle\": 128}]", "names no tensor" },
		{ ", \"tensor_maps\": [{\"tensor\": \"Q\", \"box\": [64, 64], "
		  "\"swizzle\": 128}]", "names no tensor" },
		{ ", \"tensor_maps\": [{\"tensor\": \"A\", \"box\": [64], "
		  "\"swizzle\": 128}]", "names no tensor" },
		{ ", \"tensor_maps\": [{\"tensor\": \"A\", \"box\": [64, 64], "
		  "\"swizzle\": 48}]", "names no tensor" },
		{ ", \"tensor_maps\": [{\"tensor\": \"A\", \"box\": [300, 64], "
		  "\"swizzle\": 128}]", "not 1 to 256" },
		{ ", \"tensor_maps\": [{\"tensor\": \"A\", \"box\": [0, 64], "
		  "\"swizzle\": 128}]", "not 1 to 256" },
		{ ", \"tensor_maps\": [{\"tensor\": \"A\", \"box\": [64, 1.5], "
		  "\"swizzle\": 128}]", "not 1 to 256" },
		{ ", \"tensor_maps\": [{\"tensor\": \"A\", \"box\": [64, 32], "
		  "\"swizzle\": 128}]", "not its swizzle's bytes" },
	};
	tilec_context *ctx = context();
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		tilec_status st;
		TilecSignature *s = parse(ctx, bad[i].maps, &st);
		ck_assert_msg(!s && st == TILEC_ERR_INVALID, "accepted: %s", bad[i].maps);
		ck_assert_msg(strstr(tilec_error(ctx), bad[i].says),
			      "%s: %s", bad[i].maps, tilec_error(ctx));
	}
	tilec_context_free(ctx);
}
END_TEST

/* Dims innermost first, byte strides of dims 1 .. rank - 1, the box in
 * the same order; unbuildable where the base or a stride is not 16-byte
 * aligned or an extent is 0. */
START_TEST(spec_of_each_map)
{
	tilec_context *ctx = context();
	tilec_status st;
	TilecSignature *s = parse(ctx, good_maps, &st);
	ck_assert(s);
	long long vals[6] = { 100, 40, 72 }; /* M, N, K */
	TilecTmapSpec spec;
	void *base = (void *)(uintptr_t)0x10000;
	ck_assert(tilec_rt_tmap_spec(s, 0, base, vals, &spec));
	ck_assert_int_eq(spec.rank, 2);
	ck_assert(spec.dims[0] == 72 && spec.dims[1] == 100);
	ck_assert(spec.strides[0] == 144);
	ck_assert(spec.box[0] == 64 && spec.box[1] == 64);
	ck_assert_int_eq(spec.swizzle, 128);
	ck_assert(spec.base == base);
	ck_assert(tilec_rt_tmap_spec(s, 1, base, vals, &spec));
	ck_assert_int_eq(spec.rank, 4);
	ck_assert(spec.dims[0] == 72 && spec.dims[1] == 3 && spec.dims[2] == 100 &&
		  spec.dims[3] == 2);
	ck_assert(spec.strides[0] == 144 && spec.strides[1] == 432 &&
		  spec.strides[2] == 43200);
	ck_assert(spec.box[0] == 32 && spec.box[1] == 1 && spec.box[2] == 128 &&
		  spec.box[3] == 1);
	ck_assert(!tilec_rt_tmap_spec(s, 0, (void *)(uintptr_t)0x10008, vals, &spec));
	vals[2] = 70; /* rows of 140 bytes */
	ck_assert(!tilec_rt_tmap_spec(s, 0, base, vals, &spec));
	vals[2] = 72;
	vals[0] = 0;
	ck_assert(!tilec_rt_tmap_spec(s, 0, base, vals, &spec));
	tilec_rt_signature_free(s);
	tilec_context_free(ctx);
}
END_TEST

/* A raw launch's arguments keep their places; each map follows them,
 * 64-byte aligned, and (no TMA on this context) flagged unbuilt. */
START_TEST(raw_arguments_then_maps)
{
	tilec_context *ctx = context();
	tilec_status st;
	TilecSignature *s = parse(ctx, good_maps, &st);
	ck_assert(s);
	int M = 64, N = 64, K = 64;
	void *A = (void *)(uintptr_t)0x10000, *B = A, *X = A;
	void *args[6] = { &M, &N, &K, &A, &B, &X };
	TilecLaunchBuf buf;
	void **argv;
	bool aligned;
	ck_assert_int_eq(tilec_rt_raw_tmaps(ctx, s, args, &buf, &argv, &aligned),
			 TILEC_OK);
	ck_assert(!aligned); /* lists no tensor */
	for (int i = 0; i < 6; i++)
		ck_assert_ptr_eq(argv[i], args[i]);
	for (int i = 6; i < 8; i++) {
		const unsigned char *m = argv[i];
		unsigned usable;
		ck_assert_uint_eq((uintptr_t)m % 64, 0);
		memcpy(&usable, m + 128, sizeof usable);
		ck_assert_uint_eq(usable, 0);
	}
	ck_assert_ptr_eq(argv[8], NULL);
	free(buf.heap);
	tilec_rt_signature_free(s);
	tilec_context_free(ctx);
}
END_TEST

/* A module compiled without its launch document from a source whose
 * kernels may take tensor maps: a raw launch is refused (nothing would
 * say how to build them), naming the kernel; the same source with its
 * document, or one without tensor maps, launches. */
START_TEST(raw_launch_needs_the_document)
{
	static const char src[] =
		"/* like a kernel taking a tilec::TensorMap after its params */\n"
		"void tilec_entry_inc(void **args)\n"
		"{\n\tint *x = *(int **)args[0];\n\tx[0] += 1;\n}\n";
	tilec_context *ctx = context();
	char dir[] = "/tmp/tilec-tmap-XXXXXX";
	ck_assert(mkdtemp(dir));
	ck_assert_int_eq(tilec_set_cache_dir(ctx, dir), TILEC_OK);
	tilec_compile_options o;
	tilec_compile_options_init(&o);
	o.name = "inc.c";
	tilec_module *m = tilec_compile(ctx, src, strlen(src), &o);
	ck_assert_msg(m, "%s", tilec_error(ctx));
	tilec_kernel *k = tilec_module_kernel(m, "inc");
	ck_assert_msg(k, "%s", tilec_error(ctx));
	int x = 41;
	void *px = &x;
	void *args[] = { &px };
	ck_assert_int_eq(tilec_launch(k, args, NULL), TILEC_ERR_INVALID);
	ck_assert_msg(strstr(tilec_error(ctx), "inc may take tensor maps"), "%s",
		      tilec_error(ctx));
	ck_assert_int_eq(x, 41);
	tilec_module_free(m);
	/* Without the marker the same kernel launches raw. */
	static const char plain[] =
		"void tilec_entry_inc(void **args)\n"
		"{\n\tint *x = *(int **)args[0];\n\tx[0] += 1;\n}\n";
	m = tilec_compile(ctx, plain, strlen(plain), &o);
	ck_assert_msg(m, "%s", tilec_error(ctx));
	k = tilec_module_kernel(m, "inc");
	ck_assert_int_eq(tilec_launch(k, args, NULL), TILEC_OK);
	ck_assert_int_eq(x, 42);
	tilec_module_free(m);
	tilec_context_free(ctx);
	tilec_rt_remove_tree(dir);
}
END_TEST

/* A persistent kernel's grid, min(ceildiv(M, 64), SMs x 2), with the SM
 * count the launch gives (what tilec_launch_checked reads from the
 * device): one wave when there are more tiles, the tiles when fewer;
 * without a count (no GPU) the launch is refused, saying why; another
 * device attribute is no expression. */
START_TEST(persistent_grid_reads_the_sms)
{
	static const char doc[] =
		"{\"format\": \"tilec-launch/1\", \"kernels\": [{\"kernel\": "
		"\"p\", \"target\": \"cuda\", \"arch\": \"sm_90a\", "
		"\"threads\": 384, \"smem_bytes\": 0, \"tunables\": {}, "
		"\"params\": [{\"name\": \"M\", \"kind\": \"scalar\", "
		"\"dtype\": \"i32\", \"ctype\": \"int\"}], \"grid\": ["
		"{\"op\": \"min\", \"args\": [{\"op\": \"ceildiv\", \"args\": "
		"[{\"param\": \"M\"}, {\"int\": 64}]}, {\"op\": \"*\", \"args\": "
		"[{\"device\": \"%s\"}, {\"int\": 2}]}]}, {\"int\": 1}, "
		"{\"int\": 1}]}]}";
	static const struct {
		int M, sms;
		unsigned grid;
	} cases[] = { { 64000, 132, 264 }, { 64000, 7, 14 }, { 640, 132, 10 },
		      { 640, 1, 2 }, { 0, 132, 0 } };
	tilec_context *ctx = context();
	char text[2048];
	snprintf(text, sizeof text, doc, "sms");
	TilecSignature **sigs = NULL;
	int n = 0;
	ck_assert_int_eq(tilec_rt_signatures_parse(ctx, "cuda", text, &sigs, &n),
			 TILEC_OK);
	ck_assert_int_eq(n, 1);
	TilecSignature *s = sigs[0];
	free(sigs);
	ck_assert(tilec_rt_signature_sms(s));
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		tilec_arg arg = tilec_arg_int("M", cases[i].M);
		TilecLaunchBuf buf;
		void **argv;
		tilec_launch_config cfg;
		bool empty, aligned;
		int problem;
		ck_assert_int_eq(tilec_rt_prepare_launch(ctx, s, TILEC_BACKEND_CUDA,
							 0, cases[i].sms, &arg, 1,
							 NULL, &buf, &argv, &cfg,
							 &empty, &aligned, &problem),
				 TILEC_OK);
		ck_assert_uint_eq(cfg.grid[0], cases[i].grid);
		ck_assert_int_eq(empty, cases[i].grid == 0);
		free(buf.heap);
	}
	tilec_arg arg = tilec_arg_int("M", 640);
	TilecLaunchBuf buf;
	void **argv;
	tilec_launch_config cfg;
	bool empty, aligned;
	int problem;
	ck_assert_int_eq(tilec_rt_prepare_launch(ctx, s, TILEC_BACKEND_CUDA, 0, 0,
						 &arg, 1, NULL, &buf, &argv,
						 &cfg, &empty, &aligned, &problem),
			 TILEC_ERR_INVALID);
	ck_assert_msg(strstr(tilec_error(ctx), "min(ceildiv(M, 64), (sms * 2))") &&
		      strstr(tilec_error(ctx), "SM count is not known"), "%s",
		      tilec_error(ctx));
	tilec_rt_signature_free(s);
	snprintf(text, sizeof text, doc, "clock");
	ck_assert_int_eq(tilec_rt_signatures_parse(ctx, "cuda", text, &sigs, &n),
			 TILEC_ERR_INVALID);
	ck_assert_msg(strstr(tilec_error(ctx), "device attribute 'clock'"), "%s",
		      tilec_error(ctx));
	tilec_context_free(ctx);
}
END_TEST

/* "aligned" (docs/launch.md): a raw launch is aligned when every tensor
 * listed starts on 16 bytes and, of rank 2 or more, has rows of whole
 * 16-byte vectors (f16 A[M][K]: K a multiple of 8; bf16 X[2][M][3][K]
 * too), and every tensor map was built (none is on this context).  A
 * list naming a scalar, a tensor twice or not an array is refused. */
START_TEST(aligned_launches)
{
	tilec_context *ctx = context();
	tilec_status st;
	TilecSignature *s = parse(ctx, ", \"aligned\": [\"A\", \"X\"]", &st);
	ck_assert_msg(s, "%s", tilec_error(ctx));
	ck_assert_int_eq(tilec_rt_signature_aligned(s), 2);
	static const struct {
		uintptr_t a, x;
		int k;
		bool aligned;
	} cases[] = {
		{ 0x10000, 0x20000, 64, true },  { 0x10000, 0x20000, 72, true },
		{ 0x10000, 0x20000, 60, false }, { 0x10000, 0x20000, 4, false },
		{ 0x10008, 0x20000, 64, false }, { 0x10000, 0x20002, 64, false },
		{ 0x10000, 0x20010, 8, true },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		int M = 5, N = 3, K = cases[i].k;
		void *A = (void *)cases[i].a, *B = (void *)(uintptr_t)0x30001,
		     *X = (void *)cases[i].x;
		void *args[6] = { &M, &N, &K, &A, &B, &X };
		TilecLaunchBuf buf;
		void **argv;
		bool aligned;
		ck_assert_int_eq(tilec_rt_raw_tmaps(ctx, s, args, &buf, &argv,
						    &aligned), TILEC_OK);
		ck_assert_msg(aligned == cases[i].aligned, "case %zu", i);
		for (int j = 0; j < 6; j++)
			ck_assert_ptr_eq(argv[j], args[j]);
		free(buf.heap);
	}
	tilec_rt_signature_free(s);
	/* Maps that were not built: never aligned. */
	char maps[1024];
	snprintf(maps, sizeof maps, "%s, \"aligned\": [\"A\"]", good_maps);
	s = parse(ctx, maps, &st);
	ck_assert_msg(s, "%s", tilec_error(ctx));
	int M = 64, N = 64, K = 64;
	void *A = (void *)(uintptr_t)0x10000, *B = A, *X = A;
	void *args[6] = { &M, &N, &K, &A, &B, &X };
	TilecLaunchBuf buf;
	void **argv;
	bool aligned = true;
	ck_assert_int_eq(tilec_rt_raw_tmaps(ctx, s, args, &buf, &argv, &aligned),
			 TILEC_OK);
	ck_assert(!aligned);
	free(buf.heap);
	tilec_rt_signature_free(s);
	static const char *const bad[] = { ", \"aligned\": [\"M\"]",
					   ", \"aligned\": [\"A\", \"A\"]",
					   ", \"aligned\": [\"Y\"]",
					   ", \"aligned\": \"A\"",
					   ", \"aligned\": [3]" };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		ck_assert_ptr_null(parse(ctx, bad[i], &st));
		ck_assert_int_eq(st, TILEC_ERR_INVALID);
		ck_assert_msg(strstr(tilec_error(ctx), "aligned"), "%s",
			      tilec_error(ctx));
	}
	tilec_context_free(ctx);
}
END_TEST

/* A module whose launch document lists aligned tensors is built twice:
 * with TILEC_ALIGNED=1 by tilec_compile, and without at the first launch
 * that is not aligned (a second, separately cached object); then each
 * launch runs the build its arguments allow.  The kernel writes the
 * build's TILEC_ALIGNED into its tensor. */
START_TEST(two_builds_chosen_per_launch)
{
	static const char src[] =
		"#ifndef TILEC_ALIGNED\n#define TILEC_ALIGNED 0\n#endif\n"
		"void tilec_entry_k(void **args)\n"
		"{\n\tint *x = *(int **)args[1];\n\tx[0] = 10 + TILEC_ALIGNED;\n}\n";
	static const char doc[] =
		"{\"format\": \"tilec-launch/1\", \"kernels\": [{\"kernel\": \"k\", "
		"\"target\": \"openmp\", \"arch\": \"generic\", \"threads\": 1, "
		"\"smem_bytes\": 0, \"tunables\": {}, \"params\": ["
		"{\"name\": \"N\", \"kind\": \"scalar\", \"dtype\": \"i32\", \"ctype\": \"int\"},"
		"{\"name\": \"X\", \"kind\": \"tensor\", \"dtype\": \"i32\", \"ctype\": "
		"\"int32_t *\", \"const\": false, \"rank\": 1, \"shape\": "
		"[{\"param\": \"N\"}]}], \"aligned\": [\"X\"], "
		"\"grid\": [{\"int\": 1}, {\"int\": 1}, {\"int\": 1}]}]}";
	tilec_context *ctx = context();
	char dir[] = "/tmp/tilec-aligned-XXXXXX";
	ck_assert(mkdtemp(dir));
	ck_assert_int_eq(tilec_set_cache_dir(ctx, dir), TILEC_OK);
	tilec_compile_options o;
	tilec_compile_options_init(&o);
	o.name = "k.c";
	o.manifest = doc;
	tilec_module *m = tilec_compile(ctx, src, strlen(src), &o);
	ck_assert_msg(m, "%s", tilec_error(ctx));
	tilec_kernel *k = tilec_module_kernel(m, "k");
	ck_assert_msg(k, "%s", tilec_error(ctx));
	_Alignas(16) int x[8] = { 0 };
	int N = 4;
	void *px = x, *py = x + 1;
	void *args[] = { &N, &px };
	void *off[] = { &N, &py };
	ck_assert_int_eq(tilec_launch(k, args, NULL), TILEC_OK);
	ck_assert_int_eq(x[0], 11);
	ck_assert_int_eq(tilec_launch(k, off, NULL), TILEC_OK);
	ck_assert_int_eq(x[1], 10);
	x[0] = 0;
	ck_assert_int_eq(tilec_launch(k, args, NULL), TILEC_OK);
	ck_assert_int_eq(x[0], 11);
	tilec_module_free(m);
	/* The same without the list: one build, as written. */
	static const char *const list = "\"aligned\": [\"X\"], ";
	char plain[sizeof doc];
	const char *at = strstr(doc, list);
	ck_assert(at);
	snprintf(plain, sizeof plain, "%.*s%s", (int)(at - doc), doc, at + strlen(list));
	o.manifest = plain;
	m = tilec_compile(ctx, src, strlen(src), &o);
	ck_assert_msg(m, "%s", tilec_error(ctx));
	k = tilec_module_kernel(m, "k");
	ck_assert_int_eq(tilec_launch(k, args, NULL), TILEC_OK);
	ck_assert_int_eq(x[0], 10);
	tilec_module_free(m);
	tilec_context_free(ctx);
	tilec_rt_remove_tree(dir);
}
END_TEST

Suite *
unit_suite_tmap(void)
{
	Suite *s = suite_create("tmap");
	TCase *c = tcase_create("tmap");
	tcase_add_test(c, reads_the_maps);
	tcase_add_test(c, refuses_bad_maps);
	tcase_add_test(c, spec_of_each_map);
	tcase_add_test(c, raw_arguments_then_maps);
	tcase_add_test(c, raw_launch_needs_the_document);
	tcase_add_test(c, persistent_grid_reads_the_sms);
	tcase_add_test(c, aligned_launches);
	tcase_add_test(c, two_builds_chosen_per_launch);
	suite_add_tcase(s, c);
	return s;
}
