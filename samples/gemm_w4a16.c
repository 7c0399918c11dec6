/*
 * gemm_w4a16.c - a GEMM with int4 weights dequantized on the fly (W4A16,
 * GPTQ/AWQ-style weight-only quantization with symmetric groups):
 *
 *     C[m][n] = sum_k A[m][k] * (q(n, k) * S[n][k / GROUP])
 *
 * A is fp16 activations, M x K.  The signed 4-bit weights q(n, k), in
 * -8 .. 7, are stored [N][K] as a linear layer stores them, two to a byte
 * with the even k in the low nibble: WQ[n][k / 2] (the layout of an `i4`
 * tensor, unpacked here by hand because the GPU backends do not take i4
 * tensors yet).  S holds one fp16 scale per GROUP consecutive weights of
 * a row; C is fp16, with fp32 accumulation.  Each k step copies the packed
 * weights and their column of scales (BLOCK_K divides GROUP, so a step
 * lies in one group), dequantizes the tile to fp16 in shared memory and
 * runs the tensor-core gemm against it; the weights cross memory at half a
 * byte each, which is what bounds decode-sized M.  K must be a multiple
 * of GROUP.  The scales sit in shared memory beside the tile they scale:
 * the dequantizing nest touches shared buffers only, so the compiler
 * spreads it over every thread.
 */
#include <tilec.h>

TILE_PARAM(GROUP, 128);
TILE_PARAM(BLOCK_M, 16, 16, 32, 64, 128);
TILE_PARAM(BLOCK_N, 128, 64, 128, 256);
TILE_PARAM(BLOCK_K, 64, 32, 64, 128);
TILE_PARAM(STAGES, 3, 2, 3, 4);
TILE_PARAM(THREADS, 128, 128, 256);

TILE_KERNEL void
gemm_w4a16(int M, int N, int K, const f16 A[M][K], const u8 WQ[N][K / 2],
	   const f16 S[N][K / GROUP], f16 C[M][N])
{
	tile_threads(THREADS);
	int bx = tile_grid_x(ceildiv(N, BLOCK_N));
	int by = tile_grid_y(ceildiv(M, BLOCK_M));

	tile_shared f16 As[BLOCK_M][BLOCK_K];
	tile_shared u8 Qs[BLOCK_N][BLOCK_K / 2];
	tile_shared f16 Ws[BLOCK_N][BLOCK_K];
	tile_shared f32 scale[BLOCK_N];
	tile_fragment f32 acc[BLOCK_M][BLOCK_N];

	tile_clear(acc);
	tile_pipelined(k, ceildiv(K, BLOCK_K), STAGES) {
		tile_copy(As, &A[by * BLOCK_M][k * BLOCK_K]);
		tile_copy(Qs, &WQ[bx * BLOCK_N][k * (BLOCK_K / 2)]);
		tile_copy(scale, tile_dims(&S[bx * BLOCK_N][k * BLOCK_K / GROUP], 0));
		tile_parallel(n, BLOCK_N) tile_parallel(j, BLOCK_K) {
			int nibble = (Qs[n][j / 2] >> (j % 2 * 4)) & 15;
			/* Sign-extend the nibble: 8..15 are -8..-1. */
			Ws[n][j] = (float)((nibble ^ 8) - 8) * scale[n];
		}
		tile_gemm(acc, As, Ws, TILE_TRANS_B);
	}
	tile_copy(&C[by * BLOCK_M][bx * BLOCK_N], acc);
}
