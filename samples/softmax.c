/*
 * softmax.c - row softmax: Y[i][j] = exp(X[i][j] - max_i) / sum_i.
 *
 * Each block owns BLOCK_M rows and walks them in BLOCK_N-wide chunks twice.
 * The first pass keeps a running maximum and a running sum rescaled as the
 * maximum grows (online softmax); columns past N are masked to -inf so they
 * add nothing.  The second pass writes the normalized values, walking the
 * chunks backwards: the last chunk's exponentials, still in e, are already
 * taken against the final maximum, so a row that fits one chunk is read once
 * and exponentiated once.
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 1, 1, 2, 4, 8);
TILE_PARAM(BLOCK_N, 4096, 256, 512, 1024, 2048, 4096);
TILE_PARAM(THREADS, 128, 128, 256, 512);

TILE_KERNEL void
softmax(int M, int N, const f32 X[M][N], f32 Y[M][N])
{
	tile_threads(THREADS);
	int bm = tile_grid_x(ceildiv(M, BLOCK_M));
	int chunks = ceildiv(N, BLOCK_N);

	tile_fragment f32 x[BLOCK_M][BLOCK_N], e[BLOCK_M][BLOCK_N];
	tile_fragment f32 row_max[BLOCK_M], chunk_max[BLOCK_M];
	tile_fragment f32 row_sum[BLOCK_M];

	tile_fill(row_max, -INFINITY);
	tile_clear(row_sum);
	for (int c = 0; c < chunks; c++) {
		tile_copy(x, &X[bm * BLOCK_M][c * BLOCK_N]);
		tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N) {
			if (c * BLOCK_N + j >= N)
				x[i][j] = -INFINITY;
		}
		tile_reduce_max(chunk_max, x, 1);
		tile_parallel(i, BLOCK_M) {
			float m = fmaxf(row_max[i], chunk_max[i]);
			row_sum[i] *= expf(row_max[i] - m);
			row_max[i] = m;
		}
		tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
			e[i][j] = expf(x[i][j] - row_max[i]);
		tile_reduce_sum(row_sum, e, 1, TILE_ACCUMULATE);
	}
	tile_parallel(i, BLOCK_M)
		row_sum[i] = 1.0f / row_sum[i];
	for (int r = 0; r < chunks; r++) {
		int n0 = (chunks - 1 - r) * BLOCK_N;
		if (r > 0) {
			tile_copy(x, &X[bm * BLOCK_M][n0]);
			tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
				e[i][j] = expf(x[i][j] - row_max[i]);
		}
		tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
			e[i][j] *= row_sum[i];
		tile_copy(&Y[bm * BLOCK_M][n0], e);
	}
}
