// expect: 7:19: error: extent of 'i' must be a constant (literals and tunables), or min(C, n) with C a constant when n is known only at run time
#include <tilec.h>

TILE_KERNEL void k(int M, f32 Y[M])
{
	tile_fragment f32 x[64];
	tile_parallel(i, M)
		x[i] = 0.0f;
}
