// expect: 10:37: error: the mask 'm' is f32; a mask is bool or an integer type (0 is false)
#include <tilec.h>

TILE_KERNEL void
k(int M, int n, const f32 X[M][64], const i32 I[M], f32 Y[M][64])
{
	tile_shared f32 m[16];
	tile_fragment f32 x[16][64];
	tile_clear(m);
	tile_copy(x, tile_masked(&X[0][0], m));
	tile_copy(&Y[0][0], x);
}
