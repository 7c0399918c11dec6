/*
 * test_hiprtc.c - the runtime's hip backend (jit_hiprtc.c, hip_driver.c)
 * on any machine: every sample's HIP output (and causal attention)
 * compiled through hiprtc for gfx90a (and gfx942 where hiprtc's comgr knows
 * it) by a compile-only context, each code object an ELF file naming every
 * kernel; the gfx90a code objects disassembled, which must show no
 * scratch (no private segment, no scratch_ or buffer_ instruction) and, in
 * the kernels whose gemms take the MFMA path, v_mfma instructions, and
 * those of tests/hip_emu/matrix_paths.c the f16, bf16 and f32 forms; an ISA
 * comgr does not know refused with the list of those it knows; and the
 * tests of rtc_common.c (the cache keyed by arch, compile errors carrying
 * hiprtc's log, what a compile-only context refuses, and a context on
 * device 0, which on a machine without an AMD GPU must fail with a
 * sentence saying so, and on a machine with one must run a kernel).
 *
 * Its own program, not a suite of `unit`: without hiprtc it exits 77,
 * which meson reports as skipped.  rtc_common.h says where samples and
 * caches come from.  The disassembler is $TILEC_LLVM_OBJDUMP and the note
 * reader $TILEC_LLVM_READELF (meson finds Debian's llvm-15 ones, which
 * hipcc brings).
 */
#include "rtc_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void hiprtc_tests(TCase *tc);

static const RtcTarget hiprtc = {
	.name = "hiprtc", .backend = TILEC_BACKEND_HIP, .lang = "hip",
	.archs = { "gfx90a", "gfx942" }, .known_archs = 1,
	/* Every sample must translate for hip; causal attention too. */
	.variants = (const RtcCase[]){ { "flash_attention.c", "CAUSAL", 1 },
				       { NULL, NULL, 0 } },
	/* A target ID is an arch of its own. */
	.arch = "gfx90a", .other_arch = "gfx90a:xnack-", .arch_prefix = "gfx",
	.not_archs = (const char *const[]){ "sm_90a", "gfx", "gfx90a:xnack",
					    "gfx90a;rm", "native", NULL },
	.not_arch_message = "not an AMD GPU architecture",
	.compiler = "hiprtc", .compiler_env = "TILEC_HIPRTC",
	.aot_compiler = "hipcc",
	.source_ext = ".hip", .binary_ext = ".hsaco", .binary = "code object",
	.no_device = (const char *const[]){ "no AMD GPU", "no HIP runtime",
					    NULL },
	.no_device_hint = "TILEC_DEVICE_NONE",
	.add_tests = hiprtc_tests,
};

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

/* --- Samples ---------------------------------------------------------------- */

/* The gfx90a code object of sample case c: kernel metadata, no scratch,
 * and v_mfma where its gemms take the MFMA path (gemm*.c but the int8
 * gemm_w8a8.c, which has no MFMA path yet, and gemm_fp8.c, since gfx90a
 * has no fp8 MFMA: its operands widen to f32 first; moe_gemm.c, conv2d.c
 * and the attention samples), those counted in *(int *)arg. */
static void
check_isa(void *arg, const RtcCase *c, const char *arch,
	  const tilec_module_info *info)
{
	if (strcmp(arch, "gfx90a") != 0)
		return;
	Isa isa;
	inspect(info->path, arch, &isa);
	printf("  %4d v_mfma, %d VGPRs (%d AGPRs), %d spilled to AGPRs, %d "
	       "bytes of scratch", isa.mfma, isa.vgprs, isa.agprs,
	       isa.vgpr_spills, isa.private_bytes);
	ck_assert_msg(isa.kernels > 0, "%s: no kernel metadata", c->file);
	ck_assert_msg(isa.private_bytes == 0 && isa.scratch == 0,
		      "%s: the code object uses scratch memory (%d "
		      "bytes, %d instructions)", c->file,
		      isa.private_bytes, isa.scratch);
	bool mfma = (strncmp(c->file, "gemm", 4) == 0 &&
		     strcmp(c->file, "gemm_w8a8.c") != 0) ||
		    strcmp(c->file, "flash_attention.c") == 0 ||
		    strcmp(c->file, "moe_gemm.c") == 0 ||
		    strcmp(c->file, "conv2d.c") == 0 ||
		    strcmp(c->file, "attention_bwd.c") == 0 ||
		    strcmp(c->file, "gqa_attention.c") == 0;
	if (mfma) {
		ck_assert_msg(isa.mfma > 0, "%s: no v_mfma in the code object",
			      c->file);
		(*(int *)arg)++;
	}
}

START_TEST(every_sample_compiles_for_gfx90a)
{
	RtcSession s;
	rtc_session_open(&s, &hiprtc);
	int mfma_cases = 0;
	rtc_compile_samples(&s, check_isa, &mfma_cases);
	ck_assert_int_ge(mfma_cases, 5);

	/* The paths the samples do not reach (tests/hip_emu/matrix_paths.c:
	 * bf16 with A transposed, f32 with B transposed, f16 into an atomic
	 * split-K, e5m2 read by column through the f16 instruction): each
	 * operand type's own instruction. */
	char tests_dir[4096];
	snprintf(tests_dir, sizeof tests_dir, "%s/tests/hip_emu", s.root);
	const RtcCase paths = { "matrix_paths.c", NULL, 0 };
	tilec_module_info info;
	ck_assert(rtc_compile(&s, tests_dir, &paths, "gfx90a", true, &info) ==
		  RTC_COMPILED);
	Isa isa;
	inspect(info.path, "gfx90a", &isa);
	printf("%-30s gfx90a %s  %d v_mfma: %d f16, %d bf16, %d f32; %d bytes "
	       "of scratch\n", paths.file, info.from_cache ? "cached" : "hiprtc",
	       isa.mfma, isa.f16, isa.bf16, isa.f32, isa.private_bytes);
	ck_assert_int_eq(isa.kernels, 4);
	ck_assert(isa.f16 > 0 && isa.bf16 > 0 && isa.f32 > 0);
	ck_assert(isa.private_bytes == 0 && isa.scratch == 0);
	rtc_session_close(&s);
}
END_TEST

/* An ISA hiprtc's comgr does not know is refused before hiprtc sees it
 * (some releases abort the process on one), naming those it knows. */
START_TEST(unknown_isas_are_refused_before_hiprtc)
{
	tilec_context *ctx = rtc_compile_only_context(&hiprtc);
	tilec_compile_options o;
	tilec_compile_options_init(&o);
	o.arch = "gfx9f0";
	ck_assert(!tilec_compile(ctx, rtc_add_src, strlen(rtc_add_src), &o));
	ck_assert_msg(strstr(tilec_error(ctx), "does not know gfx9f0") &&
			      strstr(tilec_error(ctx), "gfx90a"),
		      "%s", tilec_error(ctx));
	tilec_context_free(ctx);
	rtc_remove_private_cache();
}
END_TEST

static void
hiprtc_tests(TCase *tc)
{
	tcase_add_test(tc, unknown_isas_are_refused_before_hiprtc);
	tcase_add_test(tc, every_sample_compiles_for_gfx90a);
}

int
main(void)
{
	return rtc_main(&hiprtc);
}
