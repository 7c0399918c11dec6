/*
 * A pipelined loop whose copy fills a register fragment: expand_pipeline
 * loads it one iteration ahead into a second fragment (x_next), copied
 * into x at the top of each iteration.  Ragged shapes: the last
 * iteration's tile and the last block's rows are partial.
 * shape: M=70,N=150
 * shape: M=32,N=64
 * expect-ir: copy x_next <- X\[bx \* 32, \(k \+ 1\) \* 64\] dims \(0, 1\), register
 * expect-ir: copy x <- x_next, register
 * expect-cuda: float x_next\[
 */
#include <tilec.h>

TILE_KERNEL void
rowsum_pipe(int M, int N, const f32 X[M][N], f32 Y[M][64])
{
	tile_threads(128);
	int bx = tile_grid_x(ceildiv(M, 32));
	tile_fragment f32 x[32][64];
	tile_fragment f32 acc[32][64];
	tile_clear(acc);
	tile_pipelined(k, ceildiv(N, 64), 2) {
		tile_copy(x, &X[bx * 32][k * 64]);
		tile_parallel(i, 32) tile_parallel(j, 64)
			acc[i][j] = acc[i][j] + x[i][j];
	}
	tile_copy(&Y[bx * 32][0], acc);
}
