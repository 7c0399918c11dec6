// expect: 9:12: error: tile_bounded takes a region of a tensor (&T[i]...), not a whole buffer
#include <tilec.h>

TILE_KERNEL void
k(int M, int n, const f32 X[M][64], const i32 I[M], f32 Y[M][64])
{
	tile_shared f32 s[16][64];
	tile_copy(s, &X[0][0]);
	tile_copy(tile_bounded(s, n), s);
}
