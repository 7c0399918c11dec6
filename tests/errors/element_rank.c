// expect: 8:8: error: array type 'f32[64]' (aka 'float[64]') is not assignable
#include <tilec.h>

TILE_KERNEL void k(int M, f32 Y[M])
{
	tile_fragment f32 x[64][64];
	tile_parallel(i, 64)
		x[i] = 1.0f;
}
