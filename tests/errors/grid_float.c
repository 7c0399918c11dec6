// expect: 7:27: error: the grid extent along x is computed by the launch from the arguments, in integers (docs/launch.md): this part is f32
#include <tilec.h>

TILE_KERNEL void
k(int N, f32 Y[N])
{
	int b = tile_grid_x((int)sqrtf((float)N));
	tile_parallel(i, 64)
		if (b * 64 + i < N)
			Y[b * 64 + i] = 1.0f;
}
