// expect: 7:26: error: tile_dims names 3 dims but the tile has 2
#include <tilec.h>

TILE_KERNEL void k(int B, int S, const f16 Q[B][S][8][64])
{
	tile_shared f16 Qs[32][64];
	tile_copy(Qs, tile_dims(&Q[0][0][0][0], 1, 2, 3));
}
