// expect: 4:14: error: function 'twice' is not a kernel: a tile program defines only TILE_KERNEL functions
#include <tilec.h>

static float twice(float x)
{
	return 2.0f * x;
}

TILE_KERNEL void k(int M, f32 Y[M])
{
}
