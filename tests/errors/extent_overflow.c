/* BLOCK * BLOCK overflows an int, as the generated code would compute it
 * (the product once wrapped in a long long and passed the checks). */
// args: -D BLOCK=65536
#include <tilec.h>

TILE_PARAM(BLOCK, 128, 64, 128);

TILE_KERNEL void
scale(int N, const f32 X[N], f32 Y[N])
{
	int bx = tile_grid_x(ceildiv(N, BLOCK));
	tile_fragment f32 x[BLOCK * BLOCK];
// expect: 12:22: error: extent of 'x' overflows: a step of it does not fit its C type (int, for tunables and literals)
	tile_copy(x, &X[bx * BLOCK]);
	tile_copy(&Y[bx * BLOCK], x);
}
