/* An extended character in a tunable's name: rejected where declared. */
#include <tilec.h>

TILE_PARAM(BLÖCK, 128, 64, 128);
// expect: 4:1: error: 'BL\xc3\x96CK' is not a plain ASCII identifier ([A-Za-z_][A-Za-z0-9_]*); generated code uses it as a name

TILE_KERNEL void
scale(int N, const f32 X[N], f32 Y[N])
{
	int bx = tile_grid_x(ceildiv(N, BLÖCK));
	tile_fragment f32 x[BLÖCK];
	tile_copy(x, &X[bx * BLÖCK]);
	tile_copy(&Y[bx * BLÖCK], x);
}
