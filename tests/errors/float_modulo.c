// expect: 8:15: error: invalid operands to binary expression ('float' and 'int')
#include <tilec.h>

TILE_KERNEL void k(int M, f32 Y[M])
{
	tile_fragment f32 x[64];
	tile_parallel(i, 64)
		x[i] = 1.5f % 2;
}
