/* Many small GEMMs in one launch: C[b] = A[b] B[b] for every batch entry
 * b (a grid z of BATCH), f16 operands, f32 results.  The matrices are
 * small and ragged (M, N, K from 1 to a few tiles), so most blocks see
 * edges; the copies cover dims 1 and 2 of the rank-3 tensors.
 * shape: BATCH=7,M=50,N=70,K=33
 * shape: BATCH=20,M=16,N=16,K=16
 * shape: BATCH=1,M=1,N=1,K=1
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 64);
TILE_PARAM(BLOCK_N, 64);
TILE_PARAM(BLOCK_K, 32);

TILE_KERNEL void
batched_gemm(int BATCH, int M, int N, int K, const f16 A[BATCH][M][K],
	     const f16 B[BATCH][K][N], f32 C[BATCH][M][N])
{
	tile_threads(128);
	int bn = tile_grid_x(ceildiv(N, BLOCK_N));
	int bm = tile_grid_y(ceildiv(M, BLOCK_M));
	int z = tile_grid_z(BATCH);

	tile_shared f16 as[BLOCK_M][BLOCK_K];
	tile_shared f16 bs[BLOCK_K][BLOCK_N];
	tile_fragment f32 acc[BLOCK_M][BLOCK_N];

	tile_clear(acc);
	tile_pipelined(k, ceildiv(K, BLOCK_K), 2) {
		tile_copy(as, &A[z][bm * BLOCK_M][k * BLOCK_K]);
		tile_copy(bs, &B[z][k * BLOCK_K][bn * BLOCK_N]);
		tile_gemm(acc, as, bs);
	}
	tile_copy(&C[z][bm * BLOCK_M][bn * BLOCK_N], acc);
}
