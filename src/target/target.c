/*
 * target.c - the target description: what the passes and emitters assume
 * about each target and arch, in one table.
 *
 * tc_targets[] holds one TcTarget per target and arch: warp width, thread
 * counts, shared memory, the matrix instruction a gemm lowers to, the
 * asynchronous machinery (cp.async, mbarrier, TMA, wgmma), CPU vector
 * lanes.  Passes and emitters read these fields and never test which
 * target they run for; `tilec --list-targets` prints the table
 * (tc_target_describe), and tests/unit/test_target.c checks its
 * invariants.
 *
 * tc_target_init fills a TcTarget from a target name and an optional
 * arch.  For the OpenMP target the default arch is the build machine's
 * widest vector ISA (avx512, avx2, else generic); GPU targets default to
 * their oldest supported architecture, the first entry of each.
 * tc_target_explain turns a name or arch that is none of these into a
 * usage error listing the valid ones.
 */
#include "ir/tilec_int.h"

#include <string.h>
#include <unistd.h>

#define DT(t) (1u << TC_DT_##t)

/* mma.sync on sm_80 and later: lane l holds rows l/4 and l/4 + 8, columns
 * 2*(l%4) and 2*(l%4) + 1 of each 16x8 accumulator tile, in every form.
 * m16n8k16 multiplies f16 or bf16 into f32, m16n8k32 s8 into s32, and fp8
 * into f32 natively from sm_89 (sm_90a here), on sm_80 as two m16n8k16
 * after converting the fp8 bytes to f16 in registers (exact).  The 8-bit
 * forms' A operand is not the accumulator's layout, so it comes from
 * shared memory. */
#define MMA_16BIT                                                            \
	{ .name = "mma.sync.aligned.m16n8k16", .operands = DT(F16) | DT(BF16), \
	  .accum = TC_DT_F32, .k = 16, .a_in_regs = true }
#define MMA_S8                                                               \
	{ .name = "mma.sync.aligned.m16n8k32.s32.s8.s8.s32",                 \
	  .operands = DT(I8), .accum = TC_DT_I32, .k = 32 }
static const TcMatrixInsn mma_m16n8_sm80 = {
	.name = "mma.sync.aligned.m16n8", .layout = TC_LAYOUT_MMA,
	.m = 16, .n = 8, .max_n = 8, .group_warps = 1,
	.row_count = 2, .col_count = 2,
	.forms = {
		MMA_16BIT, MMA_S8,
		{ .name = "2 x mma.sync.m16n8k16 via f16",
		  .operands = DT(FP8E4M3) | DT(FP8E5M2), .accum = TC_DT_F32,
		  .k = 32 },
	},
	.nforms = 3,
};
static const TcMatrixInsn mma_m16n8_sm90 = {
	.name = "mma.sync.aligned.m16n8", .layout = TC_LAYOUT_MMA,
	.m = 16, .n = 8, .max_n = 8, .group_warps = 1,
	.row_count = 2, .col_count = 2,
	.forms = {
		MMA_16BIT, MMA_S8,
		{ .name = "mma.sync.m16n8k32.e4m3 / .e5m2",
		  .operands = DT(FP8E4M3) | DT(FP8E5M2), .accum = TC_DT_F32,
		  .k = 32 },
	},
	.nforms = 3,
};

/* wgmma.mma_async on sm_90a: a warpgroup (4 warps) multiplies a 64 x n
 * tile, n a multiple of 8 up to 256, reading B (and here A) from shared
 * memory through descriptors.  Warp w of the group holds rows 16w ..
 * 16w + 15, each warp's lanes as in mma.sync's m16n8 tiles.  16-bit
 * operands may be K- or MN-major, and A may be a register fragment; 8-bit
 * ones K-major only (B as [N][K], TILE_TRANS_B), from shared memory.
 * The fp8 forms add their products into the f32 accumulator keeping
 * only about 14 bits of the sum (measured on the H200: a K=700 gemm off
 * by 1e-3, K=8192 by 7e-3, where mma.sync's are exact), so their gemms
 * are promoted. */
