// expect: 9:15: error: 'abs' takes integers, not f32: fabsf is the float absolute value
#include <tilec.h>

TILE_KERNEL void
k(int N, const f32 X[N], i32 Y[N])
{
	tile_parallel(i, 64)
		if (i < N)
			Y[i] = abs(X[i] * 2.0f);
}
