// expect: 9:27: error: the only reduction flag is TILE_ACCUMULATE
#include <tilec.h>

TILE_KERNEL void k(int M, f32 Y[M])
{
	tile_fragment f32 x[16][64];
	tile_fragment f32 r[16];
	tile_clear(x);
	tile_reduce_max(r, x, 1, TILE_TRANS_A);
}
