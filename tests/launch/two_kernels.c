/*
 * two_kernels.c - a file of two kernels whose sizes need C's integer
 * semantics: the grid of `tail` divides a value that can be negative
 * ((N - 40) / 32 truncates toward zero in C, floors in Python), and
 * `pack` has a float scalar and tensors whose extent is an expression,
 * not a scalar.
 */
#include <tilec.h>

TILE_PARAM(BLOCK, 32, 16, 32);

TILE_KERNEL void
tail(int N, const f32 X[N], f32 Y[N])
{
	tile_threads(64);
	int b = tile_grid_x((N - 40) / BLOCK + 2);
	tile_fragment f32 x[BLOCK];
	tile_copy(x, &X[b * BLOCK]);
	tile_copy(&Y[b * BLOCK], x);
}

TILE_KERNEL void
pack(int M, int N, float shift, const f32 X[M][2 * N], f32 Y[M][2 * N])
{
	int b = tile_grid_x(ceildiv(M, 16));
	tile_fragment f32 x[16][64];
	tile_copy(x, &X[b * 16][0]);
	tile_parallel(i, 16) tile_parallel(j, 64)
		x[i][j] = x[i][j] + shift;
	tile_copy(&Y[b * 16][0], x);
}
