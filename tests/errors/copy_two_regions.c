// expect: 6:2: error: tile_copy needs a whole buffer as one operand: its shape is the tile's extent
#include <tilec.h>

TILE_KERNEL void k(int M, const f32 X[M][64], f32 Y[M][64])
{
	tile_copy(&Y[0][0], &X[0][0]);
}
