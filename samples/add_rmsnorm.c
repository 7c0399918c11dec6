/*
 * add_rmsnorm.c - the residual add fused with RMSNorm, as a transformer
 * layer runs it between blocks:
 *
 *     H[i][j] = X[i][j] + R[i][j]                      (the new residual)
 *     Y[i][j] = H[i][j] / sqrt(mean_j(H[i][j]^2) + eps) * W[j]
 *
 * fp16 in and out, fp32 arithmetic.  The sum is rounded to fp16 once, as
 * it is stored in H, and the statistics are taken over that rounded
 * value, so Y is exactly the RMSNorm of the residual the next layer reads.
 * Each block owns BLOCK_M rows and walks them in BLOCK_N-wide chunks: the
 * first pass adds, writes H and accumulates the sums of squares (columns
 * past N read as zero and add nothing); the second scales and writes Y,
 * walking the chunks backwards so that it starts with the chunk the first
 * pass left in h: a row that fits one chunk reads X and R once and never
 * reads H back.  Longer rows add the chunks again rather than read H,
 * which other threads of the block wrote.
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 1, 1, 2, 4);
TILE_PARAM(BLOCK_N, 4096, 1024, 2048, 4096, 8192);
TILE_PARAM(THREADS, 256, 128, 256, 512, 1024);

TILE_KERNEL void
add_rmsnorm(int M, int N, float eps, const f16 X[M][N], const f16 R[M][N],
	    const f16 W[N], f16 H[M][N], f16 Y[M][N])
{
	tile_threads(THREADS);
	int bm = tile_grid_x(ceildiv(M, BLOCK_M));
	int chunks = ceildiv(N, BLOCK_N);

	tile_fragment f32 x[BLOCK_M][BLOCK_N];
	tile_fragment f32 r[BLOCK_M][BLOCK_N];
	tile_fragment f16 h[BLOCK_M][BLOCK_N];
	tile_fragment f32 sq[BLOCK_M][BLOCK_N];
	tile_fragment f32 w[BLOCK_N];
	tile_fragment f32 inv_rms[BLOCK_M];

	tile_clear(inv_rms);
	for (int c = 0; c < chunks; c++) {
		tile_copy(x, &X[bm * BLOCK_M][c * BLOCK_N]);
		tile_copy(r, &R[bm * BLOCK_M][c * BLOCK_N]);
		tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
			h[i][j] = x[i][j] + r[i][j];
		tile_copy(&H[bm * BLOCK_M][c * BLOCK_N], h);
		tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
			sq[i][j] = (float)h[i][j] * (float)h[i][j];
		tile_reduce_sum(inv_rms, sq, 1, TILE_ACCUMULATE);
	}
	tile_parallel(i, BLOCK_M)
		inv_rms[i] = rsqrtf(inv_rms[i] / (float)N + eps);
	for (int k = 0; k < chunks; k++) {
		int n0 = (chunks - 1 - k) * BLOCK_N;
		if (k > 0) {
			tile_copy(x, &X[bm * BLOCK_M][n0]);
			tile_copy(r, &R[bm * BLOCK_M][n0]);
			tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
				h[i][j] = x[i][j] + r[i][j];
		}
		tile_copy(w, &W[n0]);
		tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
			x[i][j] = (float)h[i][j] * inv_rms[i] * w[j];
		tile_copy(&Y[bm * BLOCK_M][n0], x);
	}
}
