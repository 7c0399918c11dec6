/*
 * gemm_bf16_trans.c - bf16 gemms into f32 with every operand layout: A
 * stored [M][K] or [K][M], B stored [K][N] or [N][K].  On an AMX target
 * each pair of buffers holds bf16 as stored (passes/cpu_gemm.c): A's tiles
 * read in place or packed, B's pairs interleaved from its rows or
 * transposed from its columns, and the edges zero (tests/cpu_gemm.sh,
 * case run, with ragged shapes).
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 64, 32, 64, 128);
TILE_PARAM(BLOCK_N, 64, 32, 64, 128);
TILE_PARAM(BLOCK_K, 64, 32, 64, 128);

TILE_KERNEL void
gemm_nn(int M, int N, int K, const bf16 A[M][K], const bf16 B[K][N],
	f32 C[M][N])
{
	int bx = tile_grid_x(ceildiv(N, BLOCK_N));
	int by = tile_grid_y(ceildiv(M, BLOCK_M));
	tile_shared bf16 As[BLOCK_M][BLOCK_K];
	tile_shared bf16 Bs[BLOCK_K][BLOCK_N];
	tile_fragment f32 acc[BLOCK_M][BLOCK_N];
	tile_clear(acc);
	for (int k = 0; k < ceildiv(K, BLOCK_K); k++) {
		tile_copy(As, &A[by * BLOCK_M][k * BLOCK_K]);
		tile_copy(Bs, &B[k * BLOCK_K][bx * BLOCK_N]);
		tile_gemm(acc, As, Bs);
	}
	tile_copy(&C[by * BLOCK_M][bx * BLOCK_N], acc);
}

TILE_KERNEL void
gemm_tn(int M, int N, int K, const bf16 A[K][M], const bf16 B[K][N],
	f32 C[M][N])
{
	int bx = tile_grid_x(ceildiv(N, BLOCK_N));
	int by = tile_grid_y(ceildiv(M, BLOCK_M));
	tile_shared bf16 As[BLOCK_K][BLOCK_M];
	tile_shared bf16 Bs[BLOCK_K][BLOCK_N];
	tile_fragment f32 acc[BLOCK_M][BLOCK_N];
	tile_clear(acc);
	for (int k = 0; k < ceildiv(K, BLOCK_K); k++) {
		tile_copy(As, &A[k * BLOCK_K][by * BLOCK_M]);
		tile_copy(Bs, &B[k * BLOCK_K][bx * BLOCK_N]);
		tile_gemm(acc, As, Bs, TILE_TRANS_A);
	}
	tile_copy(&C[by * BLOCK_M][bx * BLOCK_N], acc);
}

TILE_KERNEL void
gemm_tt(int M, int N, int K, const bf16 A[K][M], const bf16 B[N][K],
	f32 C[M][N])
{
	int bx = tile_grid_x(ceildiv(N, BLOCK_N));
	int by = tile_grid_y(ceildiv(M, BLOCK_M));
	tile_shared bf16 As[BLOCK_K][BLOCK_M];
	tile_shared bf16 Bs[BLOCK_N][BLOCK_K];
	tile_fragment f32 acc[BLOCK_M][BLOCK_N];
	tile_clear(acc);
	for (int k = 0; k < ceildiv(K, BLOCK_K); k++) {
		tile_copy(As, &A[k * BLOCK_K][by * BLOCK_M]);
		tile_copy(Bs, &B[bx * BLOCK_N][k * BLOCK_K]);
		tile_gemm(acc, As, Bs, TILE_TRANS_A | TILE_TRANS_B);
	}
	tile_copy(&C[by * BLOCK_M][bx * BLOCK_N], acc);
}
