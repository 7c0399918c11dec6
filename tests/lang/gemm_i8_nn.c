/* An int8 GEMM on the integer matrix instructions with both operands as
 * they come, A M x K and B K x N: on CUDA, B's k values are four rows
 * apart, so they are gathered a byte at a time (ldmatrix moves 16-bit
 * elements); on HIP they are the column reads.  A plain k loop, a 4 x 2
 * warp grid, and a fused epilogue: each row's int32 sum scaled back to
 * f32 by per-row and per-column scales, as a W8A8 layer dequantizes.
 * The ragged shapes leave partial tiles in M, N and K.
 * shape: M=100,N=70,K=200
 * shape: M=7,N=200,K=31
 * expect-cuda: tilec::mma_ss<
 * expect-hip: tilec::mfma_ss<
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 64);
TILE_PARAM(BLOCK_N, 64);
TILE_PARAM(BLOCK_K, 32);

TILE_KERNEL void
gemm_i8_nn(int M, int N, int K, const i8 A[M][K], const i8 B[K][N],
	   const f32 SA[M], const f32 SB[N], i32 C[M][N], f32 Y[M][N])
{
	tile_threads(256);
	int bx = tile_grid_x(ceildiv(N, BLOCK_N));
	int by = tile_grid_y(ceildiv(M, BLOCK_M));

	tile_shared i8 As[BLOCK_M][BLOCK_K];
	tile_shared i8 Bs[BLOCK_K][BLOCK_N];
	tile_fragment i32 acc[BLOCK_M][BLOCK_N];
	tile_fragment f32 y[BLOCK_M][BLOCK_N];

	tile_clear(acc);
	for (int k = 0; k < ceildiv(K, BLOCK_K); k++) {
		tile_copy(As, &A[by * BLOCK_M][k * BLOCK_K]);
		tile_copy(Bs, &B[k * BLOCK_K][bx * BLOCK_N]);
		tile_gemm(acc, As, Bs);
	}
	tile_copy(&C[by * BLOCK_M][bx * BLOCK_N], acc);
	tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N) {
		int m = min(by * BLOCK_M + i, M - 1);
		int n = min(bx * BLOCK_N + j, N - 1);
		y[i][j] = (float)acc[i][j] * SA[m] * SB[n];
	}
	tile_copy(&Y[by * BLOCK_M][bx * BLOCK_N], y);
}
