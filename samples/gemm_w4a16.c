/*
 * gemm_w4a16.c - a GEMM with int4 weights dequantized on the fly (W4A16,
 * GPTQ/AWQ-style weight-only quantization with a scale and a zero point
 * per group):
 *
 *     C[m][n] = sum_k A[m][k] * ((W[n][k] - Z[k / GROUP][n]) * S[k / GROUP][n])
 *
 * A is fp16 activations, M x K.  W is the signed 4-bit weights, -8 .. 7,
 * stored [N][K] as a linear layer stores them: an `i4` tensor, two to a
 * byte with the even k in the low nibble.  S and Z hold one fp16 scale and
 * one fp16 zero point per GROUP consecutive weights of a row, stored
 * [K / GROUP][N] as AWQ and GPTQ store them; C is fp16, with fp32
 * accumulation.  Each k step copies the packed weights into an i4 tile
 * (they stay packed, half a byte each, and the copy moves bytes) and the
 * row of scales and of zeros of their group (BLOCK_K divides GROUP, so a
 * step lies in one group), all of them issued ahead in the pipeline
 * where the target copies asynchronously; it dequantizes the tile to fp16
 * in shared memory, each nibble unpacked as it is read, and runs the
 * tensor-core gemm against it.  The weights cross memory at half a byte
 * each, which is what bounds decode-sized M.  K must be a multiple of
 * GROUP.  The scales and zeros sit in shared memory beside the tile they
 * dequantize: the dequantizing nest touches shared buffers only, so the
 * compiler spreads it over every thread.
 */
#include <tilec.h>

TILE_PARAM(GROUP, 128);
TILE_PARAM(BLOCK_M, 16, 16, 32, 64, 128);
TILE_PARAM(BLOCK_N, 128, 64, 128, 256);
TILE_PARAM(BLOCK_K, 64, 32, 64, 128);
TILE_PARAM(STAGES, 3, 2, 3, 4);
TILE_PARAM(THREADS, 128, 128, 256);

TILE_KERNEL void
gemm_w4a16(int M, int N, int K, const f16 A[M][K], const i4 W[N][K],
	   const f16 S[K / GROUP][N], const f16 Z[K / GROUP][N], f16 C[M][N])
{
	tile_threads(THREADS);
	int bx = tile_grid_x(ceildiv(N, BLOCK_N));
	int by = tile_grid_y(ceildiv(M, BLOCK_M));

	tile_shared f16 As[BLOCK_M][BLOCK_K];
	tile_shared i4 Ws4[BLOCK_N][BLOCK_K];
	tile_shared f16 Ws[BLOCK_N][BLOCK_K];
	tile_shared f16 scale[BLOCK_N];
	tile_shared f16 zero[BLOCK_N];
	tile_fragment f32 acc[BLOCK_M][BLOCK_N];

	tile_clear(acc);
	tile_pipelined(k, ceildiv(K, BLOCK_K), STAGES) {
		tile_copy(As, &A[by * BLOCK_M][k * BLOCK_K]);
		tile_copy(Ws4, &W[bx * BLOCK_N][k * BLOCK_K]);
		tile_copy(scale, &S[k * BLOCK_K / GROUP][bx * BLOCK_N]);
		tile_copy(zero, &Z[k * BLOCK_K / GROUP][bx * BLOCK_N]);
		tile_parallel(n, BLOCK_N) tile_parallel(j, BLOCK_K)
			Ws[n][j] = ((float)Ws4[n][j] - zero[n]) * scale[n];
		tile_gemm(acc, As, Ws, TILE_TRANS_B);
	}
	tile_copy(&C[by * BLOCK_M][bx * BLOCK_N], acc);
}
