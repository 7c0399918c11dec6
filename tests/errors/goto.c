// expect: 6:2: error: goto and labels are not supported in a tile program
#include <tilec.h>

TILE_KERNEL void k(int M, f32 Y[M])
{
	goto out;
out:
	Y[0] = 1.0f;
}
