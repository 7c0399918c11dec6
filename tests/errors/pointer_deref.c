// expect: 8:10: error: pointers are not values in a tile program; '&T[i][j]' names a region only as a tile operation's operand
#include <tilec.h>

TILE_KERNEL void k(int M, f32 Y[M])
{
	tile_fragment f32 x[64];
	tile_parallel(i, 64)
		x[i] = *(&Y[0] + i);
}
