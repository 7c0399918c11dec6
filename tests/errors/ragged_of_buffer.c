// expect: 10:15: error: tile_bounded takes a region of a tensor; 's' is a buffer
#include <tilec.h>

TILE_KERNEL void
k(int M, int n, const f32 X[M][64], const i32 I[M], f32 Y[M][64])
{
	tile_shared f32 s[32][64];
	tile_fragment f32 x[16][64];
	tile_copy(s, &X[0][0]);
	tile_copy(x, tile_bounded(&s[0][0], n));
	tile_copy(&Y[0][0], x);
}
