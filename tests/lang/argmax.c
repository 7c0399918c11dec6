/* tile_reduce_argmax and tile_reduce_argmin along either dim: the value
 * and the smallest index holding it.  X's elements are integers in -3 ..
 * 3 (stored as f32, so ties are frequent), NaN where (row + col) % 13 is
 * 5 (a NaN never wins), and every element NaN in row 2 of each block
 * (then the value is NaN, the index 0).  Indices compare exactly.
 * shape: M=100,N=50
 * shape: M=7,N=3
 * run: --range X=-3:3,Q=-128:127
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 16);
TILE_PARAM(BLOCK_N, 64);

TILE_KERNEL void
argmax(int M, int N, const f32 X[M][N], const i8 Q[M][N], f32 RV[M],
       i32 RI[M], f32 CV[N], i64 CI[N], i32 QV[M], i32 QI[M])
{
	tile_threads(128);
	int b = tile_grid_x(ceildiv(M, BLOCK_M));
	tile_fragment f32 x[BLOCK_M][BLOCK_N];
	tile_fragment i8 q[BLOCK_M][BLOCK_N];
	tile_fragment f32 rv[BLOCK_M];
	tile_fragment i32 ri[BLOCK_M];
	tile_shared f32 cv[BLOCK_N];
	tile_fragment i64 ci[BLOCK_N];
	tile_fragment i32 qv[BLOCK_M];
	tile_fragment i32 qi[BLOCK_M];
	tile_copy(x, &X[b * BLOCK_M][0]);
	tile_copy(q, &Q[b * BLOCK_M][0]);
	tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N) {
		float v = (float)(int)x[i][j];
		if ((b * BLOCK_M + i + j) % 13 == 5 || i == 2)
			v = sqrtf(-1.0f - fabsf(v));
		x[i][j] = v;
	}
	tile_reduce_argmax(rv, ri, x, 1);
	tile_reduce_argmin(cv, ci, x, 0);
	tile_reduce_argmin(qv, qi, q, 1);
	tile_copy(&RV[b * BLOCK_M], rv);
	tile_copy(&RI[b * BLOCK_M], ri);
	tile_copy(&QV[b * BLOCK_M], qv);
	tile_copy(&QI[b * BLOCK_M], qi);
	if (b == 0) {
		tile_copy(&CV[0], cv);
		tile_copy(&CI[0], ci);
	}
}
