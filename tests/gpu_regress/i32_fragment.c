/* An i32 fragment in registers holds ints (it was once declared float, so
 * x + 2^24 rounded odd values to even and x & 3 did not compile).
 * Y[j] = (X[j] + 2^24) | (X[j] & 3).
 * shape: N=300
 * expect-cuda: ^	int x\[x_cols::count\];
 * expect-hip: ^	int x\[x_cols::count\];
 */
#include <tilec.h>

TILE_KERNEL void
i32_fragment(int N, const i32 X[N], i32 Y[N])
{
	int b = tile_grid_x(ceildiv(N, 128));
	tile_fragment i32 x[128];
	tile_copy(x, &X[b * 128]);
	tile_parallel(j, 128)
		x[j] = (x[j] + 16777216) | (x[j] & 3);
	tile_copy(&Y[b * 128], x);
}
