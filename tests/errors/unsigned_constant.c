// expect: 9:21: error: this constant is an unsigned int in C, and tile programs have no unsigned 32- or 64-bit type; write its value as a signed constant (an LL suffix for values past INT_MAX)
#include <tilec.h>

TILE_KERNEL void
k(int N, i32 Y[N])
{
	tile_parallel(i, 64)
		if (i < N)
			Y[i] = (i - 2) < 1u;
}
