/*
 * test_nvrtc.c - the runtime's cuda backend (jit_nvrtc.c, cuda_driver.c)
 * on any machine: every sample's CUDA output compiled through NVRTC for
 * sm_80 and sm_90a by a compile-only context, each cubin an ELF file
 * naming every kernel; and the tests of rtc_common.c (the cache keyed by
 * arch, compile errors carrying NVRTC's log, what a compile-only context
 * refuses, and a context on device 0, which on a machine without a GPU
 * must fail with a sentence naming the missing driver or device, and on a
 * machine with one must run a kernel).
 *
 * Its own program, not a suite of `unit`: without NVRTC it exits 77, which
 * meson reports as skipped.  rtc_common.h says where samples and caches
 * come from.
 */
#include "rtc_common.h"

static void nvrtc_tests(TCase *tc);

static const RtcTarget nvrtc = {
	.name = "nvrtc", .backend = TILEC_BACKEND_CUDA, .lang = "cuda",
	.archs = { "sm_80", "sm_90a" }, .known_archs = 2,
	/* The samples that must translate for cuda; others may be refused. */
	.core = (const char *const[]){ "gemm.c", "flash_attention.c",
				       "softmax.c", NULL },
	.arch = "sm_90a", .other_arch = "sm_80", .arch_prefix = "sm_",
	.not_archs = (const char *const[]){ "compute_90", NULL },
	.not_arch_message = "not a CUDA architecture",
	.compiler = "NVRTC", .compiler_env = "TILEC_NVRTC",
	.aot_compiler = "nvcc",
	.source_ext = ".cu", .binary_ext = ".cubin", .binary = "cubin",
	.no_device = (const char *const[]){ "libcuda.so.1", "cuInit",
					    "no CUDA device", NULL },
	.add_tests = nvrtc_tests,
};

START_TEST(every_sample_compiles_for_sm80_and_sm90a)
{
	RtcSession s;
	rtc_session_open(&s, &nvrtc);
	rtc_compile_samples(&s, NULL, NULL);
	rtc_session_close(&s);
}
END_TEST

/* The GPU regression programs too: NVRTC has no host builtins
 * (__builtin_popcount once reached a helper; nvcc, which the other
 * regression tests use, has them). */
START_TEST(every_regression_program_compiles)
{
	RtcSession s;
	rtc_session_open(&s, &nvrtc);
	rtc_compile_dir(&s, "tests/gpu_regress", NULL, NULL);
	rtc_session_close(&s);
}
END_TEST

static void
nvrtc_tests(TCase *tc)
{
	tcase_add_test(tc, every_sample_compiles_for_sm80_and_sm90a);
	tcase_add_test(tc, every_regression_program_compiles);
}

int
main(void)
{
	return rtc_main(&nvrtc);
}
