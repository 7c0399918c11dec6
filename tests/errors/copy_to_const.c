// expect: 8:12: error: passing 'const f32 *' (aka 'const float *') to parameter of type 'void *' discards qualifiers
#include <tilec.h>

TILE_KERNEL void k(int M, const f32 X[M][64])
{
	tile_fragment f32 x[16][64];
	tile_clear(x);
	tile_copy(&X[0][0], x);
}
