// expect: 8:2: error: tile_rows names a region; it is only an operand of a tile operation
#include <tilec.h>

TILE_KERNEL void
k(int M, int n, const f32 X[M][64], const i32 I[M], f32 Y[M][64])
{
	tile_shared i32 idx[16];
	tile_rows(&X[0][0], idx);
}
