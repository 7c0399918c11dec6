// expect: 9:37: error: the mask 'x' is the tile the copy moves; use another buffer
#include <tilec.h>

TILE_KERNEL void
k(int M, int n, const f32 X[M][64], const i32 I[M], f32 Y[M][64])
{
	tile_shared i32 x[16][64];
	tile_clear(x);
	tile_copy(x, tile_masked(&X[0][0], x));
	tile_copy(&Y[0][0], x);
}
