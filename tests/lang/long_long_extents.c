/* Tensor extents that are long long parameters: every ragged copy's
 * count is min(tile extent, shape - origin), an int against a long
 * long, which C++'s min overloads refused as ambiguous (the CUDA output
 * did not compile).  A gemm, a row reduction and a ragged element copy.
 * shape: M=37,N=50,K=29
 * shape: M=64,N=64,K=64
 */
#include <tilec.h>

TILE_PARAM(BM, 32);
TILE_PARAM(BN, 32);
TILE_PARAM(BK, 32);
TILE_KERNEL void
long_long_extents(long long M, long long N, long long K, const f16 A[M][K],
		  const f16 B[K][N], f32 C[M][N], f32 S[M])
{
	tile_threads(128);
	int bx = tile_grid_x(ceildiv((i32)N, BN));
	int by = tile_grid_y(ceildiv((i32)M, BM));
	tile_shared f16 As[BM][BK];
	tile_shared f16 Bs[BK][BN];
	tile_fragment f32 acc[BM][BN];
	tile_fragment f32 s[BM];
	tile_clear(acc);
	tile_pipelined(k, ceildiv((i32)K, BK), 2) {
		tile_copy(As, &A[by * BM][k * BK]);
		tile_copy(Bs, &B[k * BK][bx * BN]);
		tile_gemm(acc, As, Bs);
	}
	tile_copy(&C[by * BM][bx * BN], acc);
	tile_reduce_sum(s, acc, 1);
	if (bx == 0)
		tile_copy(&S[by * BM], s);
}
