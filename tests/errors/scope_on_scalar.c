// expect: 6:20: error: 'x' has a memory scope but is not an array
#include <tilec.h>

TILE_KERNEL void k(int M, f32 Y[M])
{
	tile_shared float x;
}
