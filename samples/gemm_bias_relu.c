/*
 * gemm_bias_relu.c - C = max(A * B + bias, 0): a GEMM with a fused epilogue.
 *
 * fp16 operands, fp32 accumulation, fp16 output.  The k loop is gemm.c's;
 * before the result leaves the block, each row of the accumulator gets the
 * bias of its column added and is clamped at zero, so the epilogue costs no
 * extra pass over C in memory.
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 128, 64, 128, 256);
TILE_PARAM(BLOCK_N, 128, 64, 128, 256);
TILE_PARAM(BLOCK_K, 32, 32, 64);
TILE_PARAM(STAGES, 3, 2, 3, 4);

TILE_KERNEL void
gemm_bias_relu(int M, int N, int K, const f16 A[M][K], const f16 B[K][N],
	       const f16 bias[N], f16 C[M][N])
{
	tile_threads(128);
	int bx = tile_grid_x(ceildiv(N, BLOCK_N));
	int by = tile_grid_y(ceildiv(M, BLOCK_M));

	tile_shared f16 As[BLOCK_M][BLOCK_K];
	tile_shared f16 Bs[BLOCK_K][BLOCK_N];
	tile_fragment f32 acc[BLOCK_M][BLOCK_N];
	tile_fragment f32 b[BLOCK_N];

	tile_clear(acc);
	tile_pipelined(k, ceildiv(K, BLOCK_K), STAGES) {
		tile_copy(As, &A[by * BLOCK_M][k * BLOCK_K]);
		tile_copy(Bs, &B[k * BLOCK_K][bx * BLOCK_N]);
		tile_gemm(acc, As, Bs);
	}
	tile_copy(b, &bias[bx * BLOCK_N]);
	tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
		acc[i][j] = fmaxf(acc[i][j] + b[j], 0.0f);
	tile_copy(&C[by * BLOCK_M][bx * BLOCK_N], acc);
}
