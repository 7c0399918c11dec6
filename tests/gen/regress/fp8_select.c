/*
 * fp8_select.c - reduced from tests/gen/tilegen.py seed 102 kernel k1
 * (feature +narrow_all; the oracle backend: the reference and every
 * backend agreed, wrongly): a ?: whose arms are fp8 values was typed as
 * C types it, int, since C sees fp8 as bytes and promotes them to int, so
 * (b1 > j) ? bias3[j] : bias3[j] truncated -0.9375 to 0 where the tile
 * language promotes fp8 to f32.  Fixed in src/front/parse.c (a ?: takes
 * its arms' type when C's is an integer and an arm is a float), bug 28.
 *   tilec run fp8_select.c --shape M=64,N=248 --tol 0.01 --source fp8_select.oracle.c
 */
#include <tilec.h>

TILE_KERNEL void
k(int M, int N, const fp8e4m3 Bias2[N], f16 Y4[M][N])
{
	tile_threads(128);
	int b0 = tile_grid_x(ceildiv(M, 64));
	int b1 = tile_grid_y(ceildiv(N, 128));

	tile_fragment f32 acc0[64][128];
	tile_fragment fp8e4m3 bias3[128];

	tile_copy(bias3, &Bias2[b1 * 128]);
	tile_parallel(i, 64) {
		tile_parallel(j, 128) {
			acc0[i][j] = 1.5f / (fabsf(((b1 > j) ? bias3[j] : bias3[j])) + 1.0f);
		}
	}
	tile_copy(&Y4[b0 * 64][b1 * 128], acc0);
}
