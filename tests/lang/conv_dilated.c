/* A direct 2-D convolution, stride 2, padding 1, dilation 2, 3x3 taps,
 * on i32 values so the sums are exact: Y[k][oy][ox] = sum over c, u, v
 * of Wt[k][c][u][v] * X[c][2*oy - 1 + 2*u][2*ox - 1 + 2*v], taps outside
 * X being zero.  The output extents are expressions of H and W:
 * (H + 2 - 4 - 1) / 2 + 1.  The input rows of a block's output tile are
 * staged in shared memory, BY output rows need 2*BY + 3 input rows.
 * shape: C=3,K=5,H=17,W=23
 * shape: C=1,K=1,H=3,W=3
 * shape: C=2,K=3,H=40,W=6
 * run: --range X=-9:9,Wt=-4:4
 */
#include <tilec.h>

TILE_PARAM(BY, 4);
TILE_PARAM(BX, 16);

TILE_KERNEL void
conv_dilated(int C, int K, int H, int W, const i32 X[C][H][W],
     const i32 Wt[K][C][3][3], i32 Y[K][(H - 3) / 2 + 1][(W - 3) / 2 + 1])
{
	tile_threads(64);
	int bx = tile_grid_x(ceildiv((W - 3) / 2 + 1, BX));
	int by = tile_grid_y(ceildiv((H - 3) / 2 + 1, BY));
	int k = tile_grid_z(K);
	tile_shared i32 xs[2 * BY + 3][2 * BX + 3];
	tile_shared i32 w[3][3];
	tile_fragment i32 acc[BY][BX];
	tile_clear(acc);
	for (int c = 0; c < C; c++) {
		tile_copy(xs, &X[c][2 * BY * by - 1][2 * BX * bx - 1]);
		tile_copy(w, &Wt[k][c][0][0]);
		tile_parallel(i, BY) tile_parallel(j, BX)
			for (int u = 0; u < 3; u++)
				for (int v = 0; v < 3; v++)
					acc[i][j] = acc[i][j] + w[u][v] * xs[2 * i + 2 * u][2 * j + 2 * v];
	}
	tile_copy(&Y[k][by * BY][bx * BX], acc);
}
