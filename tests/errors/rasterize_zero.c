// expect: 10:17: error: row count of 'tile_rasterize' is 0; it must be positive
#include <tilec.h>

TILE_KERNEL void
k(int M, int N, const f32 X[M][N], f32 Y[M][N])
{
	tile_threads(64);
	int bx = tile_grid_x(ceildiv(N, 64));
	int by = tile_grid_y(M);
	tile_rasterize(0);
	tile_fragment f32 x[64];
	tile_copy(x, &X[by][bx * 64]);
	tile_copy(&Y[by][bx * 64], x);
}
