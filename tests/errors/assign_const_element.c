// expect: 7:8: error: read-only variable is not assignable
#include <tilec.h>

TILE_KERNEL void k(int M, const f32 X[M])
{
	if (M > 0)
		X[0] = 1.0f;
}
