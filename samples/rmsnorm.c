/*
 * rmsnorm.c - Y[i][j] = X[i][j] / sqrt(mean_j(X[i][j]^2) + eps) * W[j].
 *
 * fp16 in and out, fp32 arithmetic.  Each block owns BLOCK_M rows and walks
 * them in BLOCK_N-wide chunks: the first pass accumulates sums of squares
 * (columns past N read as zero and add nothing), the second scales and
 * writes.  The second pass walks the chunks backwards so that it starts with
 * the chunk the first pass left in x: a row that fits one chunk is read from
 * memory once.
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 1, 1, 2, 4, 8);
TILE_PARAM(BLOCK_N, 4096, 256, 512, 1024, 2048, 4096);
TILE_PARAM(THREADS, 128, 128, 256, 512);

TILE_KERNEL void
rmsnorm(int M, int N, float eps, const f16 X[M][N], const f16 W[N],
	f16 Y[M][N])
{
	tile_threads(THREADS);
	int bm = tile_grid_x(ceildiv(M, BLOCK_M));
	int chunks = ceildiv(N, BLOCK_N);

	tile_fragment f32 x[BLOCK_M][BLOCK_N];
	tile_fragment f32 sq[BLOCK_M][BLOCK_N];
	tile_fragment f32 w[BLOCK_N];
	tile_fragment f32 inv_rms[BLOCK_M];

	tile_clear(inv_rms);
	for (int c = 0; c < chunks; c++) {
		tile_copy(x, &X[bm * BLOCK_M][c * BLOCK_N]);
		tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
			sq[i][j] = x[i][j] * x[i][j];
		tile_reduce_sum(inv_rms, sq, 1, TILE_ACCUMULATE);
	}
	tile_parallel(i, BLOCK_M)
		inv_rms[i] = rsqrtf(inv_rms[i] / (float)N + eps);
	for (int r = 0; r < chunks; r++) {
		int n0 = (chunks - 1 - r) * BLOCK_N;
		if (r > 0)
			tile_copy(x, &X[bm * BLOCK_M][n0]);
		tile_copy(w, &W[n0]);
		tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
			x[i][j] = x[i][j] * inv_rms[i] * w[j];
		tile_copy(&Y[bm * BLOCK_M][n0], x);
	}
}
