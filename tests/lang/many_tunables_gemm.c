/* A gemm whose tunables' numbers meet its block vars': the strip's
 * use analysis once took BLOCK_M for bx and declared bx in each block's
 * turn unused (a warning under -Wall), and with many tunables wrote past
 * its slots.
 * shape: M=77,N=300,K=40
 * shape: M=1,N=1,K=1
 */
#include <tilec.h>

TILE_PARAM(D0, 1);
TILE_PARAM(D1, 1);
TILE_PARAM(D2, 1);
TILE_PARAM(D3, 1);
TILE_PARAM(D4, 1);
TILE_PARAM(D5, 1);
TILE_PARAM(BLOCK_M, 64);
TILE_PARAM(BLOCK_N, 64);
TILE_PARAM(BLOCK_K, 32);

TILE_KERNEL void
many_tunables_gemm(int M, int N, int K, const f32 A[M][K], const f32 B[K][N],
		   f32 C[M][N])
{
	tile_threads(128);
	int bx = tile_grid_x(ceildiv(N, BLOCK_N));
	int by = tile_grid_y(ceildiv(M, BLOCK_M));
	tile_shared f32 As[BLOCK_M][BLOCK_K];
	tile_shared f32 Bs[BLOCK_K][BLOCK_N];
	tile_fragment f32 acc[BLOCK_M][BLOCK_N];
	tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N) acc[i][j] = 0.5f;
	for (int k = 0; k < ceildiv(K, BLOCK_K); k++) {
		tile_copy(As, &A[by * BLOCK_M][k * BLOCK_K]);
		tile_copy(Bs, &B[k * BLOCK_K][bx * BLOCK_N]);
		tile_gemm(acc, As, Bs);
	}
	tile_copy(&C[by * BLOCK_M][bx * BLOCK_N], acc);
}
