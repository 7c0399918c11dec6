/* Element loops in runs (runs.c) on 96 threads and odd loop nests: 1-D
 * rows, column-major nests, runs in a serial loop, a fragment read along
 * the row, a tensor read directly.
 * shape: M=37,N=101
 * shape: M=5,N=7
 */
#include <tilec.h>
TILE_PARAM(BM, 24);
TILE_PARAM(W, 72);
TILE_KERNEL void
runs_threads(int M, int N, const bf16 X[M][N], const f32 V[N], bf16 Y[M][N],
	     f16 Z[M][N], f32 O[N])
{
	tile_threads(96);
	int bn = tile_grid_x(ceildiv(N, W));
	int bm = tile_grid_y(ceildiv(M, BM));
	tile_shared bf16 xs[BM][W];
	tile_shared f16 zs[BM][W];
	tile_shared f32 v[W];
	tile_fragment f32 fr[BM][W];
	tile_copy(xs, &X[bm * BM][bn * W]);
	tile_copy(v, &V[bn * W]);
	tile_copy(fr, &X[bm * BM][bn * W]);
	tile_parallel(j, W)
		v[j] = v[j] * 2.0f + (float)xs[0][j];
	tile_parallel(j, W) tile_parallel(i, BM)
		zs[i][j] = (float)xs[i][j] + v[j];
	for (int it = 0; it < 3; it++) {
		tile_parallel(i, BM) tile_parallel(j, W)
			xs[i][j] = (float)xs[i][j] * 0.5f + (float)zs[i][j] * (float)it;
	}
	tile_parallel(i, BM) tile_parallel(j, W)
		zs[i][j] = (float)zs[i][j] + fr[i][j] +
			   (bm * BM + i < M && bn * W + j < N ? (float)X[bm * BM + i][bn * W + j] : 0.0f);
	tile_copy(&Y[bm * BM][bn * W], xs);
	tile_copy(&Z[bm * BM][bn * W], zs);
	if (bm == 0)
		tile_copy(&O[bn * W], v);
}
