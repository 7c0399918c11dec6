// expect: 9:15: error: 'max' takes integers, not f32: fmaxf is the float maximum
#include <tilec.h>

TILE_KERNEL void
k(int N, const f32 X[N], f32 Y[N])
{
	tile_parallel(i, 64)
		if (i < N)
			Y[i] = max(X[i], 0.0f);
}
