// expect: 7:30: error: 'ceildiv' takes i32s, and this argument is i64, which would be narrowed first; convert it explicitly ((i32)x) if that is meant
#include <tilec.h>

TILE_KERNEL void
k(long long N, const f32 X[N], f32 Y[N])
{
	int b = tile_grid_x(ceildiv(N, 128));
	tile_parallel(i, 128)
		if (b * 128 + i < N)
			Y[b * 128 + i] = X[b * 128 + i];
}
