/*
 * cuda.c - the CUDA C++ backend: the CUDA dialect of the GPU emitter.
 *
 * Everything is printed by emitters/gpu.c; this table holds what CUDA
 * spells or does differently (docs/backend-cuda.md): NVIDIA's bf16 type,
 * the helpers of templates/cuda/tilec_cuda.cuh, mma.sync m16n8k16
 * accumulators (tilec::Mma), atomicAdd, and tile_pipelined loops whose
 * leading copies are issued STAGES - 1 iterations ahead with cp.async.
 */
#include "gpu.h"

static const TcGpuDialect cuda_dialect = {
	.name = "cuda",
	.bf16_type = "__nv_bfloat16",
	.helpers = "cuda/tilec_cuda.cuh",
	.helpers_include = "tilec/cuda/tilec_cuda.cuh",
	.smem_align = "__align__(128)",
	.warp = "warp",
	.count_warps = false,
	.mma_dist = "Mma",
	.mma_ss = "mma_ss",
	.mma_rs = "mma_rs",
	.atomic_add = "atomicAdd",
	.atomic_narrow_value = true,
	.atomic_checked = false,
	/* ptxas of CUDA 13.0 for sm_90 fuses max(max(-x, a), b) (and min)
	 * into one three-input instruction and loses the negation; it
	 * leaves tilec::neg's negation alone (tests/gen/FINDINGS.md, bug
	 * 19; tests/gpu_regress/minmax_neg.c). */
	.int_neg = "tilec::neg",
	/* NVRTC 13.0 merges one thread's stores of adjacent bytes in shared
	 * memory into 16- and 32-bit stores at addresses they are not
	 * aligned to; it leaves tilec::put's volatile byte stores alone
	 * (tests/gen/FINDINGS.md, bug 20; tests/gpu_regress/byte_stores.c). */
	.byte_store = "tilec::put",
};

static bool
cuda_emit(const TcProgram *p, const TcKernel *k, const TcTarget *t,
	  const TcOptions *opt, TcBuf *out, TcDiags *d)
{
	return tc_gpu_emit(&cuda_dialect, p, k, t, opt, out, d);
}

const TcBackend tc_backend_cuda = {
	.name = "cuda",
	.file_ext = ".cu",
	.emit = cuda_emit,
};
