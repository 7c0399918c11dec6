// expect: 11:22: error: tile_reduce_topk along dim 1 of 'x' (16x64) does not fit 'at' (16x4)
#include <tilec.h>

TILE_KERNEL void
k(int M, const f32 X[M][64], f32 Y[M][8])
{
	tile_fragment f32 x[16][64];
	tile_fragment f32 v[16][8];
	tile_fragment i32 at[16][4];
	tile_copy(x, &X[0][0]);
	tile_reduce_topk(v, at, x, 1);
	tile_copy(&Y[0][0], v);
}
