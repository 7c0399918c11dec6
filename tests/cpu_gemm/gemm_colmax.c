/*
 * gemm_colmax.c - C = A * B in fp32, and each column block's maximum of
 * C over its rows into P[by][N] (a 1-D buffer after the k loop).
 *
 * For the strip pass: the reduce's 1-D destination is kept once for each
 * block of a strip, and its per-block view is a plain pointer (a 2-D
 * buffer's view is a pointer to rows).
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 64, 64);
TILE_PARAM(BLOCK_N, 64, 64);
TILE_PARAM(BLOCK_K, 32, 32);

TILE_KERNEL void
gemm_colmax(int M, int N, int K, int MB, const f32 A[M][K],
	    const f32 B[K][N], f32 C[M][N], f32 P[MB][N])
{
	tile_threads(128);
	int bx = tile_grid_x(ceildiv(N, BLOCK_N));
	int by = tile_grid_y(ceildiv(M, BLOCK_M));

	tile_shared f32 As[BLOCK_M][BLOCK_K];
	tile_shared f32 Bs[BLOCK_K][BLOCK_N];
	tile_fragment f32 acc[BLOCK_M][BLOCK_N];
	tile_fragment f32 colmax[BLOCK_N];

	tile_clear(acc);
	for (int k = 0; k < ceildiv(K, BLOCK_K); k++) {
		tile_copy(As, &A[by * BLOCK_M][k * BLOCK_K]);
		tile_copy(Bs, &B[k * BLOCK_K][bx * BLOCK_N]);
		tile_gemm(acc, As, Bs);
	}
	tile_reduce_max(colmax, acc, 0);
	tile_copy(&C[by * BLOCK_M][bx * BLOCK_N], acc);
	tile_copy(&P[by][bx * BLOCK_N], colmax);
}
