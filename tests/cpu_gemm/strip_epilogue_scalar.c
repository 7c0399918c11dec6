/*
 * strip_epilogue_scalar.c - after a gemm loop, a scalar of each block's
 * accumulator (tile_max) fills a tile that is stored: in a strip of
 * blocks (passes/cpu_strip.c) the scalar is each block's, set and read in
 * its turn, never one block's value for another's fill.
 */
#include <tilec.h>

TILE_PARAM(BM, 8);
TILE_PARAM(BN, 64);
TILE_PARAM(BK, 32);

TILE_KERNEL void
strip_epilogue_scalar(int M, int N, int K, const f32 A[M][K],
		      const f32 B[K][N], f32 S[M][N])
{
	int bx = tile_grid_x(ceildiv(N, BN));
	int by = tile_grid_y(ceildiv(M, BM));
	tile_shared f32 as[BM][BK], bs[BK][BN];
	tile_fragment f32 acc[BM][BN], y[BM][BN];
	tile_clear(acc);
	for (int k = 0; k < ceildiv(K, BK); k++) {
		tile_copy(as, &A[by * BM][k * BK]);
		tile_copy(bs, &B[k * BK][bx * BN]);
		tile_gemm(acc, as, bs);
	}
	float s = tile_max(acc);
	tile_fill(y, s);
	tile_copy(&S[by * BM][bx * BN], y);
}
