// expect: 9:18: error: tile_reduce_sum along dim 1 of 'x' (16x64) does not fit 'r' (64)
#include <tilec.h>

TILE_KERNEL void k(int M, f32 Y[M])
{
	tile_fragment f32 x[16][64];
	tile_fragment f32 r[64];
	tile_clear(x);
	tile_reduce_sum(r, x, 1);
}
