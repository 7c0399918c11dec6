/*
 * gpu.h - the GPU emitter shared by the CUDA and HIP backends.
 *
 * emitters/gpu.c prints a scheduled kernel as CUDA-style C++ (one
 * `extern "C" __global__` kernel per tile kernel, calling the helpers of
 * the target's header).  CUDA and HIP print the same program in the same
 * shape; what differs between them is one const TcGpuDialect each, in
 * emitters/cuda.c and emitters/hip.c (docs/backend-hip.md lists the
 * differences).  What the hardware offers (warp width, the matrix
 * instruction, cp.async) is the target description, TcTarget (target.c),
 * which the passes read too.
 */
#ifndef TILEC_GPU_H
#define TILEC_GPU_H

#include "ir/tilec_int.h"

/* What one GPU target spells or does differently. */
typedef struct TcGpuDialect {
	const char *name;         /* the target's name in diagnostics: "cuda" */
	const char *bf16_type;    /* the C++ type storing a bf16 element */
	/* The helper header: its embedded name (inlined by --standalone)
	 * and the path the output includes otherwise. */
	const char *helpers;      /* e.g. "cuda/tilec_cuda.cuh" */
	const char *helpers_include; /* e.g. "tilec/cuda/tilec_cuda.cuh" */
	/* The alignment attribute of the dynamic shared-memory array's
	 * declaration: "__align__(128)". */
	const char *smem_align;
	/* A warp's name: the prefix of the warp-grid coordinates (warp_m,
	 * warp_n) and, when count_warps is set, the unit the header
	 * comment counts the block's threads in. */
	const char *warp;
	bool count_warps;         /* the header says how many warps a block has */
	/* The helpers of the target's matrix instruction (TcTarget.mma):
	 * the distribution of its accumulator layout, the gemm helpers with
	 * both operands in shared memory and with A in registers. */
	const char *mma_dist;     /* "Mma" */
	const char *mma_ss;       /* "mma_ss" */
	const char *mma_rs;       /* "mma_rs" */
	/* Atomic addition into a tensor element: the function, called as
	 * FN(&ELEMENT, VALUE). */
	const char *atomic_add;   /* "atomicAdd" */
	bool atomic_narrow_value; /* VALUE is converted to a 16-bit float
				   * element's storage type first */
	bool atomic_checked;      /* atomic additions into tensors of dtypes
				   * the helper cannot add are located errors */
	/* The negation of an integer value, called as
	 * FN(x), or NULL for C's -x: a workaround for a device compiler
	 * that mistranslates some uses of -x (cuda.c says which). */
	const char *int_neg;
	/* The store of a one-byte element into shared memory, called as
	 * FN(&ELEMENT, VALUE), or NULL for ELEMENT = VALUE: a workaround
	 * for a device compiler that merges such stores wrongly (cuda.c
	 * says which). */
	const char *byte_store;
} TcGpuDialect;

/* Print kernel k of p for the GPU target of dialect g (a TcBackend's emit,
 * with the dialect first). */
bool tc_gpu_emit(const TcGpuDialect *g, const TcProgram *p, const TcKernel *k,
		 const TcTarget *t, const TcOptions *opt, TcBuf *out, TcDiags *d);

#endif /* TILEC_GPU_H */
