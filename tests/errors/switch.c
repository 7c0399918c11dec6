// expect: 6:2: error: switch is not supported: use if / else
#include <tilec.h>

TILE_KERNEL void k(int M, f32 Y[M])
{
	switch (M) {
	default:
		Y[0] = 1.0f;
	}
}
