// expect: 12:22: error: extent of 'x' is 0; it must be positive
// args: -D BLOCK=0
// Tests the error runner: extra arguments come from the args line.
#include <tilec.h>

TILE_PARAM(BLOCK, 4, 2, 4);

TILE_KERNEL void
copy_rows(int M, const f32 X[M], f32 Y[M])
{
	int b = tile_grid_x(ceildiv(M, BLOCK));
	tile_fragment f32 x[BLOCK];
	tile_copy(x, &X[b * BLOCK]);
	tile_copy(&Y[b * BLOCK], x);
}
