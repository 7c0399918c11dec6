/* An int8 GEMM on the integer matrix instructions (mma.sync m16n8k32 s8
 * on sm_80, wgmma m64nNk32 s8 on sm_90a, v_mfma_i32_16x16x16i8 /
 * 16x16x32_i8 on HIP): C = A B^T with
 * A M x K and the weights B stored N x K, as a W8A8 linear layer keeps
 * them, s32 accumulators, through a pipelined loop.  The ragged shapes
 * leave partial tiles in M, N and K (the copies zero-fill them); the i32
 * outputs compare exactly.
 * shape: M=100,N=70,K=200
 * shape: M=1,N=130,K=33
 * shape: M=129,N=8,K=64
 * expect-cuda: tilec::(mma|wgmma)_ss<
 * expect-hip: tilec::mfma_ss<
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 64);
TILE_PARAM(BLOCK_N, 64);
TILE_PARAM(BLOCK_K, 64);
TILE_PARAM(STAGES, 3);
TILE_PARAM(THREADS, 128);

TILE_KERNEL void
gemm_i8_nt(int M, int N, int K, const i8 A[M][K], const i8 B[N][K],
	   i32 C[M][N])
{
	tile_threads(THREADS);
	int bx = tile_grid_x(ceildiv(N, BLOCK_N));
	int by = tile_grid_y(ceildiv(M, BLOCK_M));

	tile_shared i8 As[BLOCK_M][BLOCK_K];
	tile_shared i8 Bs[BLOCK_N][BLOCK_K];
	tile_fragment i32 acc[BLOCK_M][BLOCK_N];

	tile_clear(acc);
	tile_pipelined(k, ceildiv(K, BLOCK_K), STAGES) {
		tile_copy(As, &A[by * BLOCK_M][k * BLOCK_K]);
		tile_copy(Bs, &B[bx * BLOCK_N][k * BLOCK_K]);
		tile_gemm(acc, As, Bs, TILE_TRANS_B);
	}
	tile_copy(&C[by * BLOCK_M][bx * BLOCK_N], acc);
}
