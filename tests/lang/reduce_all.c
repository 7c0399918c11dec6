/* tile_sum, tile_max, tile_min and tile_absmax: a whole tile reduced to
 * one value used in expressions.  Each block takes a BLOCK x COLS tile of
 * X (ragged at the edges: the copy reads zeros there, which count), and
 * a 1-D f32 fragment of its first row (which GPU threads hold several
 * copies of: a sum counts each element once); the scalars normalize the
 * tile and land in S (f32) and K (i32, an exact sum of the i8 tile's
 * elements).
 * shape: M=100,N=70
 * shape: M=7,N=5
 * run: --range Q=-128:127
 */
#include <tilec.h>

TILE_PARAM(BLOCK, 16);
TILE_PARAM(COLS, 64);

TILE_KERNEL void
reduce_all(int M, int N, const f32 X[M][N], const i8 Q[M][N], f32 Y[M][N],
	   f32 S[5][M], i32 K[2][M])
{
	tile_threads(128);
	int b = tile_grid_x(ceildiv(M, BLOCK));
	tile_fragment f32 x[BLOCK][COLS];
	tile_shared f16 h[BLOCK][COLS];
	tile_fragment f32 row[COLS];
	tile_fragment i8 q[BLOCK][COLS];
	tile_copy(x, &X[b * BLOCK][0]);
	tile_copy(h, x);
	tile_copy(row, &X[b * BLOCK][0]);
	tile_copy(q, &Q[b * BLOCK][0]);
	float total = tile_sum(x);
	float hi = tile_max(x);
	float lo;
	lo = tile_min(h);
	float amax = tile_absmax(row);
	float rsum = tile_sum(row);
	int qsum = tile_sum(q);
	int qmax = tile_absmax(q);
	float scale = 1.0f / (hi - lo + 1.0f);
	tile_parallel(i, BLOCK) tile_parallel(j, COLS)
		x[i][j] = (x[i][j] - lo) * scale + total / 1024.0f;
	tile_copy(&Y[b * BLOCK][0], x);
	if (b * BLOCK < M) {
		S[0][b * BLOCK] = total;
		S[1][b * BLOCK] = hi;
		S[2][b * BLOCK] = lo;
		S[3][b * BLOCK] = amax;
		S[4][b * BLOCK] = rsum;
		K[0][b * BLOCK] = qsum;
		K[1][b * BLOCK] = qmax;
	}
}
