/*
 * gemm_bf16.c - C = A * B^T with bf16 operands and an fp32 accumulator:
 * on --arch amx the gemm runs on AMX tiles (tdpbf16ps), elsewhere on the
 * f32 micro-kernel over the widened values.  B is stored [N][K], as a
 * linear layer's weights are.
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 64, 32, 64, 128, 256, 512);
TILE_PARAM(BLOCK_N, 64, 32, 64, 128);
TILE_PARAM(BLOCK_K, 64, 32, 64, 128, 256);

TILE_KERNEL void
gemm_bf16(int M, int N, int K, const bf16 A[M][K], const bf16 B[N][K],
	  f32 C[M][N])
{
	int bx = tile_grid_x(ceildiv(N, BLOCK_N));
	int by = tile_grid_y(ceildiv(M, BLOCK_M));

	tile_shared bf16 As[BLOCK_M][BLOCK_K];
	tile_shared bf16 Bs[BLOCK_N][BLOCK_K];
	tile_fragment f32 acc[BLOCK_M][BLOCK_N];

	tile_clear(acc);
	for (int k = 0; k < ceildiv(K, BLOCK_K); k++) {
		tile_copy(As, &A[by * BLOCK_M][k * BLOCK_K]);
		tile_copy(Bs, &B[bx * BLOCK_N][k * BLOCK_K]);
		tile_gemm(acc, As, Bs, TILE_TRANS_B);
	}
	tile_copy(&C[by * BLOCK_M][bx * BLOCK_N], acc);
}
