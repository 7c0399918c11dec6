/* tile_reduce_topk: the K greatest elements along a dim, in order, and
 * their indices (ties: the smaller index first; NaN after every number).
 * X's elements are integers in -3 .. 3 (stored as f32: many ties), NaN
 * where (row + col) % 11 is 4; an i32 tile along dim 0 too.  Indices
 * compare exactly.
 * shape: M=100,N=50
 * shape: M=7,N=3
 * run: --range X=-3:3,Q=-1000:1000
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 16);
TILE_PARAM(BLOCK_N, 64);
TILE_PARAM(K, 5);

TILE_KERNEL void
topk(int M, int N, const f32 X[M][N], const i32 Q[M][N], f32 V[M][K],
     i64 I[M][K], i32 QV[K][N], i32 QI[K][N])
{
	tile_threads(128);
	int b = tile_grid_x(ceildiv(M, BLOCK_M));
	tile_fragment f32 x[BLOCK_M][BLOCK_N];
	tile_fragment i32 q[BLOCK_M][BLOCK_N];
	tile_fragment f32 v[BLOCK_M][K];
	tile_fragment i64 ix[BLOCK_M][K];
	tile_shared i32 qv[K][BLOCK_N];
	tile_fragment i32 qi[K][BLOCK_N];
	tile_copy(x, &X[b * BLOCK_M][0]);
	tile_copy(q, &Q[b * BLOCK_M][0]);
	tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N) {
		float e = (float)(int)x[i][j];
		if ((b * BLOCK_M + i + j) % 11 == 4)
			e = sqrtf(-1.0f - fabsf(e));
		x[i][j] = e;
	}
	tile_reduce_topk(v, ix, x, 1);
	tile_reduce_topk(qv, qi, q, 0);
	tile_copy(&V[b * BLOCK_M][0], v);
	tile_copy(&I[b * BLOCK_M][0], ix);
	if (b == 0) {
		tile_copy(&QV[0][0], qv);
		tile_copy(&QI[0][0], qi);
	}
}
