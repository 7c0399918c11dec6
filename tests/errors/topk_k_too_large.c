// expect: 11:19: error: tile_reduce_topk keeps k = 8 elements ('v' along dim 1) of the 4 along dim 1 of 'x'; k must be at most the dim's extent
#include <tilec.h>

TILE_KERNEL void
k(int M, const f32 X[M][4], f32 Y[M][8])
{
	tile_fragment f32 x[16][4];
	tile_fragment f32 v[16][8];
	tile_fragment i32 at[16][8];
	tile_copy(x, &X[0][0]);
	tile_reduce_topk(v, at, x, 1);
	tile_copy(&Y[0][0], v);
}
