// expect: 6:25: error: extent of dim 1 of tensor 'X' is -1; it must not be negative
// args: -D D=-1
#include <tilec.h>
TILE_PARAM(D, 64);
TILE_KERNEL void
k(int N, const f32 X[N][D], f32 Y[N][D])
{
	tile_threads(128);
	int b = tile_grid_x(N);
	tile_fragment f32 x[64];
	tile_copy(x, &X[b][0]);
	tile_copy(&Y[b][0], x);
}
