// expect: 10:37: error: the mask 'm' is 16x32 but the tile 'x' is 16x64: a mask has the tile's shape, or the extent of its dim 0 (a row mask)
#include <tilec.h>

TILE_KERNEL void
k(int M, int n, const f32 X[M][64], const i32 I[M], f32 Y[M][64])
{
	tile_shared bool m[16][32];
	tile_fragment f32 x[16][64];
	tile_clear(m);
	tile_copy(x, tile_masked(&X[0][0], m));
	tile_copy(&Y[0][0], x);
}
