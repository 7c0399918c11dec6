/*
 * gemm_w8a8.c - an int8 GEMM with per-row and per-column scales (W8A8
 * quantized linear layers, SmoothQuant-style):
 *
 *     C[m][n] = (sum_k A[m][k] * W[n][k]) * SA[m] * SW[n]
 *
 * A holds int8 activations with one fp32 scale per row (per token), W
 * int8 weights stored as PyTorch keeps a linear layer's, [N][K], with one
 * scale per output channel; C is fp16.  The products accumulate exactly
 * in int32 (tile_gemm of i8 operands into an i32 accumulator), and the
 * scales are applied once, in fp32, in the epilogue.  K up to about 2^17
 * cannot overflow the accumulator (|a w| <= 2^14).
 *
 * The default tile is 64 x 128: until int8 gemms run on tensor cores
 * (mma.sync s8, MFMA i8) the i32 accumulator is kept in shared memory, and
 * a 128 x 128 one would not fit HIP's 64 KiB of LDS beside the operands.
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 64, 64, 128, 256);
TILE_PARAM(BLOCK_N, 128, 64, 128, 256);
TILE_PARAM(BLOCK_K, 64, 32, 64, 128);
TILE_PARAM(STAGES, 3, 2, 3, 4);
TILE_PARAM(THREADS, 128, 128, 256);

TILE_KERNEL void
gemm_w8a8(int M, int N, int K, const i8 A[M][K], const i8 W[N][K],
	  const f32 SA[M], const f32 SW[N], f16 C[M][N])
{
	tile_threads(THREADS);
	int bx = tile_grid_x(ceildiv(N, BLOCK_N));
	int by = tile_grid_y(ceildiv(M, BLOCK_M));
	tile_rasterize(8);

	tile_shared i8 As[BLOCK_M][BLOCK_K];
	tile_shared i8 Ws[BLOCK_N][BLOCK_K];
	tile_fragment i32 acc[BLOCK_M][BLOCK_N];
	tile_fragment f32 c[BLOCK_M][BLOCK_N];
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
		c[i][j] = (float)acc[i][j] * sa[i] * sw[j];
	tile_copy(&C[by * BLOCK_M][bx * BLOCK_N], c);
}
