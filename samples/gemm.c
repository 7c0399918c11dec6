/*
 * gemm.c - C = A * B with fp32 accumulation, fp16 inputs and output.
 *
 * Each block computes a BLOCK_M x BLOCK_N tile of C.  The k loop stages
 * BLOCK_K-wide slices of A and B through shared memory; the compiler
 * pipelines those copies STAGES deep and picks the matrix instructions.
 * Blocks run in groups of 8 block rows so that the A and B tiles a group
 * needs stay in L2.
 * M, N and K are dynamic and need not be multiples of the tile.
 * The defaults, 128 x 256 tiles, 64 deep, two stages on 8 warps (96 KiB of
 * shared memory, which every GPU from sm_80 on has), are within 1% of the
 * H200's tuned choice (samples/tuned/gemm.cuda.sm_90a.json: three stages).
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 128, 64, 128, 256);
TILE_PARAM(BLOCK_N, 256, 64, 128, 256);
TILE_PARAM(BLOCK_K, 64, 32, 64);
TILE_PARAM(STAGES, 2, 2, 3, 4);
TILE_PARAM(THREADS, 256, 128, 256);

TILE_KERNEL void
gemm(int M, int N, int K, const f16 A[M][K], const f16 B[K][N], f16 C[M][N])
{
	tile_threads(THREADS);
	int bx = tile_grid_x(ceildiv(N, BLOCK_N));
	int by = tile_grid_y(ceildiv(M, BLOCK_M));
	tile_rasterize(8);

	tile_shared f16 As[BLOCK_M][BLOCK_K];
	tile_shared f16 Bs[BLOCK_K][BLOCK_N];
	tile_fragment f32 acc[BLOCK_M][BLOCK_N];

	tile_clear(acc);
	tile_pipelined(k, ceildiv(K, BLOCK_K), STAGES) {
		tile_copy(As, &A[by * BLOCK_M][k * BLOCK_K]);
		tile_copy(Bs, &B[k * BLOCK_K][bx * BLOCK_N]);
		tile_gemm(acc, As, Bs);
	}
	tile_copy(&C[by * BLOCK_M][bx * BLOCK_N], acc);
}
