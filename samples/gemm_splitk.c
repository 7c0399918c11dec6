/*
 * gemm_splitk.c - C += A * B with the k dimension split across blocks.
 *
 * fp32.  When M and N are small and K is long, one block per C tile leaves
 * most of the machine idle; here SPLIT_K blocks share each tile, every one
 * summing its own contiguous range of k slices, and they add their partial
 * tiles into C with tile_atomic_add.  C must hold the starting values (zero
 * for a plain product); the order of the additions is not fixed, so
 * results vary in the last bits from run to run.
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 64, 32, 64, 128);
TILE_PARAM(BLOCK_N, 64, 32, 64, 128);
TILE_PARAM(BLOCK_K, 64, 32, 64, 128);
TILE_PARAM(SPLIT_K, 4, 2, 4, 8);

TILE_KERNEL void
gemm_splitk(int M, int N, int K, const f32 A[M][K], const f32 B[K][N],
	    f32 C[M][N])
{
	tile_threads(128);
	int bx = tile_grid_x(ceildiv(N, BLOCK_N));
	int by = tile_grid_y(ceildiv(M, BLOCK_M));
	int split = tile_grid_z(SPLIT_K);

	tile_shared f32 As[BLOCK_M][BLOCK_K];
	tile_shared f32 Bs[BLOCK_K][BLOCK_N];
	tile_fragment f32 acc[BLOCK_M][BLOCK_N];

	int k_tiles = ceildiv(K, BLOCK_K);
	int per_split = ceildiv(k_tiles, SPLIT_K);
	int k_end = min(k_tiles, (split + 1) * per_split);

	tile_clear(acc);
	for (int k = split * per_split; k < k_end; k++) {
		tile_copy(As, &A[by * BLOCK_M][k * BLOCK_K]);
		tile_copy(Bs, &B[k * BLOCK_K][bx * BLOCK_N]);
		tile_gemm(acc, As, Bs);
	}
	tile_atomic_add(&C[by * BLOCK_M][bx * BLOCK_N], acc);
}
