// expect: 5:28: error: a tensor extent is computed by the launch from the arguments, in integers (docs/launch.md): this part is f32
#include <tilec.h>

TILE_KERNEL void
k(int N, const f32 X[(int)(N * 0.5f)], f32 Y[64])
{
	tile_parallel(i, 64)
		Y[i] = X[i];
}
