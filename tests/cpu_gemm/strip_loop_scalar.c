/*
 * strip_loop_scalar.c - inside a gemm loop, a scalar of each block's
 * accumulator (tile_max), and one computed from it, change the
 * accumulator: in a strip of blocks both are declared in each block's
 * turn, after the gemm that sets the first.
 */
#include <tilec.h>

TILE_PARAM(BM, 16);
TILE_PARAM(BN, 16);
TILE_PARAM(BK, 16);

TILE_KERNEL void
strip_loop_scalar(int M, int N, int K, const f32 A[M][K], const f32 B[K][N],
		  f32 C[M][N])
{
	int bx = tile_grid_x(ceildiv(N, BN));
	int by = tile_grid_y(ceildiv(M, BM));
	tile_shared f32 As[BM][BK];
	tile_shared f32 Bs[BK][BN];
	tile_fragment f32 acc[BM][BN];
	tile_clear(acc);
	for (int k = 0; k < ceildiv(K, BK); k++) {
		tile_copy(As, &A[by * BM][k * BK]);
		tile_copy(Bs, &B[k * BK][bx * BN]);
		tile_gemm(acc, As, Bs);
		float t = tile_max(acc);
		float w = t * 0.5f;
		tile_parallel(i, BM) tile_parallel(j, BN)
			acc[i][j] = acc[i][j] - w;
	}
	tile_copy(&C[by * BM][bx * BN], acc);
}
