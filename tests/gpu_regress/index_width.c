/* Offsets into a tensor that can pass 2^31 elements are 64-bit, into one
 * proven small they stay int (index_width.c).  The pipelined copy's step
 * down B in gemm, BLOCK_K * N, was an int product: on the H200 gemm with
 * N = 2^31 / 64 gave NaN everywhere.  Y[j] = W[1][j] + sum_k B[k][j].
 * shape: K=100,N=130
 * shape: K=7,N=64
 * expect-cuda: B \+ \(\(size_t\)\(k_next \* BLOCK_K\) \* N
 * reject-cuda: W \+ \(\(size_t\)
 * expect-hip: B \+ \(\(size_t\)\(k \* BLOCK_K\) \* N
 * reject-hip: W \+ \(\(size_t\)
 * (The strided step itself, (long long)BLOCK_K * N, is in the golden
 * gemm.cuda.cu.)
 */
#include <tilec.h>

TILE_PARAM(BLOCK_K, 16, 16, 32);

TILE_KERNEL void
index_width(int K, int N, const f32 B[K][N], const f32 W[4][64], f32 Y[N])
{
	tile_threads(128);
	int bx = tile_grid_x(ceildiv(N, 64));

	tile_shared f32 bs[BLOCK_K][64];
	tile_fragment f32 w[4][64];
	tile_fragment f32 acc[64];

	tile_copy(w, &W[0][0]);
	tile_clear(acc);
	tile_pipelined(k, ceildiv(K, BLOCK_K), 2) {
		tile_copy(bs, &B[k * BLOCK_K][bx * 64]);
		tile_reduce_sum(acc, bs, 0, TILE_ACCUMULATE);
	}
	tile_parallel(j, 64)
		acc[j] = acc[j] + w[1][j];
	tile_copy(&Y[bx * 64], acc);
}
