// expect: 8:3: error: every iteration of tile_parallel loop 'i' writes the same element of 'x': index it by 'i', or move the write out of the loop
#include <tilec.h>

TILE_KERNEL void k(int M, f32 Y[M])
{
	tile_fragment f32 x[64][64];
	tile_parallel(i, 64) tile_parallel(j, 64)
		x[0][j] = 1.0f;
}
