/*
 * test_target.c - the target description (src/target/target.c): every entry of
 * tc_targets is consistent with itself, with the lookups the command line
 * and the runtime use, with the backends, and with the numbers the helper
 * headers are written for (a warp's lanes, the explicit vectors' lanes).
 */
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether n is a power of two. */
static bool
pow2(long long n)
{
	return n > 0 && (n & (n - 1)) == 0;
}

/* The integer after `key` in the embedded header `path` (-1: not there). */
static long long
header_number(const char *path, const char *key)
{
	const TcEmbedded *e = tc_embedded_find(path);
	ck_assert_msg(e != NULL, "no embedded %s", path);
	const char *p = strstr(e->text, key);
	long long n = -1;
	if (!p || sscanf(p + strlen(key), "%lld", &n) != 1)
		return -1;
	return n;
}

START_TEST(threads_and_warps)
{
	for (int i = 0; i < tc_ntargets; i++) {
		const TcTarget *t = &tc_targets[i];
		ck_assert_msg(t->name && t->arch, "entry %d unnamed", i);
		ck_assert_msg(pow2(t->warp_size), "%s/%s", t->name, t->arch);
		ck_assert_msg(t->simt == (t->warp_size > 1), "%s/%s: warps "
			      "of %d lanes", t->name, t->arch, t->warp_size);
		ck_assert_msg(t->max_threads > 0 &&
			      t->max_threads % t->warp_size == 0,
			      "%s/%s: %d threads in warps of %d", t->name,
			      t->arch, t->max_threads, t->warp_size);
		ck_assert_msg(t->default_threads > 0 &&
			      t->default_threads <= t->max_threads &&
			      t->default_threads % t->warp_size == 0,
			      "%s/%s: %d threads by default", t->name, t->arch,
			      t->default_threads);
	}
}
END_TEST

START_TEST(shared_memory)
{
	for (int i = 0; i < tc_ntargets; i++) {
		const TcTarget *t = &tc_targets[i];
		ck_assert_msg(t->smem_default > 0 &&
			      t->smem_default <= t->smem_limit,
			      "%s/%s: %lld by default, %lld at most", t->name,
			      t->arch, t->smem_default, t->smem_limit);
		/* smem.c places buffers at 128-byte boundaries. */
		ck_assert_msg(t->smem_limit % 128 == 0, "%s/%s", t->name,
			      t->arch);
	}
}
END_TEST

/* A matrix instruction's tile is spread over one warp: every lane holds
 * row_count x col_count elements of it, no element twice. */
START_TEST(matrix_instructions)
{
	for (int i = 0; i < tc_ntargets; i++) {
		const TcTarget *t = &tc_targets[i];
		const TcMatrixInsn *m = t->mma;
		if (!m)
			continue;
		ck_assert_msg(t->simt, "%s/%s: a matrix instruction without "
			      "warps", t->name, t->arch);
		ck_assert_msg(m->name && m->m > 0 && m->n > 0 && m->nforms > 0 &&
			      m->nforms <= (int)(sizeof m->forms / sizeof *m->forms),
			      "%s/%s", t->name, t->arch);
		ck_assert_msg(m->row_count * m->col_count * t->warp_size ==
			      m->m * m->n, "%s/%s: %s's %dx%d tile over %d "
			      "lanes of %dx%d", t->name, t->arch, m->name, m->m,
			      m->n, t->warp_size, m->row_count, m->col_count);
		ck_assert_msg(m->layout == TC_LAYOUT_MMA ||
			      m->layout == TC_LAYOUT_MFMA, "%s/%s", t->name,
			      t->arch);
		/* Each form: operands, an accumulator the language allows
		 * (float or i32), a k step; no dtype pair served twice, so
		 * tc_matrix_form's answer does not depend on the order. */
		for (int f = 0; f < m->nforms; f++) {
			const TcMatrixForm *mf = &m->forms[f];
			ck_assert_msg(mf->name && mf->operands != 0 && mf->k > 0 &&
				      (tc_dtype_is_float(mf->accum) ||
				       mf->accum == TC_DT_I32), "%s/%s form %d",
				      t->name, t->arch, f);
			for (int g = 0; g < f; g++)
				ck_assert_msg(!(m->forms[g].operands & mf->operands) ||
					      m->forms[g].accum != mf->accum,
					      "%s/%s forms %d and %d", t->name,
					      t->arch, g, f);
			for (int d = 1; d < TC_DT_COUNT; d++)
				if (mf->operands & (1u << d))
					ck_assert(tc_matrix_form(m, (TcDtype)d,
								 mf->accum) == mf);
		}
		ck_assert(tc_matrix_form(m, TC_DT_F64, TC_DT_F64) == NULL);
		/* ldmatrix reads the MMA layout's operand tiles. */
		ck_assert(!t->ldmatrix || m->layout == TC_LAYOUT_MMA);
	}
}
END_TEST

