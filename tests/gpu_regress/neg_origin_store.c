/* A register fragment stored at an origin that may be negative: the
 * elements before the tensor's start are not written (the GPU stores once
 * tested only index < N and wrote Y[-1]).  Y[b * 64 + o + j] = X[b * 64 + j]
 * (0 past X's end); Y's elements no block covers stay untouched.
 * shape: N=100,o=-1
 * shape: N=100,o=-64
 * shape: N=130,o=3
 */
#include <tilec.h>

TILE_KERNEL void
neg_origin_store(int N, int o, const f32 X[N], f32 Y[N])
{
	int b = tile_grid_x(ceildiv(N, 64));
	tile_fragment f32 x[64];
	tile_copy(x, &X[b * 64]);
	tile_copy(&Y[b * 64 + o], x);
}
