/*
 * softmax.c - row softmax: Y[i][j] = exp(X[i][j] - max_i) / sum_i.
 *
 * Each block owns BLOCK_M rows and walks them in BLOCK_N-wide chunks twice:
 * the first pass keeps a running maximum and a running sum rescaled as the
 * maximum grows (online softmax), the second writes the normalized values.
 * Columns past N are masked to -inf so they add nothing to the sum.
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 4, 1, 2, 4, 8);
TILE_PARAM(BLOCK_N, 1024, 256, 512, 1024, 2048);

TILE_KERNEL void
softmax(int M, int N, const f32 X[M][N], f32 Y[M][N])
{
	tile_threads(128);
	int bm = tile_grid_x(ceildiv(M, BLOCK_M));

	tile_fragment f32 x[BLOCK_M][BLOCK_N];
	tile_fragment f32 row_max[BLOCK_M], chunk_max[BLOCK_M];
	tile_fragment f32 row_sum[BLOCK_M];

	tile_fill(row_max, -INFINITY);
	tile_clear(row_sum);
	for (int n0 = 0; n0 < N; n0 += BLOCK_N) {
		tile_copy(x, &X[bm * BLOCK_M][n0]);
		tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N) {
			if (n0 + j >= N)
				x[i][j] = -INFINITY;
		}
		tile_reduce_max(chunk_max, x, 1);
		tile_parallel(i, BLOCK_M) {
			float m = fmaxf(row_max[i], chunk_max[i]);
			row_sum[i] *= expf(row_max[i] - m);
			row_max[i] = m;
		}
		tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
			x[i][j] = expf(x[i][j] - row_max[i]);
		tile_reduce_sum(row_sum, x, 1, TILE_ACCUMULATE);
	}
	for (int n0 = 0; n0 < N; n0 += BLOCK_N) {
		tile_copy(x, &X[bm * BLOCK_M][n0]);
		tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
			x[i][j] = expf(x[i][j] - row_max[i]) / row_sum[i];
		tile_copy(&Y[bm * BLOCK_M][n0], x);
	}
}
