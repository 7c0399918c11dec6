// expect: 10:10: error: call to 'helper', which is not a tilec builtin; a kernel may call only builtins
#include <tilec.h>

float helper(float x);

TILE_KERNEL void k(int M, f32 Y[M])
{
	tile_fragment f32 x[64];
	tile_parallel(i, 64)
		x[i] = helper(1.0f);
	tile_copy(&Y[0], x);
}