static const TcMatrixInsn wgmma_sm90a = {
	.name = "wgmma.mma_async.m64nNk16", .layout = TC_LAYOUT_WGMMA,
	.m = 64, .n = 8, .max_n = 256, .group_warps = 4,
	.row_count = 2, .col_count = 2,
	.forms = {
		{ .name = "wgmma.mma_async.m64nNk16.f32.f16 / .bf16",
		  .operands = DT(F16) | DT(BF16), .accum = TC_DT_F32, .k = 16,
		  .a_in_regs = true, .mn_major = true },
		{ .name = "wgmma.m64nNk32.f32.e4m3 / .e5m2",
		  .operands = DT(FP8E4M3) | DT(FP8E5M2), .accum = TC_DT_F32,
		  .k = 32, .promote = true },
		{ .name = "wgmma.m64nNk32.s32.s8.s8", .operands = DT(I8),
		  .accum = TC_DT_I32, .k = 32 },
	},
	.nforms = 3,
};

/* v_mfma_*_16x16 (CDNA), issued with the operands swapped so the result is
 * the transposed tile: lane l holds row l%16 and the four consecutive
 * columns 4*(l/16) .. 4*(l/16) + 3 of each 16x16 tile.  f16 and bf16 go
 * through v_mfma_f32_16x16x16, f32 through four v_mfma_f32_16x16x4f32;
 * i8 through v_mfma_i32_16x16x16i8 on CDNA2 and v_mfma_i32_16x16x32_i8 on
 * CDNA3, which dropped the former.  fp8 (OCP e4m3, e5m2) goes through
 * the f16 instruction, each lane's bytes converted to f16 in registers
 * (exact): CDNA2 has no fp8 instruction and CDNA3's take the FNUZ
 * encodings.  Like i8, its A operand comes from shared memory. */
#define MFMA_FLOAT                                                           \
	{ .name = "v_mfma_f32_16x16x16",                                     \
	  .operands = DT(F16) | DT(BF16) | DT(F32), .accum = TC_DT_F32,      \
	  .k = 16, .a_in_regs = true }
#define MFMA_FP8                                                             \
	{ .name = "v_mfma_f32_16x16x16f16 via f16",                          \
	  .operands = DT(FP8E4M3) | DT(FP8E5M2), .accum = TC_DT_F32,         \
	  .k = 16 }
static const TcMatrixInsn mfma_cdna2 = {
	.name = "v_mfma_*_16x16", .layout = TC_LAYOUT_MFMA,
	.m = 16, .n = 16, .max_n = 16, .group_warps = 1,
	.row_count = 1, .col_count = 4,
	.forms = {
		MFMA_FLOAT,
		{ .name = "v_mfma_i32_16x16x16i8", .operands = DT(I8),
		  .accum = TC_DT_I32, .k = 16 },
		MFMA_FP8,
	},
	.nforms = 3,
};
static const TcMatrixInsn mfma_cdna3 = {
	.name = "v_mfma_*_16x16", .layout = TC_LAYOUT_MFMA,
	.m = 16, .n = 16, .max_n = 16, .group_warps = 1,
	.row_count = 1, .col_count = 4,
	.forms = {
		MFMA_FLOAT,
		{ .name = "v_mfma_i32_16x16x32_i8", .operands = DT(I8),
		  .accum = TC_DT_I32, .k = 32 },
		MFMA_FP8,
	},
	.nforms = 3,
};

const TcMatrixForm *
tc_matrix_form(const TcMatrixInsn *mi, TcDtype operands, TcDtype accum)
{
	for (int i = 0; mi && i < mi->nforms; i++)
		if ((mi->forms[i].operands & (1u << operands)) &&
		    mi->forms[i].accum == accum)
			return &mi->forms[i];
	return NULL;
}

int
tc_wgmma_chunk(const TcMatrixInsn *wg, long long cols, int min_n)
{
	int n = wg->max_n;
	while (n >= 16 && n >= min_n && cols % n != 0)
		n /= 2;
	return n >= 16 && n >= min_n ? n : 0;
}

