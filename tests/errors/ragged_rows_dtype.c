// expect: 10:35: error: the index 'idx' of tile_rows is f32; it must be i32 or i64
#include <tilec.h>

TILE_KERNEL void
k(int M, int n, const f32 X[M][64], const i32 I[M], f32 Y[M][64])
{
	tile_shared f32 idx[16];
	tile_fragment f32 x[16][64];
	tile_clear(idx);
	tile_copy(x, tile_rows(&X[0][0], idx));
	tile_copy(&Y[0][0], x);
}
