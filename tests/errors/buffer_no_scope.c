// expect: 6:8: error: array 'x' needs a memory scope: tile_shared, tile_fragment or tile_local
#include <tilec.h>

TILE_KERNEL void k(int M, f32 Y[M])
{
	float x[64];
	x[0] = 1.0f;
}
