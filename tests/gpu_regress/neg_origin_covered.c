/* A tile copy whose origin is negative along a dim the tile covers: the
 * elements before the tensor's start read as 0 (the GPU copies once
 * tested only index < extent and read X[0][N - 1] for X[1][-1]).
 * Y[i] = X[1][i - 1], Y[0] = 0.
 * shape: N=100
 * shape: N=64
 * shape: N=3
 * expect-cuda: min\(64, N - \(b \* 64 - 1\)\), 0, tilec::neg\(b \* 64 - 1\)\);
 */
#include <tilec.h>

TILE_KERNEL void
neg_origin_covered(int N, const f32 X[2][N], f32 Y[N])
{
	int b = tile_grid_x(ceildiv(N, 64));
	tile_fragment f32 x[64];
	tile_copy(x, &X[1][b * 64 - 1]);
	tile_copy(&Y[b * 64], x);
}
