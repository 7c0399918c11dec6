// expect: 11:21: error: tile_reduce_argmin along dim 0 of 'x' (16x64) does not fit 'best' (16)
#include <tilec.h>

TILE_KERNEL void
k(int M, const f32 X[M][64], f32 Y[M])
{
	tile_fragment f32 x[16][64];
	tile_fragment f32 best[16];
	tile_fragment i32 at[64];
	tile_copy(x, &X[0][0]);
	tile_reduce_argmin(best, at, x, 0);
	tile_copy(&Y[0], best);
}
