/*
 * colsum.c - Y[j] = sum over i of X[i][j]: a reduction along columns.
 *
 * fp32.  Each block owns BLOCK_N columns and walks all M rows in chunks of
 * BLOCK_M, folding each chunk into its running column sums with
 * tile_reduce_sum along dim 0 (rows past M read as zero and add nothing).
 * The reduced dim is the tile's outer one, so the sums accumulate whole
 * rows at a time.
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 64, 16, 32, 64, 128);
TILE_PARAM(BLOCK_N, 256, 64, 128, 256, 512);

TILE_KERNEL void
colsum(int M, int N, const f32 X[M][N], f32 Y[N])
{
	tile_threads(128);
	int bn = tile_grid_x(ceildiv(N, BLOCK_N));

	tile_fragment f32 x[BLOCK_M][BLOCK_N];
	tile_fragment f32 sum[BLOCK_N];

	tile_clear(sum);
	for (int m0 = 0; m0 < M; m0 += BLOCK_M) {
		tile_copy(x, &X[m0][bn * BLOCK_N]);
		tile_reduce_sum(sum, x, 0, TILE_ACCUMULATE);
	}
	tile_copy(&Y[bn * BLOCK_N], sum);
}
