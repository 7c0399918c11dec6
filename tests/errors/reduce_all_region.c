// expect: 7:21: error: tile_max reduces a whole buffer, not a region: copy the region into a buffer first
#include <tilec.h>

TILE_KERNEL void
k(int N, const f32 X[N], f32 Y[N])
{
	float m = tile_max(&X[0]);
	tile_fragment f32 y[64];
	tile_fill(y, m);
	tile_copy(&Y[0], y);
}
