/* Element loops into shared rows in runs (runs.c) over i4, f16, i8, f32
 * and bf16 rows of W columns: in place, conditional reads, reads of other
 * tiles along the row, a run-time extent.
 * shape: M=37,N=101
 * shape: M=5,N=7
 * shape: M=16,N=24
 * shape: M=130,N=77
 */
#include <tilec.h>
TILE_PARAM(BM, 8);
TILE_PARAM(W, 24);
TILE_KERNEL void
runs_i4(int M, int N, const i4 X[M][N], const f16 Y[M][N], const i8 G[M][N],
     i4 Z[M][N], f32 F[M][N], bf16 H[M][N])
{
	tile_threads(128);
	int bn = tile_grid_x(ceildiv(N, W));
	int bm = tile_grid_y(ceildiv(M, BM));
	tile_shared i4 xs[BM][W];
	tile_shared f16 ys[BM][W];
	tile_shared i8 gs[BM][W];
	tile_shared i4 zs[BM][W];
	tile_shared f32 fs[BM][W];
	tile_shared bf16 hs[BM][W];
	tile_copy(xs, &X[bm * BM][bn * W]);
	tile_copy(ys, &Y[bm * BM][bn * W]);
	tile_copy(gs, &G[bm * BM][bn * W]);
	/* in place */
	tile_parallel(i, BM) tile_parallel(j, W)
		xs[i][j] = xs[i][j] * 2 + 1;
	/* conditional read of another tile */
	tile_parallel(i, BM) tile_parallel(j, W)
		zs[i][j] = gs[i][j] > 0 ? xs[i][j] : (i4)0;
	/* conditional in place */
	tile_parallel(i, BM) tile_parallel(j, W)
		ys[i][j] = gs[i][j] < 3 ? ys[i][j] : (f16)(ys[i][j] * 0.5f);
	/* reads of other tiles along the row */
	tile_parallel(i, BM) tile_parallel(j, W)
		fs[i][j] = (float)zs[i][j] * (float)ys[i][j] + gs[i][j] +
			   (bn * W + j < N ? 1.0f : 0.0f);
	/* a run-time extent */
	tile_parallel(i, BM) tile_parallel(j, min(W, N - bn * W))
		hs[i][j] = (float)xs[i][j] - fs[i][j];
	tile_parallel(i, BM) tile_parallel(j, W)
		if (bn * W + j >= N)
			hs[i][j] = 0.0f;
	tile_copy(&Z[bm * BM][bn * W], zs);
	tile_copy(&F[bm * BM][bn * W], fs);
	tile_copy(&H[bm * BM][bn * W], hs);
}
