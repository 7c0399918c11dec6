// expect: 8:22: error: tile_copy writes 'O', which is declared const
#include <tilec.h>

TILE_KERNEL void k(int B, int S, const f16 O[B][S][8][64])
{
	tile_fragment f32 o[32][64];
	tile_clear(o);
	tile_copy(tile_dims(&O[0][0][0][0], 1, 3), o);
}
