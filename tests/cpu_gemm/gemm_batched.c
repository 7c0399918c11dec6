/*
 * gemm_batched.c - C[b] = A[b] * B[b] for a batch of fp32 matrices, one
 * grid column per matrix of the batch: every copy of the k loop depends
 * on grid x, so a strip of blocks (--cpu-strip) has nothing to share and
 * the translator says so.
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 64, 32, 64);
TILE_PARAM(BLOCK_N, 64, 32, 64);
TILE_PARAM(BLOCK_K, 32, 16, 32);

TILE_KERNEL void
gemm_batched(int BATCH, int M, int N, int K, const f32 A[BATCH][M][K],
	     const f32 B[BATCH][K][N], f32 C[BATCH][M][N])
{
	int b = tile_grid_x(BATCH);
	int bx = tile_grid_y(ceildiv(N, BLOCK_N));
	int by = tile_grid_z(ceildiv(M, BLOCK_M));

	tile_shared f32 As[BLOCK_M][BLOCK_K];
	tile_shared f32 Bs[BLOCK_K][BLOCK_N];
	tile_fragment f32 acc[BLOCK_M][BLOCK_N];

	tile_clear(acc);
	for (int k = 0; k < ceildiv(K, BLOCK_K); k++) {
		tile_copy(As, &A[b][by * BLOCK_M][k * BLOCK_K]);
		tile_copy(Bs, &B[b][k * BLOCK_K][bx * BLOCK_N]);
		tile_gemm(acc, As, Bs);
	}
	tile_copy(&C[b][by * BLOCK_M][bx * BLOCK_N], acc);
}
