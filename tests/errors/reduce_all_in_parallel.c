// expect: 11:13: error: tile operations act on whole tiles and cannot be inside tile_parallel loop 'i'
#include <tilec.h>

TILE_KERNEL void
k(int N, const f32 X[N], f32 Y[N])
{
	tile_fragment f32 x[64];
	tile_copy(x, &X[0]);
	tile_fragment f32 y[64];
	tile_parallel(i, 64) {
		float s = tile_sum(x);
		y[i] = x[i] / s;
	}
	tile_copy(&Y[0], y);
}
