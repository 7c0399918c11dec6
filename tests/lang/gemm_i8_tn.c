/* An int8 GEMM on the integer matrix instructions with A stored
 * transposed (K x M, TILE_TRANS_A) and B N x K (TILE_TRANS_B): on CUDA,
 * A's k values are gathered a byte at a time, B's come through ldmatrix.
 * Eight warps on a 64 x 16 tile, one instruction tile each (four waves
 * of one on HIP); ragged M, N and K, and K below one k-step.
 * shape: M=100,N=70,K=200
 * shape: M=65,N=9,K=1
 * expect-cuda: tilec::mma_ss<[0-9]+, [0-9]+, true, true>
 * expect-hip: tilec::mfma_ss<[0-9]+, [0-9]+, true, true>
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 64);
TILE_PARAM(BLOCK_N, 16);
TILE_PARAM(BLOCK_K, 64);

TILE_KERNEL void
gemm_i8_tn(int M, int N, int K, const i8 A[K][M], const i8 B[N][K],
	   i32 C[M][N])
{
	tile_threads(256);
	int bx = tile_grid_x(ceildiv(N, BLOCK_N));
	int by = tile_grid_y(ceildiv(M, BLOCK_M));

	tile_shared i8 As[BLOCK_K][BLOCK_M];
	tile_shared i8 Bs[BLOCK_N][BLOCK_K];
	tile_fragment i32 acc[BLOCK_M][BLOCK_N];

	tile_clear(acc);
	for (int k = 0; k < ceildiv(K, BLOCK_K); k++) {
		tile_copy(As, &A[k * BLOCK_K][by * BLOCK_M]);
		tile_copy(Bs, &B[bx * BLOCK_N][k * BLOCK_K]);
		tile_gemm(acc, As, Bs, TILE_TRANS_A | TILE_TRANS_B);
	}
	tile_copy(&C[by * BLOCK_M][bx * BLOCK_N], acc);
}
