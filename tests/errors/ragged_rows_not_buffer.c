// expect: 8:35: error: tile_rows needs a whole buffer as its index
#include <tilec.h>

TILE_KERNEL void
k(int M, int n, const f32 X[M][64], const i32 I[M], f32 Y[M][64])
{
	tile_fragment f32 x[16][64];
	tile_copy(x, tile_rows(&X[0][0], &I[0]));
	tile_copy(&Y[0][0], x);
}
