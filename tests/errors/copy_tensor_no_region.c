// expect: 7:15: error: tensor 'X' needs a region: pass the address of its first element, &X[i]...
#include <tilec.h>

TILE_KERNEL void k(int M, const f32 X[M][64])
{
	tile_fragment f32 x[16][64];
	tile_copy(x, X);
}