/* What needs what: everything asynchronous is a GPU's; TMA copies
 * complete on mbarriers; wgmma comes with TMA (sm_90a). */
START_TEST(capabilities_imply)
{
	for (int i = 0; i < tc_ntargets; i++) {
		const TcTarget *t = &tc_targets[i];
		bool gpu_only = t->ldmatrix || t->cp_async || t->mbarrier ||
				t->tma || t->wgmma;
		ck_assert_msg(!gpu_only || t->simt, "%s/%s", t->name, t->arch);
		ck_assert_msg(!t->tma || t->mbarrier, "%s/%s", t->name, t->arch);
		ck_assert_msg(!t->wgmma || (t->tma && t->mma), "%s/%s",
			      t->name, t->arch);
		/* wgmma is issued by warpgroups, its accumulator spread in
		 * its own layout, n a multiple of its granule. */
		ck_assert_msg(!t->wgmma || (t->wgmma->layout == TC_LAYOUT_WGMMA &&
					   t->wgmma->group_warps == 4 &&
					   t->wgmma->max_n % t->wgmma->n == 0),
			      "%s/%s", t->name, t->arch);
		ck_assert_msg(!t->ldmatrix || t->mma, "%s/%s", t->name, t->arch);
	}
}
END_TEST

/* Whether the embedded header's `#if TILEC_VL != A && TILEC_VL != B`
 * (the counts it is written for, the line that stops it on others)
 * names lanes. */
static bool
header_lanes(int lanes)
{
	const TcEmbedded *e = tc_embedded_find("cpu/tilec_cpu.h");
	ck_assert_msg(e != NULL, "no embedded cpu/tilec_cpu.h");
	const char *p = strstr(e->text, "#if TILEC_VL != ");
	ck_assert_msg(p != NULL, "no #if TILEC_VL != in tilec_cpu.h");
	const char *end = strchr(p, '\n');
	int counts = 0;
	bool found = false;
	for (const char *q = p; (q = strstr(q, "TILEC_VL != ")) && q < end;) {
		q += strlen("TILEC_VL != ");
		counts++;
		found |= atoi(q) == lanes;
	}
	ck_assert_int_gt(counts, 0);
	return found;
}

/* CPU vectors: a power of two of float lanes, the CPU features they
 * need named; explicit vectors only where they fill the ISA's register,
 * of a width templates/cpu/tilec_cpu.h is written for. */
START_TEST(cpu_vectors)
{
	int with_explicit = 0;
	for (int i = 0; i < tc_ntargets; i++) {
		const TcTarget *t = &tc_targets[i];
		if (t->simt) {
			ck_assert(t->vector_lanes == 0 && t->explicit_lanes == 0);
			ck_assert(!t->cpu_features[0] && !t->cpu_spelled);
			continue;
		}
		ck_assert_msg(pow2(t->vector_lanes), "%s/%s", t->name, t->arch);
		/* A vector ISA is checked for before its code runs
		 * (export.c); portable C needs nothing. */
		ck_assert_msg((t->vector_lanes > 1) == (t->cpu_features[0] != NULL) &&
			      (t->cpu_features[0] != NULL) == (t->cpu_spelled != NULL),
			      "%s/%s", t->name, t->arch);
		if (!t->explicit_lanes)
			continue;
		with_explicit++;
		ck_assert_msg(t->explicit_lanes == t->vector_lanes &&
			      header_lanes(t->explicit_lanes),
			      "%s/%s: explicit vectors of %d lanes, which the "
			      "header is not written for", t->name, t->arch,
			      t->explicit_lanes);
	}
	ck_assert_int_gt(with_explicit, 0);
}
END_TEST

/* The warp the GPU helper headers are written for is the table's. */
START_TEST(helper_warps)
{
	static const struct {
		TcTargetKind kind;  /* the backend */
		const char *header; /* its helper header, embedded */
	} helpers[] = {
		{ TC_TARGET_CUDA, "cuda/tilec_cuda.cuh" },
		{ TC_TARGET_HIP, "hip/tilec_hip.hpp" },
	};
	for (size_t h = 0; h < sizeof helpers / sizeof helpers[0]; h++) {
		long long warp = header_number(helpers[h].header,
					       "enum { WARP = ");
		ck_assert_msg(warp > 0, "%s: no WARP", helpers[h].header);
		for (int i = 0; i < tc_ntargets; i++)
			if (tc_targets[i].kind == helpers[h].kind)
				ck_assert_msg(tc_targets[i].warp_size == warp,
					      "%s/%s: warps of %d, %s has %lld",
					      tc_targets[i].name,
					      tc_targets[i].arch,
					      tc_targets[i].warp_size,
					      helpers[h].header, warp);
	}
}
END_TEST

