/* Element loops in runs (runs.c), edge cases: neighbour reads, partial
 * rows, offsets, 3-D tiles, quantize into i8/u8/bool/fp8/f64 rows,
 * multi-statement bodies, two reads of one tile along the run
 * (cs[a][c][j] and cs[c][a][j]: two vectors, named apart).
 * shape: M=37,N=101
 * shape: M=5,N=7
 * shape: M=64,N=40
 */
#include <tilec.h>
TILE_PARAM(BM, 32);
TILE_PARAM(W, 40);
TILE_KERNEL void
runs_edge(int M, int N, const f16 X[M][N], const bf16 Y[M][N],
	  f32 A[M][N], i8 Q[M][N], u8 U[M][N], fp8e4m3 E[M][N], f64 D[M][N],
	  bf16 P[M][N], f16 R[M][N])
{
	tile_threads(128);
	int bn = tile_grid_x(ceildiv(N, W));
	int bm = tile_grid_y(ceildiv(M, BM));
	tile_shared f16 xs[BM][W];
	tile_shared bf16 ys[BM][W];
	tile_shared f32 as[BM][W];
	tile_shared i8 qs[BM][W];
	tile_shared u8 us[BM][W];
	tile_shared fp8e4m3 es[BM][W];
	tile_shared f64 ds[BM][W];
	tile_shared bf16 ps[BM][W];
	tile_shared f16 rs[2][BM / 2][W];
	tile_shared bool bs[BM][W];
	tile_shared f16 cs[4][4][W];
	tile_fragment f32 fr[BM][W];
	tile_copy(xs, &X[bm * BM][bn * W]);
	tile_copy(ys, &Y[bm * BM][bn * W]);
	tile_copy(fr, &Y[bm * BM][bn * W]);
	/* neighbour reads of another tile (not the loop variable) */
	tile_parallel(i, BM) tile_parallel(j, W)
		as[i][j] = (float)xs[i][j] + (float)xs[i][j + 1 < W ? j + 1 : 0] -
			   (float)ys[i][W - 1 - j];
	/* reads behind && and a register fragment along the row */
	tile_parallel(i, BM) tile_parallel(j, W)
		bs[i][j] = xs[i][j] > 0.0f && ys[i][j] < 0.5f;
	/* quantize rows */
	tile_parallel(i, BM) tile_parallel(j, W)
		qs[i][j] = sat_i8(as[i][j] * 40.0f + (bs[i][j] ? 1.0f : 0.0f));
	tile_parallel(i, BM) tile_parallel(j, W)
		us[i][j] = sat_u8(fr[i][j] * 100.0f + 100.0f);
	tile_parallel(i, BM) tile_parallel(j, W)
		es[i][j] = as[i][j] * 3.0f;
	tile_parallel(i, BM) tile_parallel(j, W)
		ds[i][j] = (double)as[i][j] * (double)qs[i][j] + us[i][j];
	/* a body with locals and a serial loop */
	tile_parallel(i, BM) tile_parallel(j, W) {
		float acc = 0.0f;
		for (int k = 0; k < 4; k++)
			acc += (float)ys[i][(j + k) % W];
		ps[i][j] = acc * (float)es[i][j];
	}
	/* partial rows at an offset, then the rest */
	tile_parallel(i, BM) tile_parallel(j, 24)
		ps[i][j + 16] = (float)ps[i][j + 16] + 1.0f;
	/* a 3-D tile's rows */
	tile_parallel(h, 2) tile_parallel(i, BM / 2) tile_parallel(j, W)
		rs[h][i][j] = (float)xs[h * (BM / 2) + i][j] * 0.5f + (float)ys[h * (BM / 2) + i][j];
	tile_parallel(h, 2) tile_parallel(i, BM / 2) tile_parallel(j, W)
		rs[h][i][j] = rs[h][i][j] + (float)xs[h * (BM / 2) + i][j];
	/* two reads of one tile along the run */
	tile_parallel(a, 4) tile_parallel(c, 4) tile_parallel(j, W)
		cs[a][c][j] = (float)xs[a * 4 + c][j] - 0.25f;
	tile_parallel(a, 4) tile_parallel(c, 4) tile_parallel(j, W)
		as[a * 4 + c][j] = as[a * 4 + c][j] + (float)cs[a][c][j] * (float)cs[c][a][j] -
				   (float)cs[c][a][j];
	tile_copy(&A[bm * BM][bn * W], as);
	tile_copy(&Q[bm * BM][bn * W], qs);
	tile_copy(&U[bm * BM][bn * W], us);
	tile_copy(&E[bm * BM][bn * W], es);
	tile_copy(&D[bm * BM][bn * W], ds);
	tile_copy(&P[bm * BM][bn * W], ps);
	tile_parallel(i, BM) tile_parallel(j, W)
		xs[i][j] = rs[i / (BM / 2)][i % (BM / 2)][j];
	tile_copy(&R[bm * BM][bn * W], xs);
}
