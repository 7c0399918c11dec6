// expect: 7:2: error: loops must have the form 'for (int i = begin; i < end; i++)' (or i += step)
#include <tilec.h>

TILE_KERNEL void k(int M, f32 Y[M])
{
	int i;
	for (i = 0; i < M; i++)
		Y[i] = 0.0f;
}
