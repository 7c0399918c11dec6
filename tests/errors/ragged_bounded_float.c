// expect: 8:38: error: tile_bounded's extents are integers, not f32
#include <tilec.h>

TILE_KERNEL void
k(int M, int n, const f32 X[M][64], const i32 I[M], f32 Y[M][64])
{
	tile_fragment f32 x[16][64];
	tile_copy(x, tile_bounded(&X[0][0], (float)n));
	tile_copy(&Y[0][0], x);
}
