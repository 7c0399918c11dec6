// expect: 7:2: error: call to undeclared function 'tile_copy_async'; ISO C99 and later do not support implicit function declarations
#include <tilec.h>

TILE_KERNEL void k(int M, f32 Y[M])
{
	tile_fragment f32 x[64];
	tile_copy_async(&Y[0], x);
}
