/* RMSNorm backward.  With y = x * rstd * gamma over a row of N (rstd
 * from the forward pass) and g = gamma * dy: dx = rstd * g - x * rstd^3
 * * mean(g * x), and dgamma = sum over rows of dy * x * rstd.  Each block
 * takes BLOCK_M whole rows (N at most BLOCK_N) and adds its rows' share
 * of dgamma into dG with one atomic add.
 * shape: M=100,N=1000
 * shape: M=3,N=5
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 4);
TILE_PARAM(BLOCK_N, 1024);

TILE_KERNEL void
rmsnorm_bwd(int M, int N, const f16 X[M][N], const f16 dY[M][N],
	    const f32 gamma[N], const f32 rstd[M], f16 dX[M][N], f32 dG[N])
{
	tile_threads(256);
	int bm = tile_grid_x(ceildiv(M, BLOCK_M));

	tile_fragment f32 x[BLOCK_M][BLOCK_N];
	tile_fragment f32 dy[BLOCK_M][BLOCK_N];
	tile_fragment f32 gx[BLOCK_M][BLOCK_N];
	tile_fragment f32 g[BLOCK_N];
	tile_fragment f32 dg[BLOCK_N];
	tile_shared f32 rs[BLOCK_M];
	tile_shared f32 dot[BLOCK_M];

	tile_copy(x, &X[bm * BLOCK_M][0]);
	tile_copy(dy, &dY[bm * BLOCK_M][0]);
	tile_copy(g, &gamma[0]);
	tile_copy(rs, &rstd[bm * BLOCK_M]);
	tile_parallel(i, BLOCK_M) {
		tile_parallel(j, BLOCK_N) {
			gx[i][j] = g[j] * dy[i][j] * x[i][j];
		}
	}
	tile_reduce_sum(dot, gx, 1);
	tile_parallel(i, BLOCK_M) {
		float r = rs[i];
		float c = r * r * r * dot[i] / N;
		tile_parallel(j, BLOCK_N) {
			gx[i][j] = r * g[j] * dy[i][j] - x[i][j] * c;
		}
	}
	tile_copy(&dX[bm * BLOCK_M][0], gx);
	tile_parallel(i, BLOCK_M) {
		tile_parallel(j, BLOCK_N) {
			gx[i][j] = dy[i][j] * x[i][j] * rs[i];
		}
	}
	tile_reduce_sum(dg, gx, 0);
	tile_atomic_add(&dG[0], dg);
}
