/*
 * gemm_f32.c - C = A * B in fp32 throughout.
 *
 * The structure of gemm.c with fp32 operands: each block computes a
 * BLOCK_M x BLOCK_N tile of C, staging BLOCK_K-wide slices of A and B
 * through shared memory.  On the CPU the block is one thread's work and the
 * slices stay in its L2; tools/bench_cpu.sh binds larger tiles there
 * (-D BLOCK_M=256 -D BLOCK_N=256 -D BLOCK_K=128) and compares with OpenBLAS.
 * M, N and K are dynamic and need not be multiples of the tile.
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 128, 64, 128, 256);
TILE_PARAM(BLOCK_N, 128, 64, 128, 256);
TILE_PARAM(BLOCK_K, 32, 16, 32, 64, 128);
TILE_PARAM(STAGES, 3, 2, 3, 4);

TILE_KERNEL void
gemm_f32(int M, int N, int K, const f32 A[M][K], const f32 B[K][N],
	 f32 C[M][N])
{
	tile_threads(128);
	int bx = tile_grid_x(ceildiv(N, BLOCK_N));
	int by = tile_grid_y(ceildiv(M, BLOCK_M));

	tile_shared f32 As[BLOCK_M][BLOCK_K];
	tile_shared f32 Bs[BLOCK_K][BLOCK_N];
	tile_fragment f32 acc[BLOCK_M][BLOCK_N];

	tile_clear(acc);
	tile_pipelined(k, ceildiv(K, BLOCK_K), STAGES) {
		tile_copy(As, &A[by * BLOCK_M][k * BLOCK_K]);
		tile_copy(Bs, &B[k * BLOCK_K][bx * BLOCK_N]);
		tile_gemm(acc, As, Bs);
	}
	tile_copy(&C[by * BLOCK_M][bx * BLOCK_N], acc);
}
