// expect: 7:2: error: tile_threads is given twice
#include <tilec.h>

TILE_KERNEL void k(int M, f32 Y[M])
{
	tile_threads(64);
	tile_threads(128);
}
