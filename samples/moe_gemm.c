/*
 * moe_gemm.c - the grouped GEMM of a mixture-of-experts layer: each
 * expert's rows of X times that expert's weights.
 *
 *     Y[r][n] = sum_k X[r][k] * W[e][n][k]   for the rows r of expert e
 *
 * X holds the routed tokens' activations sorted by expert, T rows in all:
 * expert 0's CNT[0] rows first, then expert 1's, and so on (CNT from the
 * router's top-k; rows past T or past the sum of CNT are neither read nor
 * written).  W is [EXPERTS][N][K], each expert's weights as a linear
 * layer stores them; fp16 in and out, fp32 accumulation.  The grid is
 * (N tiles, M tiles, experts) with enough M tiles for one expert taking
 * every row; a block finds its expert's first row by summing the counts
 * before it and does nothing past the expert's count, so each output row
 * is written by the blocks of exactly one expert.  The last tile of an
 * expert overlaps the next expert's rows: its gemm reads them and its
 * store is guarded element by element (a bounded store of the first
 * `rows` rows would say it directly; a gather copy would read the rows in
 * token order without the sort).
 */
#include <tilec.h>

TILE_PARAM(EXPERTS, 8);
TILE_PARAM(BLOCK_M, 64, 64, 128);
TILE_PARAM(BLOCK_N, 128, 64, 128, 256);
TILE_PARAM(BLOCK_K, 32, 32, 64);
TILE_PARAM(STAGES, 3, 2, 3, 4);
TILE_PARAM(THREADS, 128, 128, 256);

TILE_KERNEL void
moe_gemm(int T, int N, int K, const f16 X[T][K], const i32 CNT[EXPERTS],
	 const f16 W[EXPERTS][N][K], f16 Y[T][N])
{
	tile_threads(THREADS);
	int bx = tile_grid_x(ceildiv(N, BLOCK_N));
	int by = tile_grid_y(ceildiv(T, BLOCK_M));
	int e = tile_grid_z(EXPERTS);

	tile_fragment i32 cnt[EXPERTS], before[EXPERTS];
	tile_shared f16 Xs[BLOCK_M][BLOCK_K];
	tile_shared f16 Ws[BLOCK_N][BLOCK_K];
	tile_fragment f32 acc[BLOCK_M][BLOCK_N];

	tile_copy(cnt, &CNT[0]);
	tile_parallel(j, EXPERTS)
		before[j] = j < e ? cnt[j] : 0;
	int start = tile_sum(before);
	int m0 = start + by * BLOCK_M;
	int rows = min(CNT[e] - by * BLOCK_M, BLOCK_M);
	if (rows > 0 && m0 < T) {
		tile_clear(acc);
		tile_pipelined(k, ceildiv(K, BLOCK_K), STAGES) {
			tile_copy(Xs, &X[m0][k * BLOCK_K]);
			tile_copy(Ws, &W[e][bx * BLOCK_N][k * BLOCK_K]);
			tile_gemm(acc, Xs, Ws, TILE_TRANS_B);
		}
		tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N) {
			int r = m0 + i;
			int n = bx * BLOCK_N + j;
			if (i < rows && r < T && n < N)
				Y[r][n] = acc[i][j];
		}
	}
}
