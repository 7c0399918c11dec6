/*
 * hip.c - the HIP C++ backend (AMD CDNA GPUs: gfx90a, gfx942; wave64): the
 * HIP dialect of the GPU emitter.
 *
 * Everything is printed by emitters/gpu.c; this table holds what HIP
 * spells or does differently (docs/backend-hip.md): the helpers' own bf16
 * type (HIP's bfloat16 types differ between releases), the helpers of
 * templates/hip/tilec_hip.hpp, 64-lane waves, transposed
 * v_mfma_f32_16x16x16 accumulators (tilec::Mfma), tilec::atomic_add
 * (16-bit types by compare-and-swap; other dtypes are located errors).
 * What the hardware offers (64-lane waves, the v_mfma_f32_16x16x16 tile,
 * no asynchronous copies, so tile_pipelined loops run their copies in
 * order) is the target description in src/target/target.c.
 */
#include "gpu.h"

static const TcGpuDialect hip_dialect = {
	.name = "hip",
	.bf16_type = "tilec::bf16",
	.helpers = "hip/tilec_hip.hpp",
	.helpers_include = "tilec/hip/tilec_hip.hpp",
	.smem_align = "__attribute__((aligned(128)))",
	.warp = "wave",
	.count_warps = true,
	.mma_dist = "Mfma",
	.mma_ss = "mfma_ss",
	.mma_rs = "mfma_rs",
	.atomic_add = "tilec::atomic_add",
	.atomic_narrow_value = false,
	.atomic_checked = true,
};

static bool
hip_emit(const TcProgram *p, const TcKernel *k, const TcTarget *t,
	 const TcOptions *opt, TcBuf *out, TcDiags *d)
{
	return tc_gpu_emit(&hip_dialect, p, k, t, opt, out, d);
}

const TcBackend tc_backend_hip = {
	.name = "hip",
	.file_ext = ".hip",
	.emit = hip_emit,
};
