// expect: 9:19: error: tile_sum reduces a whole tile, so it is the whole value of a scalar declaration or assignment at block level (float s = tile_sum(x);), not part of an expression
#include <tilec.h>

TILE_KERNEL void
k(int N, const f32 X[N], f32 Y[N])
{
	tile_fragment f32 x[64];
	tile_copy(x, &X[0]);
	float s = 2.0f * tile_sum(x);
	tile_parallel(i, 64)
		x[i] = x[i] / s;
	tile_copy(&Y[0], x);
}
