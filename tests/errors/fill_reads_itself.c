// expect: 10:15: error: tile_fill's value reads 'x', the buffer it fills; read the value into a local first (float v = x[...]; tile_fill(x, v);)
#include <tilec.h>
TILE_KERNEL void
k(int N, const f32 X[N][64], f32 Y[N][64])
{
	tile_threads(128);
	int b = tile_grid_x(ceildiv(N, 16));
	tile_fragment f32 x[16][64];
	tile_copy(x, &X[b * 16][0]);
	tile_fill(x, x[0][0]);
	tile_copy(&Y[b * 16][0], x);
}
