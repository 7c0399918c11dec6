// expect: 6:25: error: loop increment must be 'i++' or 'i += step'
#include <tilec.h>

TILE_KERNEL void k(int M, f32 Y[M])
{
	for (int i = 1; i < M; i *= 2)
		Y[i] = 0.0f;
}
