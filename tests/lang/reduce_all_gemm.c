/* tile_sum and tile_max of a gemm accumulator (the mma.sync layout on
 * CUDA, the MFMA one on HIP): every thread holds part of the tile, the
 * warps combine.  Y = acc / max(acc) per block, T the block's sum.
 * shape: M=100,N=70,K=40
 * shape: M=17,N=9,K=3
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 64);
TILE_PARAM(BLOCK_N, 64);
TILE_PARAM(BLOCK_K, 32);

TILE_KERNEL void
reduce_all_gemm(int M, int N, int K, const f16 A[M][K], const f16 B[K][N],
		f32 Y[M][N], f32 T[M][N])
{
	tile_threads(128);
	int bx = tile_grid_x(ceildiv(N, BLOCK_N));
	int by = tile_grid_y(ceildiv(M, BLOCK_M));
	tile_shared f16 As[BLOCK_M][BLOCK_K];
	tile_shared f16 Bs[BLOCK_K][BLOCK_N];
	tile_fragment f32 acc[BLOCK_M][BLOCK_N];
	tile_clear(acc);
	for (int k = 0; k < ceildiv(K, BLOCK_K); k++) {
		tile_copy(As, &A[by * BLOCK_M][k * BLOCK_K]);
		tile_copy(Bs, &B[k * BLOCK_K][bx * BLOCK_N]);
		tile_gemm(acc, As, Bs);
	}
	float total = tile_sum(acc);
	float hi = tile_absmax(acc);
	tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
		acc[i][j] = acc[i][j] / hi;
	tile_copy(&Y[by * BLOCK_M][bx * BLOCK_N], acc);
	if (by * BLOCK_M < M && bx * BLOCK_N < N)
		T[by * BLOCK_M][bx * BLOCK_N] = total;
}
