/*
 * gemm_w4a16_splitk.c - the W4A16 GEMM of gemm_w4a16.c with the k
 * dimension split across blocks, for decode-sized M:
 *
 *     C[m][n] += sum_k A[m][k] * ((W[n][k] - Z[k / GROUP][n]) * S[k / GROUP][n])
 *
 * At M = 1..16 the product is bound by reading the int4 weights, half a
 * byte each, and one block per BLOCK_N columns is too few blocks to do
 * it: N = 8192 makes 64 of them for 132 multiprocessors, each streaming
 * its whole K.  Here SPLIT_K blocks share a column block, each summing a
 * contiguous range of BLOCK_K slices (whole groups, as BLOCK_K divides
 * GROUP), and they add their partial tiles into C with tile_atomic_add.
 * So C is fp32, read and written: it must hold the starting values (zero
 * for a plain product); the order of the additions is not fixed, so
 * results vary in the last bits from run to run.  Each slice is copied
 * and dequantized as in gemm_w4a16.c, but the zero points are 4-bit
 * integers, as GPTQ and AWQ store them (their unsigned nibbles less 8,
 * like the weights'): W - Z is then an integer of at most 4 bits and its
 * product with an fp16 scale is exact in f32, so the value rounded once
 * to fp16 is what half-precision arithmetic gives, and on CUDA the
 * compiler dequantizes two weights an instruction
 * (docs/backend-cuda.md, "Half pairs"), bit for bit the program's result.
 * K must be a multiple of GROUP.
 */
#include <tilec.h>

TILE_PARAM(GROUP, 128);
TILE_PARAM(BLOCK_M, 16, 16, 32, 64);
TILE_PARAM(BLOCK_N, 64, 64, 128, 256);
TILE_PARAM(BLOCK_K, 128, 64, 128);
TILE_PARAM(SPLIT_K, 16, 4, 8, 16, 32);
TILE_PARAM(STAGES, 3, 2, 3, 4);
TILE_PARAM(THREADS, 128, 128, 256);

TILE_KERNEL void
gemm_w4a16_splitk(int M, int N, int K, const f16 A[M][K], const i4 W[N][K],
		  const f16 S[K / GROUP][N], const i4 Z[K / GROUP][N],
		  f32 C[M][N])
{
	tile_threads(THREADS);
	int bx = tile_grid_x(ceildiv(N, BLOCK_N));
	int by = tile_grid_y(ceildiv(M, BLOCK_M));
	int split = tile_grid_z(SPLIT_K);

	tile_shared f16 As[BLOCK_M][BLOCK_K];
	tile_shared i4 Ws4[BLOCK_N][BLOCK_K];
	tile_shared f16 Ws[BLOCK_N][BLOCK_K];
	tile_shared f16 scale[BLOCK_N];
	tile_shared i4 zero[BLOCK_N];
	tile_fragment f32 acc[BLOCK_M][BLOCK_N];

	int k_tiles = ceildiv(K, BLOCK_K);
	int per_split = ceildiv(k_tiles, SPLIT_K);
	int k0 = split * per_split;
	int steps = max(0, min(per_split, k_tiles - k0));

	tile_clear(acc);
	tile_pipelined(s, steps, STAGES) {
		int k = k0 + s;
		tile_copy(As, &A[by * BLOCK_M][k * BLOCK_K]);
		tile_copy(Ws4, &W[bx * BLOCK_N][k * BLOCK_K]);
		tile_copy(scale, &S[k * BLOCK_K / GROUP][bx * BLOCK_N]);
		tile_copy(zero, &Z[k * BLOCK_K / GROUP][bx * BLOCK_N]);
		tile_parallel(n, BLOCK_N) tile_parallel(j, BLOCK_K)
			Ws[n][j] = ((float)Ws4[n][j] - zero[n]) * scale[n];
		tile_gemm(acc, As, Ws, TILE_TRANS_B);
	}
	tile_atomic_add(&C[by * BLOCK_M][bx * BLOCK_N], acc);
}
