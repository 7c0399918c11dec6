/* A tuning record's value the tunable does not list among its choices is
 * used, with a warning at the tunable's declaration naming the record
 * (tests/errors/record_outside_choices.json). */
// args: --config tests/errors/record_outside_choices.json
// expect: 8:1: warning: BLOCK=48 from tests/errors/record_outside_choices.json is not one of BLOCK's choices (32 64)
#include <tilec.h>

TILE_PARAM(BLOCK, 64, 32, 64);

TILE_KERNEL void
copy_rows(int M, const f32 X[M], f32 Y[M])
{
	int b = tile_grid_x(ceildiv(M, BLOCK));
	tile_fragment f32 x[BLOCK];
	tile_copy(x, &X[b * BLOCK]);
	tile_copy(&Y[b * BLOCK], x);
}
