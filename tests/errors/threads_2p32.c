/* 2^32 threads were truncated to 0 in an int and divided by: SIGFPE. */
#include <tilec.h>

TILE_KERNEL void
scale(int N, const f32 X[N], f32 Y[N])
{
	tile_threads(4294967296);
// expect: 7:15: error: implicit conversion from 'long' to 'int' changes value from 4294967296 to 0
	int bx = tile_grid_x(ceildiv(N, 128));
	tile_fragment f32 x[128];
	tile_copy(x, &X[bx * 128]);
	tile_copy(&Y[bx * 128], x);
}