/* CPU: one OS thread runs a block.  Buffers live in the OpenMP thread's
 * frame; 1 MiB keeps them in L2 on current cores and well under the
 * default 8 MiB thread stack.  tile_threads becomes loop iterations; 1024
 * is the same bound the GPUs have.  The explicit vectors (tilec_vf) are
 * one register: 16 floats with AVX-512, 8 with AVX2 (and F16C, which
 * every AVX2 processor has, for the f16 conversions).  mr x nr is the f32 gemm's register
 * block (gemm.h), l1 and l2 the cache sizes assumed unless the host's
 * are read (--arch native). */
#define CPU(arch_, lanes, explicit_, mr, nr, l1, l2, vnni_, amx_, spelled,   \
	    ...)                                                             \
	{ .kind = TC_TARGET_OPENMP, .name = "openmp", .arch = arch_,         \
	  .simt = false, .warp_size = 1, .default_threads = 1,               \
	  .max_threads = 1024, .smem_default = 1 << 20,                      \
	  .smem_limit = 1 << 20, .vector_lanes = lanes,                      \
	  .explicit_lanes = explicit_, .gemm_mr = mr, .gemm_nr = nr,         \
	  .l1d_bytes = l1, .l2_bytes = l2, .vnni = vnni_, .amx = amx_,       \
	  .cpu_spelled = spelled, .cpu_features = { __VA_ARGS__ } }
#define KIB(n) ((long long)(n) << 10)

/* NVIDIA: warps of 32, 48 KiB of dynamic shared memory without the
 * function attribute, the rest of the SM's opt-in limit with it.  sm_80
 * brought mma.sync, ldmatrix, cp.async and mbarrier; sm_90a adds wgmma
 * (layout.c picks it where every gemm of a kernel fits) and TMA, which
 * no pass uses yet. */
#define CUDA(arch_, device_, cc_, optin, hopper, mma_, wgmma_)               \
	{ .kind = TC_TARGET_CUDA, .name = "cuda", .arch = arch_,             \
	  .device_arch = device_, .min_cc = cc_,                             \
	  .simt = true, .warp_size = 32, .default_threads = 128,             \
	  .max_threads = 1024, .smem_default = 48 * 1024,                    \
	  .smem_limit = optin, .mma = &mma_, .ldmatrix = true,              \
	  .cp_async = true, .mbarrier = true, .tma = hopper,                 \
	  .wgmma = wgmma_ }

/* AMD CDNA: wave64, 64 KiB of LDS per workgroup (no opt-in beyond it),
 * MFMA; copies go through registers in order (no asynchronous copies the
 * backend uses). */
#define HIP(arch_, device_, mfma)                                            \
	{ .kind = TC_TARGET_HIP, .name = "hip", .arch = arch_,               \
	  .device_arch = device_,                                            \
	  .simt = true, .warp_size = 64, .default_threads = 128,             \
	  .max_threads = 1024, .smem_default = 64 * 1024,                    \
	  .smem_limit = 64 * 1024, .mma = &mfma }

