/* A pipelined loop keeps at most 32 stages. */
// args: -D STAGES=33
#include <tilec.h>

TILE_PARAM(STAGES, 2, 2, 3);

TILE_KERNEL void
colsum(int M, int N, const f32 X[M][N], f32 Y[N])
{
	int bx = tile_grid_x(ceildiv(N, 64));
	tile_shared f32 xs[16][64];
	tile_fragment f32 acc[64];
	tile_clear(acc);
	tile_pipelined(k, ceildiv(M, 16), STAGES) {
// expect: 14:36: error: stage count of 'k' is 33; tilec allows at most 32
		tile_copy(xs, &X[k * 16][bx * 64]);
		tile_reduce_sum(acc, xs, 0);
	}
	tile_copy(&Y[bx * 64], acc);
}
