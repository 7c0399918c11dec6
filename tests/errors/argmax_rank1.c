// expect: 11:31: error: tile_reduce_argmax along the only dim of 'x' leaves no dims for the results; reduce a [1][N] tile along dim 1
#include <tilec.h>

TILE_KERNEL void
k(int M, const f32 X[M], f32 Y[M])
{
	tile_fragment f32 x[64];
	tile_fragment f32 best[1];
	tile_fragment i32 at[1];
	tile_copy(x, &X[0]);
	tile_reduce_argmax(best, at, x, 0);
	tile_copy(&Y[0], best);
}
