// expect: 9:18: error: tile_bounded is not supported in tile_atomic_add yet; it is an operand of tile_copy
#include <tilec.h>

TILE_KERNEL void
k(int M, int n, const f32 X[M][64], const i32 I[M], f32 Y[M][64])
{
	tile_fragment f32 x[16][64];
	tile_copy(x, &X[0][0]);
	tile_atomic_add(tile_bounded(&Y[0][0], n), x);
}
