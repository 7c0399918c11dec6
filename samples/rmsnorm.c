/*
 * rmsnorm.c - Y[i][j] = X[i][j] / sqrt(mean_j(X[i][j]^2) + eps) * W[j].
 *
 * fp16 in and out, fp32 arithmetic.  Each block owns BLOCK_M rows; the first
 * pass accumulates sums of squares (columns past N read as zero and add
 * nothing), the second scales and writes.
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 4, 1, 2, 4, 8);
TILE_PARAM(BLOCK_N, 1024, 256, 512, 1024, 2048);

TILE_KERNEL void
rmsnorm(int M, int N, float eps, const f16 X[M][N], const f16 W[N],
	f16 Y[M][N])
{
	tile_threads(128);
	int bm = tile_grid_x(ceildiv(M, BLOCK_M));

	tile_fragment f32 x[BLOCK_M][BLOCK_N];
	tile_fragment f32 w[BLOCK_N];
	tile_fragment f32 inv_rms[BLOCK_M];

	tile_clear(inv_rms);
	for (int n0 = 0; n0 < N; n0 += BLOCK_N) {
		tile_copy(x, &X[bm * BLOCK_M][n0]);
		tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
			x[i][j] = x[i][j] * x[i][j];
		tile_reduce_sum(inv_rms, x, 1, TILE_ACCUMULATE);
	}
	tile_parallel(i, BLOCK_M)
		inv_rms[i] = rsqrtf(inv_rms[i] / (float)N + eps);
	for (int n0 = 0; n0 < N; n0 += BLOCK_N) {
		tile_copy(x, &X[bm * BLOCK_M][n0]);
		tile_copy(w, &W[n0]);
		tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
			x[i][j] = x[i][j] * inv_rms[i] * w[j];
		tile_copy(&Y[bm * BLOCK_M][n0], x);
	}
}
