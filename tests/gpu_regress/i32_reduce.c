/* Integer column sums in i32 register fragments: the reduction combines
 * in int, exactly (the fragments were once float arrays, and sums past
 * 2^24 lost their low bits).  Y[j] = sum over i of X[i][j].
 * shape: M=130,N=300
 * shape: M=7,N=64
 * run: --range X=-1000000:1000000
 * expect-cuda: ^		int sum_part\[x_cols::count\];
 */
#include <tilec.h>

TILE_KERNEL void
i32_reduce(int M, int N, const i32 X[M][N], i32 Y[N])
{
	tile_threads(128);
	int bn = tile_grid_x(ceildiv(N, 128));
	tile_fragment i32 x[32][128];
	tile_fragment i32 sum[128];
	tile_clear(sum);
	for (int m0 = 0; m0 < M; m0 += 32) {
		tile_copy(x, &X[m0][bn * 128]);
		tile_reduce_sum(sum, x, 0, TILE_ACCUMULATE);
	}
	tile_copy(&Y[bn * 128], sum);
}
