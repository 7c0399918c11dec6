// expect: 8:3: error: tile operations act on whole tiles and cannot be inside tile_parallel loop 'i'
#include <tilec.h>

TILE_KERNEL void k(int M, f32 Y[M])
{
	tile_fragment f32 x[64];
	tile_parallel(i, 64)
		tile_clear(x);
}
