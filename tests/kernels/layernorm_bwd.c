/* LayerNorm backward, the input gradient.  With xhat = (x - mean) * rstd
 * and g = gamma * dy over one row of N, dx = rstd * (g - mean(g) - xhat *
 * mean(g * xhat)); mean and rstd are the forward pass's (here random
 * inputs: the formula is checked, not the statistics).  Each block takes
 * BLOCK_M rows and walks them in BLOCK_N-column chunks twice: first the
 * two row sums (accumulating reduces), then dx.  Columns past N read as
 * zeros, so they add nothing to either sum.
 * shape: M=100,N=300
 * shape: M=7,N=1000
 * shape: M=1,N=1
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 4);
TILE_PARAM(BLOCK_N, 256);

TILE_KERNEL void
layernorm_bwd(int M, int N, const f16 X[M][N], const f16 dY[M][N],
	      const f32 gamma[N], const f32 mean[M], const f32 rstd[M],
	      f16 dX[M][N])
{
	tile_threads(128);
	int bm = tile_grid_x(ceildiv(M, BLOCK_M));

	tile_shared f32 mu[BLOCK_M];
	tile_shared f32 rs[BLOCK_M];
	tile_shared f32 sum_g[BLOCK_M];
	tile_shared f32 sum_gx[BLOCK_M];
	tile_fragment f32 x[BLOCK_M][BLOCK_N];
	tile_fragment f32 dy[BLOCK_M][BLOCK_N];
	tile_fragment f32 g[BLOCK_N];
	tile_fragment f32 a[BLOCK_M][BLOCK_N];
	tile_fragment f32 b[BLOCK_M][BLOCK_N];

	tile_copy(mu, &mean[bm * BLOCK_M]);
	tile_copy(rs, &rstd[bm * BLOCK_M]);
	tile_clear(sum_g);
	tile_clear(sum_gx);
	for (int c = 0; c < ceildiv(N, BLOCK_N); c++) {
		tile_copy(x, &X[bm * BLOCK_M][c * BLOCK_N]);
		tile_copy(dy, &dY[bm * BLOCK_M][c * BLOCK_N]);
		tile_copy(g, &gamma[c * BLOCK_N]);
		tile_parallel(i, BLOCK_M) {
			tile_parallel(j, BLOCK_N) {
				float gd = g[j] * dy[i][j];
				a[i][j] = gd;
				b[i][j] = gd * (x[i][j] - mu[i]) * rs[i];
			}
		}
		tile_reduce_sum(sum_g, a, 1, TILE_ACCUMULATE);
		tile_reduce_sum(sum_gx, b, 1, TILE_ACCUMULATE);
	}
	for (int c = 0; c < ceildiv(N, BLOCK_N); c++) {
		tile_copy(x, &X[bm * BLOCK_M][c * BLOCK_N]);
		tile_copy(dy, &dY[bm * BLOCK_M][c * BLOCK_N]);
		tile_copy(g, &gamma[c * BLOCK_N]);
		tile_parallel(i, BLOCK_M) {
			float mg = sum_g[i] / N;
			float mgx = sum_gx[i] / N;
			tile_parallel(j, BLOCK_N) {
				float xhat = (x[i][j] - mu[i]) * rs[i];
				a[i][j] = rs[i] * (g[j] * dy[i][j] - mg - xhat * mgx);
			}
		}
		tile_copy(&dX[bm * BLOCK_M][c * BLOCK_N], a);
	}
}
