// expect: 8:13: error: tile_clear's destination must be a whole buffer, not a region of 'xs'
#include <tilec.h>

TILE_KERNEL void
k(int N, f32 Y[N][8])
{
	tile_shared f32 xs[4][8];
	tile_clear(&xs[2][0]);
	tile_copy(&Y[0][0], xs);
}
