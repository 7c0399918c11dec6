// expect: 8:15: error: tile_bounded is applied twice
#include <tilec.h>

TILE_KERNEL void
k(int M, int n, const f32 X[M][64], const i32 I[M], f32 Y[M][64])
{
	tile_fragment f32 x[16][64];
	tile_copy(x, tile_bounded(tile_bounded(&X[0][0], n), n));
	tile_copy(&Y[0][0], x);
}
