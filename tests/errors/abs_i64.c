// expect: 9:15: error: 'abs' takes i32s, and this argument is i64, which would be narrowed first; convert it explicitly ((i32)x) if that is meant
#include <tilec.h>

TILE_KERNEL void
k(int N, const i64 X[N], i64 Y[N])
{
	tile_parallel(i, 64)
		if (i < N)
			Y[i] = abs(X[i]);
}
