// expect: 9:2: error: the result of tile_min goes into a scalar local variable (float s = tile_min(x);)
#include <tilec.h>

TILE_KERNEL void
k(int N, const f32 X[N], f32 Y[N])
{
	tile_fragment f32 x[64];
	tile_copy(x, &X[0]);
	Y[0] = tile_min(x);
}
