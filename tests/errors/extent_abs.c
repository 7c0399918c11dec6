// expect: 5:22: error: a tensor extent is computed by the launch from the arguments (docs/launch.md), which knows ceildiv, min and max but not abs
#include <tilec.h>

TILE_KERNEL void
k(int N, const f32 X[abs(N - 50)], f32 Y[64])
{
	tile_parallel(i, 64)
		Y[i] = X[i];
}
