/*
 * gemm_fp8.c - an fp8 (e4m3) GEMM with per-row and per-column scales, as
 * fp8 linear layers quantize (torch._scaled_mm's row-wise form):
 *
 *     C[m][n] = (sum_k A[m][k] * W[n][k]) * SA[m] * SW[n]
 *
 * A holds fp8e4m3 activations with one f32 scale per row (per token), W
 * fp8e4m3 weights stored as PyTorch keeps a linear layer's, [N][K], with
 * one scale per output channel; per-tensor scaling is the case of equal
 * scales.  C is bf16.  Products of e4m3 values are exact in f32; the
 * accumulator is f32, and the scales are applied once, in f32, in the
 * epilogue.
 *
 * On sm_90a the gemm is wgmma's m64nNk32 e4m3 with each tile_gemm's sum
 * promoted into the f32 accumulator (docs/backend-cuda.md, "wgmma"), its
 * operands by TMA; the launch manifest's "promoted_sums" says how far
 * that may be from exact sums.  The defaults fit every backend (HIP has
 * no fp8 matrix instruction and keeps the accumulator in its 64 KiB of
 * LDS); on the H200, 128 x 128 x 128 tiles over 256 threads with 4 stages
 * run fastest (docs/perf-gpu.md).
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 64, 64, 128);
TILE_PARAM(BLOCK_N, 64, 64, 128, 256);
TILE_PARAM(BLOCK_K, 64, 64, 128);
TILE_PARAM(STAGES, 3, 2, 3, 4, 5);
TILE_PARAM(THREADS, 128, 128, 256);

TILE_KERNEL void
gemm_fp8(int M, int N, int K, const fp8e4m3 A[M][K], const fp8e4m3 W[N][K],
	 const f32 SA[M], const f32 SW[N], bf16 C[M][N])
{
	tile_threads(THREADS);
	int bx = tile_grid_x(ceildiv(N, BLOCK_N));
	int by = tile_grid_y(ceildiv(M, BLOCK_M));
	tile_rasterize(8);

	tile_shared fp8e4m3 As[BLOCK_M][BLOCK_K];
	tile_shared fp8e4m3 Ws[BLOCK_N][BLOCK_K];
	tile_fragment f32 acc[BLOCK_M][BLOCK_N];
	tile_fragment f32 sa[BLOCK_M], sw[BLOCK_N];

	tile_clear(acc);
	tile_pipelined(k, ceildiv(K, BLOCK_K), STAGES) {
		tile_copy(As, &A[by * BLOCK_M][k * BLOCK_K]);
		tile_copy(Ws, &W[bx * BLOCK_N][k * BLOCK_K]);
		tile_gemm(acc, As, Ws, TILE_TRANS_B);
	}
	tile_copy(sa, &SA[by * BLOCK_M]);
	tile_copy(sw, &SW[bx * BLOCK_N]);
	tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
		acc[i][j] = acc[i][j] * sa[i] * sw[j];
	tile_copy(&C[by * BLOCK_M][bx * BLOCK_N], acc);
}
