// expect: 7:45: error: dim 4 is out of range for 'Q' (rank 4)
#include <tilec.h>

TILE_KERNEL void k(int B, int S, const f16 Q[B][S][8][64])
{
	tile_shared f16 Qs[32][64];
	tile_copy(Qs, tile_dims(&Q[0][0][0][0], 1, 4));
}
