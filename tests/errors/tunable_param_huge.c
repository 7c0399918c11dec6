/* A tunable is an enum constant: its values must fit an int (C would
 * silently make this one 0). */
#include <tilec.h>

TILE_PARAM(BLOCK, 128, 64, 4294967296);
// expect: 5:28: error: implicit conversion from 'long' to 'int' changes value from 4294967296 to 0

TILE_KERNEL void
scale(int N, const f32 X[N], f32 Y[N])
{
	int bx = tile_grid_x(ceildiv(N, BLOCK));
	tile_fragment f32 x[BLOCK];
	tile_copy(x, &X[bx * BLOCK]);
	tile_copy(&Y[bx * BLOCK], x);
}
