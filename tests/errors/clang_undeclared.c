// expect: 7:19: error: use of undeclared identifier 'xs'
#include <tilec.h>

TILE_KERNEL void k(int M, f32 Y[M])
{
	tile_fragment f32 x[64];
	tile_copy(&Y[0], xs);
}
