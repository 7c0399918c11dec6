/* An fp8 GEMM on the tensor cores: C = A B^T with A M x K and B N x K in
 * fp8e4m3, f32 accumulators.  On sm_90a it is wgmma m64nNk32 e4m3, each
 * gemm's sum promoted into the f32 accumulator (the manifest's
 * "promoted_sums" says how far that may be from exact sums), or
 * mma.sync m16n8k32 e4m3 with --no-fp8-wgmma; on sm_80 the operand bytes
 * become f16 in registers (exactly) for two m16n8k16 per k-step; HIP has
 * no OCP fp8 instruction, so there the bytes become f16 as they are read
 * for v_mfma_f32_16x16x16f16.  Products of fp8 values are exact in f32,
 * so on mma.sync and MFMA only the order of the sums differs from the
 * reference.  Ragged M, N and K.
 * shape: M=100,N=70,K=200
 * shape: M=1,N=130,K=33
 * expect-cuda: tilec::(mma_ss|wgmma_ss)<
 * expect-hip: tilec::mfma_ss<
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 64);
TILE_PARAM(BLOCK_N, 64);
TILE_PARAM(BLOCK_K, 64);
TILE_PARAM(STAGES, 3);
TILE_PARAM(THREADS, 128);

TILE_KERNEL void
gemm_fp8_nt(int M, int N, int K, const fp8e4m3 A[M][K],
	    const fp8e4m3 B[N][K], f32 C[M][N])
{
	tile_threads(THREADS);
	int bx = tile_grid_x(ceildiv(N, BLOCK_N));
	int by = tile_grid_y(ceildiv(M, BLOCK_M));

	tile_shared fp8e4m3 As[BLOCK_M][BLOCK_K];
	tile_shared fp8e4m3 Bs[BLOCK_N][BLOCK_K];
	tile_fragment f32 acc[BLOCK_M][BLOCK_N];

	tile_clear(acc);
	tile_pipelined(k, ceildiv(K, BLOCK_K), STAGES) {
		tile_copy(As, &A[by * BLOCK_M][k * BLOCK_K]);
		tile_copy(Bs, &B[bx * BLOCK_N][k * BLOCK_K]);
		tile_gemm(acc, As, Bs, TILE_TRANS_B);
	}
	tile_copy(&C[by * BLOCK_M][bx * BLOCK_N], acc);
}
