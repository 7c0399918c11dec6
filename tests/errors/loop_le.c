// expect: 6:18: error: loop condition must be 'i < end'
#include <tilec.h>

TILE_KERNEL void k(int M, f32 Y[M])
{
	for (int i = 0; i <= M; i++)
		Y[i] = 0.0f;
}