/* Every entry is what tc_target_init (the -t/--arch options, the API,
 * records) gives for its name and arch, once; each target has a default
 * and a backend; the archs the runtime picks for a device have entries. */
START_TEST(lookups)
{
	for (int i = 0; i < tc_ntargets; i++) {
		const TcTarget *e = &tc_targets[i];
		TcTarget t;
		ck_assert_msg(tc_target_init(&t, e->name, e->arch), "%s/%s",
			      e->name, e->arch);
		ck_assert(t.name == e->name && t.arch == e->arch &&
			  t.kind == e->kind && t.mma == e->mma &&
			  t.warp_size == e->warp_size &&
			  t.smem_limit == e->smem_limit &&
			  t.explicit_lanes == e->explicit_lanes);
		ck_assert(tc_target_init(&t, e->name, NULL));
		ck_assert_str_eq(t.name, e->name);
		ck_assert(tc_backend_find(e->kind) != NULL);
		for (int j = 0; j < i; j++)
			ck_assert_msg(strcmp(tc_targets[j].name, e->name) != 0 ||
				      strcmp(tc_targets[j].arch, e->arch) != 0,
				      "%s/%s twice", e->name, e->arch);
		/* One target's entries are contiguous (tc_target_explain). */
		if (i > 1 && strcmp(tc_targets[i - 1].name, e->name) != 0)
			for (int j = 0; j < i - 1; j++)
				ck_assert_str_ne(tc_targets[j].name, e->name);
	}
	static const char *const device_archs[][2] = {
		{ "cuda", "sm_80" }, { "cuda", "sm_90a" },
		{ "hip", "gfx90a" }, { "hip", "gfx942" },
		{ "openmp", "avx512" }, { "openmp", "avx2" },
		{ "openmp", "generic" },
	};
	for (size_t i = 0; i < sizeof device_archs / sizeof device_archs[0]; i++) {
		TcTarget t;
		ck_assert_msg(tc_target_init(&t, device_archs[i][0],
					     device_archs[i][1]),
			      "%s/%s", device_archs[i][0], device_archs[i][1]);
	}
	TcTarget t;
	ck_assert(!tc_target_init(&t, "cuda", "sm_70"));
	ck_assert(!tc_target_init(&t, "metal", NULL));
}
END_TEST

/* The n of wgmma instructions over a warpgroup's columns: the widest
 * power of two from max(16, min_n) to 256 that divides them. */
