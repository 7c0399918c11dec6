// expect: 7:2: error: while and do loops are not supported: write a canonical for loop or tile_parallel / tile_pipelined
#include <tilec.h>

TILE_KERNEL void k(int M, f32 Y[M])
{
	int i = 0;
	while (i < M)
		i++;
}
