// expect: 9:24: error: the reduced dim must be a constant
#include <tilec.h>

TILE_KERNEL void k(int M, f32 Y[M])
{
	tile_fragment f32 x[16][64];
	tile_fragment f32 r[16];
	tile_clear(x);
	tile_reduce_sum(r, x, M);
}
