/* Row reductions of integer tiles into float vectors: each element is
 * converted to the destination's type, then reduced: an i8 gemm's i32
 * accumulator summed per row into f32, an i8 tile's absmax per row
 * accumulated into f16.  Each reduction stands alone (no row run fuses
 * it), where the CPU once handed the integer rows to its float helpers.
 * Integers in -100 .. 100, so the conversions are exact.
 * shape: M=20,N=13,K=3
 * shape: M=37,N=64,K=40
 * run: --range A=-100:100,B=-100:100,X=-100:100
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 16);
TILE_PARAM(BLOCK_N, 64);
TILE_PARAM(BLOCK_K, 64);
TILE_KERNEL void
reduce_int_rows(int M, int N, int K, const i8 A[M][K], const i8 B[N][K],
		const i8 X[M][N], f32 S[M], f16 H[M])
{
	tile_threads(128);
	int by = tile_grid_y(ceildiv(M, BLOCK_M));
	tile_shared i8 As[BLOCK_M][BLOCK_K];
	tile_shared i8 Bs[BLOCK_N][BLOCK_K];
	tile_fragment i32 acc[BLOCK_M][BLOCK_N];
	tile_fragment i8 x[BLOCK_M][BLOCK_N];
	tile_fragment f32 s[BLOCK_M];
	tile_fragment f16 h[BLOCK_M];
	tile_clear(acc);
	tile_copy(As, &A[by * BLOCK_M][0]);
	tile_copy(Bs, &B[0][0]);
	tile_gemm(acc, As, Bs, TILE_TRANS_B);
	tile_reduce_sum(s, acc, 1);
	tile_copy(&S[by * BLOCK_M], s);
	tile_copy(x, &X[by * BLOCK_M][0]);
	tile_fill(h, 1.0f);
	tile_gemm(acc, As, Bs, TILE_TRANS_B);
	tile_reduce_absmax(h, x, 1, TILE_ACCUMULATE);
	tile_copy(&H[by * BLOCK_M], h);
}
