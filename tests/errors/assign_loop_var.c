// expect: 7:3: error: cannot assign to 'i': it is a loop variable
#include <tilec.h>

TILE_KERNEL void k(int M, f32 Y[M])
{
	for (int i = 0; i < M; i++)
		i = i + 1;
}
