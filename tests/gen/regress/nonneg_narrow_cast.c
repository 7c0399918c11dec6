/*
 * nonneg_narrow_cast.c - found reading the bounds analysis while fixing
 * 8-bit casts on the GPUs: both backends took a cast of a non-negative
 * value as non-negative, so a tile origin (i8)(b0 * 100 + 100), which is
 * -56 for b0 = 1, had its `index >= 0` test dropped and the copy read
 * the 56 rows before the tensor instead of zeros.  Fixed at the one rule
 * (tc_dtype_cast_keeps_nonneg, src/ir/ir.c) that both emitters' range
 * checks now use.
 *   tilec run nonneg_narrow_cast.c --shape M=300,N=40
 */
#include <tilec.h>
TILE_KERNEL void
k(int M, int N, const f32 X[M][N], f32 Y[3][64][N])
{
	tile_threads(128);
	int b0 = tile_grid_x(3);
	int b1 = tile_grid_y(ceildiv(N, 32));
	tile_fragment f32 x[64][32];
	tile_copy(x, &X[(i8)(b0 * 100 + 100)][b1 * 32]);
	tile_copy(&Y[b0][0][b1 * 32], x);
}
