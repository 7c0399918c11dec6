/* An int8 GEMM with zero points, corrected in the epilogue as
 * asymmetric quantization does: C = sum_k (A - za)(B - zb) = A B^T -
 * zb rowsum(A) - za colsum(B) + K za zb, where the row sums of the A
 * tiles (tile_reduce_sum along dim 1) and of the B tiles (along dim 1
 * of B stored N x K) accumulate in i32 across the k-loop beside the
 * gemm.  Also the column sums of the i32 result (a reduce along dim 0
 * of the accumulator's layout, the padding zeroed first) are added
 * atomically into CS.  All integer, exact.
 * shape: M=70,N=45,K=100,za=3,zb=-7
 * shape: M=1,N=3,K=5,za=-128,zb=127
 * shape: M=64,N=32,K=64,za=0,zb=1
 * run: --range A=-128:127,B=-128:127
 */
#include <tilec.h>

TILE_PARAM(BM, 64);
TILE_PARAM(BN, 32);
TILE_PARAM(BK, 32);

TILE_KERNEL void
gemm_i8_zeropoint(int M, int N, int K, int za, int zb, const i8 A[M][K],
		  const i8 B[N][K], i32 C[M][N], i32 CS[N])
{
	tile_threads(128);
	int bx = tile_grid_x(ceildiv(N, BN));
	int by = tile_grid_y(ceildiv(M, BM));
	tile_shared i8 as[BM][BK], bs[BN][BK];
	tile_fragment i32 acc[BM][BN];
	tile_fragment i32 ra[BM], rb[BN], cs[BN];
	tile_clear(acc);
	tile_clear(ra);
	tile_clear(rb);
	tile_pipelined(k, ceildiv(K, BK), 2) {
		tile_copy(as, &A[by * BM][k * BK]);
		tile_copy(bs, &B[bx * BN][k * BK]);
		tile_gemm(acc, as, bs, TILE_TRANS_B);
		tile_reduce_sum(ra, as, 1, TILE_ACCUMULATE);
		tile_reduce_sum(rb, bs, 1, TILE_ACCUMULATE);
	}
	tile_parallel(i, BM) tile_parallel(j, BN)
		acc[i][j] = by * BM + i < M && bx * BN + j < N ?
			    acc[i][j] - zb * ra[i] - za * rb[j] + K * za * zb : 0;
	tile_copy(&C[by * BM][bx * BN], acc);
	tile_reduce_sum(cs, acc, 0);
	tile_atomic_add(&CS[bx * BN], cs);
}
