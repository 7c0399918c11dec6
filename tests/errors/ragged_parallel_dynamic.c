// expect: 9:19: error: extent of 'i' must be a constant (literals and tunables), or min(C, n) with C a constant when n is known only at run time
#include <tilec.h>

TILE_KERNEL void
k(int M, int n, const f32 X[M][64], const i32 I[M], f32 Y[M][64])
{
	tile_fragment f32 x[16][64];
	tile_copy(x, &X[0][0]);
	tile_parallel(i, n) tile_parallel(j, 64)
		x[i][j] = 0.0f;
	tile_copy(&Y[0][0], x);
}
