// expect: 7:17: error: too few arguments to function call, expected 2, have 1
#include <tilec.h>

TILE_KERNEL void k(int M, f32 Y[M])
{
	tile_fragment f32 x[64];
	tile_copy(&Y[0]);
}
