// expect: 8:4: error: break and continue are not supported: loops in a tile program run their whole range
#include <tilec.h>

TILE_KERNEL void k(int M, f32 Y[M])
{
	for (int i = 0; i < M; i++) {
		if (i > 3)
			break;
	}
}
