// expect: 6:12: error: tile_fill's destination must be a whole buffer, not a region of 'Y'
#include <tilec.h>

TILE_KERNEL void k(int M, f32 Y[M])
{
	tile_fill(&Y[0], 1.0f);
}
