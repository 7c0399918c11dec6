/*
 * samples/gemm.c with the copy into As repeated inside the pipelined loop:
 * the fast loop sets up one strided copy per tile_copy, and each gets its
 * own name (As_copy, As_copy_; they were once both As_copy).  Both
 * shapes: the second has whole 16-byte rows, so the fast loop runs.
 * shape: M=100,N=130,K=70
 * shape: M=136,N=264,K=136
 * expect-cuda: tilec::G2S<.*> As_copy_\(
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
		tile_copy(As, &A[by * BLOCK_M][k * BLOCK_K]);
		tile_copy(Bs, &B[k * BLOCK_K][bx * BLOCK_N]);
		tile_gemm(acc, As, Bs);
	}
	tile_copy(&C[by * BLOCK_M][bx * BLOCK_N], acc);
}
