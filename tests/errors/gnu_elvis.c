// expect: 11:10: error: GNU 'x ?: y' is not supported in a tile program; write 'x ? x : y'
#include <tilec.h>
TILE_KERNEL void
k(int N, const f32 X[N], f32 Y[N])
{
	tile_threads(128);
	int b = tile_grid_x(ceildiv(N, 128));
	tile_fragment f32 x[128];
	tile_copy(x, &X[b * 128]);
	tile_parallel(i, 128)
		x[i] = x[i] ?: 7.0f;	
	tile_copy(&Y[b * 128], x);
}