const TcTarget tc_targets[] = {
	/* Sapphire Rapids and later (the alias sapphirerapids): AMX tiles
	 * for bf16 and int8 gemms, AVX-512 with VNNI and BF16 for the rest;
	 * 48 KiB L1d, 2 MiB L2.  AMX is checked by the runtime (CPUID and
	 * the kernel's permission), not by __builtin_cpu_supports. */
	CPU("amx", 16, 16, 14, 32, KIB(48), KIB(2048), true, true,
	    "AVX-512 F, BW, VL, VNNI and BF16, FMA, and AMX-TILE, AMX-BF16 "
	    "and AMX-INT8", "avx512f", "avx512bw", "avx512vl", "fma",
	    "avx512vnni", "avx512bf16", NULL),
	/* Cascade Lake, Ice Lake, Zen 4: int8 gemms on vpdpbusd. */
	CPU("avx512vnni", 16, 16, 14, 32, KIB(32), KIB(1024), true, false,
	    "AVX-512 F, BW, VL and VNNI, and FMA", "avx512f", "avx512bw",
	    "avx512vl", "fma", "avx512vnni", NULL),
	/* Skylake-X and later, Zen 4: 32 KiB L1d, 1 MiB L2 assumed. */
	CPU("avx512", 16, 16, 14, 32, KIB(32), KIB(1024), false, false,
	    "AVX-512 F, BW and VL, and FMA", "avx512f", "avx512bw",
	    "avx512vl", "fma", NULL),
	/* Haswell and later, Zen: 32 KiB L1d, 256 KiB L2 assumed. */
	CPU("avx2", 8, 8, 6, 16, KIB(32), KIB(256), false, false,
	    "AVX2, FMA and F16C", "avx2", "fma", "f16c", NULL),
	CPU("generic", 1, 0, 4, 16, KIB(32), KIB(256), false, false, NULL,
	    NULL),
	/* sm_80's code runs on every later device; sm_90a's on sm_90a. */
	CUDA("sm_80", NULL, 80, 163 * 1024, false, mma_m16n8_sm80, NULL),
	CUDA("sm_90a", "sm_90a", 0, 227 * 1024, true, mma_m16n8_sm90,
	     &wgmma_sm90a),
	/* gfx942 serves the whole CDNA3 family (gfx940, gfx941, gfx942). */
	HIP("gfx90a", "gfx90a", mfma_cdna2),
	HIP("gfx942", "gfx94", mfma_cdna3),
};

const int tc_ntargets = (int)(sizeof tc_targets / sizeof tc_targets[0]);

/* Names --arch accepts for an entry of another name. */
static const struct {
	const char *alias, *arch;
} cpu_aliases[] = {
	{ "sapphirerapids", "amx" },
	{ "emeraldrapids", "amx" },
};

/* Whether the CPU running tilec has AMX-TILE, -BF16 and -INT8 (CPUID leaf
 * 7: EDX bits 24, 22, 25), which __builtin_cpu_supports cannot ask
 * everywhere.  Whether Linux lets a process use the tiles is the
 * runtime's question, at load time. */
static bool
host_has_amx(void)
{
#if defined(__GNUC__) && defined(__x86_64__)
	unsigned int a, b, c, d;
	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d)
			 : "a"(0), "c"(0));
	if (a < 7)
		return false;
	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d)
			 : "a"(7), "c"(0));
	return (d >> 24 & 1) && (d >> 22 & 1) && (d >> 25 & 1);
#else
	return false;
#endif
}

/* The richest CPU arch of the table the machine running tilec supports:
 * the features of the table's CPU entries, spelled again because
 * __builtin_cpu_supports takes only string literals. */
static const char *
host_cpu_arch(void)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f") &&
	    __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("fma")) {
		bool vnni = __builtin_cpu_supports("avx512vnni");
		if (vnni && __builtin_cpu_supports("avx512bf16") && host_has_amx())
			return "amx";
		return vnni ? "avx512vnni" : "avx512";
	}
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		return "avx2";
#endif
	return "generic";
}

/* With --arch native (and without --arch): the host's own cache sizes,
 * where the C library reports them, replace the arch's defaults. */
static void
host_caches(TcTarget *t)
{
#if defined(_SC_LEVEL1_DCACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE)
	long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE);
	long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
	if (l1 >= KIB(16) && l1 <= KIB(1024))
		t->l1d_bytes = l1;
	if (l2 >= KIB(128) && l2 <= KIB(64 * 1024))
		t->l2_bytes = l2;
#else
	(void)t;
#endif
}

bool
tc_target_init(TcTarget *t, const char *name, const char *arch)
{
	memset(t, 0, sizeof *t);
	const TcTarget *first = NULL;
	bool host = false;
	for (size_t i = 0; arch && i < sizeof cpu_aliases / sizeof *cpu_aliases;
	     i++)
		if (strcmp(name, "openmp") == 0 &&
		    strcmp(arch, cpu_aliases[i].alias) == 0)
			arch = cpu_aliases[i].arch;
	for (int i = 0; i < tc_ntargets; i++) {
		if (strcmp(tc_targets[i].name, name) != 0)
			continue;
		if (!first) {
			first = &tc_targets[i];
			if (first->kind == TC_TARGET_OPENMP &&
			    (!arch || strcmp(arch, "native") == 0)) {
				arch = host_cpu_arch();
				host = true;
			}
		}
		if (!arch || strcmp(tc_targets[i].arch, arch) == 0) {
			*t = tc_targets[i];
			if (host)
				host_caches(t);
			return true;
		}
	}
	return false;
}

