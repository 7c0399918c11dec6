/*
 * scale.c - Y = 2 X, for tests/hostile_names.sh: a kernel small enough to
 * build with every compiler quickly, copied under hostile file names.
 */
#include <tilec.h>

TILE_PARAM(BLOCK, 256, 128, 256);

TILE_KERNEL void
scale(int N, const f32 X[N], f32 Y[N])
{
	tile_threads(128);
	int bx = tile_grid_x(ceildiv(N, BLOCK));

	tile_fragment f32 x[BLOCK];

	tile_copy(x, &X[bx * BLOCK]);
	tile_parallel(i, BLOCK)
		x[i] = 2.0f * x[i];
	tile_copy(&Y[bx * BLOCK], x);
}