START_TEST(wgmma_chunks)
{
	TcTarget t;
	ck_assert(tc_target_init(&t, "cuda", "sm_90a") && t.wgmma);
	static const int cases[][3] = {
		/* cols, min_n, n */
		{ 256, 16, 256 }, { 512, 16, 256 }, { 128, 64, 128 },
		{ 96, 16, 32 }, { 48, 16, 16 }, { 32, 64, 0 }, { 8, 16, 0 },
		{ 192, 64, 64 }, { 192, 128, 0 }, { 24, 16, 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		ck_assert_msg(tc_wgmma_chunk(t.wgmma, cases[i][0], cases[i][1]) ==
			      cases[i][2], "cols %d min %d", cases[i][0],
			      cases[i][1]);
	ck_assert(tc_target_init(&t, "cuda", "sm_80") && !t.wgmma);
}
END_TEST

/* CPU entries: a register block and caches for the gemm pass; AMX implies
 * VNNI (every AMX CPU has it); the needs list names every feature the
 * entry's export checks, and AMX's; --arch native and the aliases reach
 * entries of the table, native with caches of plausible sizes. */
START_TEST(cpu_gemm_fields)
{
	for (int i = 0; i < tc_ntargets; i++) {
		const TcTarget *t = &tc_targets[i];
		if (t->kind != TC_TARGET_OPENMP)
			continue;
		ck_assert_msg(t->gemm_mr > 0 && t->gemm_nr > 0 &&
			      t->gemm_nr % (t->vector_lanes > 1 ? t->vector_lanes : 1) == 0,
			      "%s: %d x %d", t->arch, t->gemm_mr, t->gemm_nr);
		ck_assert(t->l1d_bytes >= 16 * 1024 && t->l2_bytes > t->l1d_bytes);
		ck_assert(!t->amx || t->vnni);
		TcBuf b;
		tc_buf_init(&b);
		tc_target_cpu_needs(&b, t);
		for (int f = 0; t->cpu_features[f]; f++)
			ck_assert(strstr(b.data, t->cpu_features[f]) != NULL);
		ck_assert(!t->amx || strstr(b.data, "amx-tile amx-bf16 amx-int8"));
		ck_assert(t->cpu_features[0] || t->amx || b.len == 0);
		tc_buf_free(&b);
	}
	TcTarget t, u;
	ck_assert(tc_target_init(&t, "openmp", "native"));
	ck_assert(tc_target_init(&u, "openmp", t.arch));
	ck_assert(t.l1d_bytes >= 16 * 1024 && t.l1d_bytes <= 1024 * 1024);
	ck_assert(t.l2_bytes >= 128 * 1024);
	ck_assert(tc_target_init(&t, "openmp", "sapphirerapids"));
	ck_assert_str_eq(t.arch, "amx");
	ck_assert(t.amx);
	ck_assert(!tc_target_init(&t, "cuda", "sapphirerapids"));
}
END_TEST

/* The arch a context without one takes from its device comes from the
 * table: each GPU entry's device_arch and min_cc, every entry reachable. */
START_TEST(device_arch)
{
	static const struct {
		const char *target, *device;
		int cc;
		const char *arch; /* NULL: no arch serves the device */
	} cases[] = {
		{ "cuda", "sm_90a", 90, "sm_90a" },
		{ "cuda", "sm_90", 90, "sm_80" },
		{ "cuda", "sm_86", 86, "sm_80" },
		{ "cuda", "sm_80", 80, "sm_80" },
		{ "cuda", "sm_120", 120, "sm_80" },
		{ "cuda", "sm_75", 75, NULL },
		{ "hip", "gfx90a:sramecc+:xnack-", 0, "gfx90a" },
		{ "hip", "gfx940", 0, "gfx942" },
		{ "hip", "gfx942", 0, "gfx942" },
		{ "hip", "gfx1100", 0, NULL },
		{ "openmp", "native", 0, NULL },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *got = tc_target_device_arch(cases[i].target,
							cases[i].device, cases[i].cc);
		ck_assert_msg(cases[i].arch ? got && strcmp(got, cases[i].arch) == 0
					    : got == NULL,
			      "%s on %s: got %s", cases[i].target, cases[i].device,
			      got ? got : "none");
	}
	/* Every GPU entry serves some device, and says so in words. */
	for (int i = 0; i < tc_ntargets; i++) {
		const TcTarget *t = &tc_targets[i];
		if (!t->simt)
			continue;
		ck_assert_msg(t->device_arch || t->min_cc, "%s/%s", t->name, t->arch);
		const char *got = tc_target_device_arch(t->name, t->device_arch ?
							t->device_arch : "", t->min_cc);
		ck_assert_msg(got && strcmp(got, t->arch) == 0, "%s/%s", t->name,
			      t->arch);
		TcBuf b;
		tc_buf_init(&b);
		tc_target_devices(&b, t->name);
		ck_assert_msg(strstr(b.data, t->arch) != NULL, "%s", b.data);
		tc_buf_free(&b);
	}
}
END_TEST

/* --list-targets prints every entry, with the facts it holds. */
START_TEST(describe)
{
	for (int i = 0; i < tc_ntargets; i++) {
		const TcTarget *t = &tc_targets[i];
		TcBuf b;
		tc_buf_init(&b);
		tc_target_describe(&b, t);
		char head[64];
		snprintf(head, sizeof head, "%s/%s\n", t->name, t->arch);
		ck_assert_msg(strncmp(b.data, head, strlen(head)) == 0, "%s",
			      b.data);
		if (t->mma)
			ck_assert(strstr(b.data, t->mma->name) != NULL);
		if (t->wgmma)
			ck_assert(strstr(b.data, t->wgmma->name) != NULL);
		if (t->tma)
			ck_assert(strstr(b.data, "tma            yes (with "
					 "--tma)") != NULL);
		for (const char *line = b.data; *line;) {
			const char *nl = strchr(line, '\n');
			ck_assert(nl != NULL);
			ck_assert_msg(nl - line <= 80, "%.*s", (int)(nl - line),
				      line);
			line = nl + 1;
		}
		tc_buf_free(&b);
	}
}
END_TEST

Suite *
unit_suite_target(void)
{
	Suite *s = suite_create("target");
	TCase *tc = tcase_create("table");
	tcase_add_test(tc, threads_and_warps);
	tcase_add_test(tc, shared_memory);
	tcase_add_test(tc, matrix_instructions);
	tcase_add_test(tc, capabilities_imply);
	tcase_add_test(tc, cpu_vectors);
	tcase_add_test(tc, helper_warps);
	tcase_add_test(tc, lookups);
	tcase_add_test(tc, cpu_gemm_fields);
	tcase_add_test(tc, describe);
	tcase_add_test(tc, wgmma_chunks);
	tcase_add_test(tc, device_arch);
	suite_add_tcase(s, tc);
	return s;
}
