// expect: 11:27: error: tile_reduce_argmax's indices go into an i32 or i64 buffer; 'at' is f32
#include <tilec.h>

TILE_KERNEL void
k(int M, const f32 X[M][64], f32 Y[M])
{
	tile_fragment f32 x[16][64];
	tile_fragment f32 best[16];
	tile_fragment f32 at[16];
	tile_copy(x, &X[0][0]);
	tile_reduce_argmax(best, at, x, 1);
	tile_copy(&Y[0], best);
}
