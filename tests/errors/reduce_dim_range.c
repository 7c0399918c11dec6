// expect: 9:2: error: tile_reduce_max: dim 2 is out of range for 'x' (2 dims)
#include <tilec.h>

TILE_KERNEL void k(int M, f32 Y[M])
{
	tile_fragment f32 x[16][64];
	tile_fragment f32 r[16];
	tile_clear(x);
	tile_reduce_max(r, x, 2);
}
