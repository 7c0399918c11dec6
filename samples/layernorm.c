/*
 * layernorm.c - Y[i][j] = (X[i][j] - mean_i) / sqrt(var_i + eps) * W[j] + B[j].
 *
 * fp16 in and out, fp32 statistics.  Each block owns BLOCK_M rows and makes
 * three passes over them in BLOCK_N-wide chunks: the row sums (for the
 * mean), the sums of squared deviations from the mean (the variance, in two
 * passes so it never cancels), then the normalized, scaled and shifted
 * output.  Columns past N read as zero; the second pass masks them so they
 * add nothing to the variance.
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 4, 1, 2, 4, 8);
TILE_PARAM(BLOCK_N, 1024, 256, 512, 1024, 2048);

TILE_KERNEL void
layernorm(int M, int N, float eps, const f16 X[M][N], const f16 W[N],
	  const f16 B[N], f16 Y[M][N])
{
	tile_threads(128);
	int bm = tile_grid_x(ceildiv(M, BLOCK_M));

	tile_fragment f32 x[BLOCK_M][BLOCK_N];
	tile_fragment f32 w[BLOCK_N], b[BLOCK_N];
	tile_fragment f32 mean[BLOCK_M], rstd[BLOCK_M];

	tile_clear(mean);
	for (int n0 = 0; n0 < N; n0 += BLOCK_N) {
		tile_copy(x, &X[bm * BLOCK_M][n0]);
		tile_reduce_sum(mean, x, 1, TILE_ACCUMULATE);
	}
	tile_parallel(i, BLOCK_M)
		mean[i] = mean[i] / (float)N;

	tile_clear(rstd);
	for (int n0 = 0; n0 < N; n0 += BLOCK_N) {
		tile_copy(x, &X[bm * BLOCK_M][n0]);
		tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N) {
			float d = n0 + j < N ? x[i][j] - mean[i] : 0.0f;
			x[i][j] = d * d;
		}
		tile_reduce_sum(rstd, x, 1, TILE_ACCUMULATE);
	}
	tile_parallel(i, BLOCK_M)
		rstd[i] = rsqrtf(rstd[i] / (float)N + eps);

	for (int n0 = 0; n0 < N; n0 += BLOCK_N) {
		tile_copy(x, &X[bm * BLOCK_M][n0]);
		tile_copy(w, &W[n0]);
		tile_copy(b, &B[n0]);
		tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
			x[i][j] = (x[i][j] - mean[i]) * rstd[i] * w[j] + b[j];
		tile_copy(&Y[bm * BLOCK_M][n0], x);
	}
}