void
tc_target_explain(TcBuf *out, const char *name, const char *arch)
{
	const char *names[64];
	int n = 0;
	for (int i = 0; i < tc_ntargets && n < 64; i++)
		if (strcmp(tc_targets[i].name, name) == 0)
			names[n++] = tc_targets[i].arch;
	int listed = n;
	if (n && strcmp(name, "openmp") == 0) {
		names[n++] = "native";
		for (size_t i = 0; i < sizeof cpu_aliases / sizeof *cpu_aliases;
		     i++)
			names[n++] = cpu_aliases[i].alias;
	}
	if (n) {
		const char *near = tc_nearest(arch ? arch : "", arch ? strlen(arch) : 0, names, n);
		tc_buf_printf(out, "unknown architecture '%s' for target %s",
			      arch ? arch : "", name);
		if (near)
			tc_buf_printf(out, "; did you mean '%s'?", near);
		tc_buf_printf(out, " (%s architectures:", name);
		for (int j = 0; j < listed; j++)
			tc_buf_printf(out, "%s %s", j ? "," : "", names[j]);
		if (n > listed)
			tc_buf_puts(out, ", native; sapphirerapids and "
				    "emeraldrapids mean amx");
		tc_buf_puts(out, ")");
		return;
	}
	for (int i = 0; i < tc_ntargets && n < 64; i++)
		if (i == 0 || strcmp(tc_targets[i].name, tc_targets[i - 1].name) != 0)
			names[n++] = tc_targets[i].name;
	const char *near = tc_nearest(name, strlen(name), names, n);
	tc_buf_printf(out, "unknown target '%s'", name);
	if (near)
		tc_buf_printf(out, "; did you mean '%s'?", near);
	tc_buf_puts(out, " (targets:");
	for (int j = 0; j < n; j++)
		tc_buf_printf(out, "%s %s", j ? "," : "", names[j]);
	tc_buf_puts(out, ")");
}

const char *
tc_target_device_arch(const char *name, const char *device, int cc)
{
	const TcTarget *best = NULL;
	for (int i = 0; i < tc_ntargets; i++) {
		const TcTarget *t = &tc_targets[i];
		if (strcmp(t->name, name) != 0)
			continue;
		if (device && t->device_arch &&
		    strncmp(device, t->device_arch, strlen(t->device_arch)) == 0)
			return t->arch;
		if (t->min_cc && cc >= t->min_cc && (!best || t->min_cc > best->min_cc))
			best = t;
	}
	return best ? best->arch : NULL;
}

void
tc_target_devices(TcBuf *out, const char *name)
{
	int n = 0;
	for (int i = 0; i < tc_ntargets; i++) {
		const TcTarget *t = &tc_targets[i];
		if (strcmp(t->name, name) != 0 || (!t->device_arch && !t->min_cc))
			continue;
		tc_buf_printf(out, "%s%s%s", n++ ? ", " : "", t->arch,
			      t->min_cc ? " and later" : "");
	}
}

/* A matrix instruction and its forms, under `what` ("matrix"). */
static void
put_matrix(TcBuf *out, const char *what, const TcMatrixInsn *m)
{
	tc_buf_printf(out, "  %-14s %s (m%d n%d", what, m->name, m->m, m->n);
	if (m->max_n > m->n)
		tc_buf_printf(out, " .. %d", m->max_n);
	tc_buf_puts(out, ")\n");
	for (int f = 0; f < m->nforms; f++) {
		const TcMatrixForm *mf = &m->forms[f];
		const char *sep = "                 ";
		for (int d = 1; d < TC_DT_COUNT; d++)
			if (mf->operands & (1u << d)) {
				tc_buf_printf(out, "%s%s", sep,
					      tc_dtype_name((TcDtype)d));
				sep = ", ";
			}
		tc_buf_printf(out, " -> %s, k%d: %s\n",
			      tc_dtype_name(mf->accum), mf->k, mf->name);
		if (mf->promote)
			tc_buf_puts(out, "                   sums below f32 "
				    "precision: promoted per gemm\n");
	}
}

