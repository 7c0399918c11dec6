/* Reductions pass over NaNs, as fmaxf and fminf do: a row with NaNs
 * reduces its numbers, and a row of NaNs alone gives the reduction's
 * starting value (max -inf, min +inf, absmax 0, on every backend; the
 * GPUs' absmax once started at -inf).  Rows whose index is a multiple of
 * 3 are all NaN, the others NaN in every fourth column.
 * shape: M=5
 * shape: M=16
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 16);
TILE_KERNEL void
reduce_nan(int M, const f32 X[M][32], f32 MX[M], f32 MN[M], f32 AM[M],
	   f32 S[1])
{
	tile_threads(64);
	int by = tile_grid_y(ceildiv(M, BLOCK_M));
	tile_fragment f32 x[BLOCK_M][32];
	tile_fragment f32 mx[BLOCK_M], mn[BLOCK_M], am[BLOCK_M];
	tile_copy(x, &X[by * BLOCK_M][0]);
	tile_parallel(i, BLOCK_M) tile_parallel(j, 32) {
		if ((by * BLOCK_M + i) % 3 == 0 || j % 4 == 1)
			x[i][j] = sqrtf(-1.0f - fabsf(x[i][j]));
	}
	tile_reduce_max(mx, x, 1);
	tile_reduce_min(mn, x, 1);
	tile_reduce_absmax(am, x, 1);
	tile_copy(&MX[by * BLOCK_M], mx);
	tile_copy(&MN[by * BLOCK_M], mn);
	tile_copy(&AM[by * BLOCK_M], am);
	float d = tile_absmax(x);
	if (by == 0)
		S[0] = d;
}
