// expect: 10:27: error: tile_reduce_argmax needs three different buffers; 'best' is named twice
#include <tilec.h>

TILE_KERNEL void
k(int M, const i32 X[M][64], i32 Y[M])
{
	tile_fragment i32 x[16][64];
	tile_fragment i32 best[16];
	tile_copy(x, &X[0][0]);
	tile_reduce_argmax(best, best, x, 1);
	tile_copy(&Y[0], best);
}