static const char *
yes_no(bool b)
{
	return b ? "yes" : "no";
}

void
tc_target_describe(TcBuf *out, const TcTarget *t)
{
	tc_buf_printf(out, "%s/%s\n", t->name, t->arch);
	if (t->simt)
		tc_buf_printf(out, "  threads        %d per block by default, at "
			      "most %d, in warps of %d lanes\n", t->default_threads,
			      t->max_threads, t->warp_size);
	else
		tc_buf_printf(out, "  threads        one OS thread per block; "
			      "tile_threads (at most %d) become\n"
			      "                 loop iterations and vector lanes\n",
			      t->max_threads);
	TcArena *a = tc_arena_new();
	tc_buf_puts(out, "  shared memory  ");
	if (!t->simt) {
		tc_buf_printf(out, "%s of buffers per block (the thread's frame)\n",
			      tc_size_text(a, t->smem_limit));
	} else {
		tc_buf_printf(out, "%s per block", tc_size_text(a, t->smem_default));
		if (t->smem_limit > t->smem_default)
			tc_buf_printf(out, ", %s opted in", tc_size_text(a, t->smem_limit));
		tc_buf_puts(out, "\n");
	}
	if (t->mma) {
		put_matrix(out, "matrix", t->mma);
		if (t->wgmma)
			put_matrix(out, "warpgroup", t->wgmma);
	} else if (t->simt) {
		tc_buf_puts(out, "  matrix         none: gemm is plain loops\n");
	}
	if (t->simt) {
		tc_buf_printf(out, "  ldmatrix       %s\n", yes_no(t->ldmatrix));
		tc_buf_printf(out, "  cp.async       %s\n", yes_no(t->cp_async));
		tc_buf_printf(out, "  mbarrier       %s\n", yes_no(t->mbarrier));
		tc_buf_printf(out, "  tma            %s\n", t->tma ?
			      "yes (with --tma)" : "no");
		if (!t->wgmma)
			tc_buf_puts(out, "  wgmma          no\n");
	} else {
		if (t->vector_lanes > 1)
			tc_buf_printf(out, "  vector lanes   %d floats",
				      t->vector_lanes);
		else
			tc_buf_puts(out, "  vector lanes   none assumed (portable "
				    "C; the C compiler picks)");
		if (t->explicit_lanes)
			tc_buf_printf(out, "; explicit vectors of %d "
				      "(TILEC_VL)", t->explicit_lanes);
		tc_buf_puts(out, "\n");
		tc_buf_printf(out, "  gemm           f32 micro-kernel %d x %d; "
			      "caches assumed: L1d %s, L2 %s\n", t->gemm_mr,
			      t->gemm_nr, tc_size_text(a, t->l1d_bytes),
			      tc_size_text(a, t->l2_bytes));
		if (t->amx)
			tc_buf_puts(out, "  matrix         AMX tiles: bf16 -> f32 "
				    "tdpbf16ps, i8 -> i32 tdpbssd\n");
		else if (t->vnni)
			tc_buf_puts(out, "  matrix         none; i8 -> i32 on "
				    "vpdpbusd (AVX512-VNNI)\n");
		else if (t->vector_lanes >= 8)
			tc_buf_puts(out, "  matrix         none; i8 -> i32 on "
				    "vpmaddwd (AVX2), as i16 pairs\n");
	}
	tc_arena_free(a);
}

void
tc_target_cpu_needs(TcBuf *out, const TcTarget *t)
{
	for (int i = 0; t->cpu_features[i]; i++)
		tc_buf_printf(out, "%s%s", i ? " " : "", t->cpu_features[i]);
	if (t->amx)
		tc_buf_printf(out, "%samx-tile amx-bf16 amx-int8",
			      t->cpu_features[0] ? " " : "");
}
