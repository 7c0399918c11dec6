/*
 * strip_carried_scalar.c - a scalar the top level declares and each block
 * adds to over the gemm loop's iterations: the blocks of a strip cannot
 * share it, so the strip pass leaves the kernel alone and says why.
 */
#include <tilec.h>

TILE_PARAM(BM, 16);
TILE_PARAM(BN, 16);
TILE_PARAM(BK, 16);

TILE_KERNEL void
strip_carried_scalar(int M, int N, int K, const f32 A[M][K],
		     const f32 B[K][N], f32 T[ceildiv(M, BM)][ceildiv(N, BN)])
{
	int bx = tile_grid_x(ceildiv(N, BN));
	int by = tile_grid_y(ceildiv(M, BM));
	tile_shared f32 As[BM][BK];
	tile_shared f32 Bs[BK][BN];
	tile_fragment f32 acc[BM][BN];
	float total = 0.0f;
	for (int k = 0; k < ceildiv(K, BK); k++) {
		tile_copy(As, &A[by * BM][k * BK]);
		tile_copy(Bs, &B[k * BK][bx * BN]);
		tile_clear(acc);
		tile_gemm(acc, As, Bs);
		float t = tile_sum(acc);
		total = total + t;
	}
	T[by][bx] = total;
}
