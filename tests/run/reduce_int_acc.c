/* Reductions into integer fragments (docs/language.md, "Reductions"):
 * each element is converted to the destination's dtype first, then
 * combined exactly in it.  The OpenMP output once truncated the running
 * float sum per element and the reference truncated once per reduce
 * (they disagreed on every column); an i8 source summed in an i8
 * accumulator; an i8 max started from INT_MIN, which is 0 as an i8.
 * Run by tests/meson.build (run-reduce-int-acc*, with --range so the
 * float inputs have integer parts). */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 16, 16, 64);
TILE_PARAM(BLOCK_N, 64, 64, 256);

/* Column sums of floats into an int accumulator, along the outer dim. */
TILE_KERNEL void
colsum_int(int M, int N, const f32 X[M][N], i32 Y[N])
{
	int bn = tile_grid_x(ceildiv(N, BLOCK_N));
	tile_fragment f32 x[BLOCK_M][BLOCK_N];
	tile_fragment int sum[BLOCK_N];

	tile_clear(sum);
	for (int m0 = 0; m0 < M; m0 += BLOCK_M) {
		tile_copy(x, &X[m0][bn * BLOCK_N]);
		tile_reduce_sum(sum, x, 0, TILE_ACCUMULATE);
	}
	tile_copy(&Y[bn * BLOCK_N], sum);
}

/* Row reductions along the last dim: floats into ints (alone and fused
 * with a nest), i8 into i32 and into i8. */
TILE_KERNEL void
rowred_int(int M, int N, const f32 X[M][N], const i8 Q[M][N], i32 S[M],
	   i32 T[M], i32 U[M], i8 V[M], i8 W[M])
{
	int bm = tile_grid_x(ceildiv(M, BLOCK_M));
	tile_fragment f32 x[BLOCK_M][BLOCK_N], y[BLOCK_M][BLOCK_N];
	tile_fragment i8 q[BLOCK_M][BLOCK_N];
	tile_fragment i32 s[BLOCK_M], t[BLOCK_M], u[BLOCK_M];
	tile_fragment i8 v[BLOCK_M], w[BLOCK_M];

	tile_copy(x, &X[bm * BLOCK_M][0]);
	tile_reduce_sum(s, x, 1);
	tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
		y[i][j] = x[i][j] * 3.0f;
	tile_reduce_max(t, y, 1);
	tile_copy(q, &Q[bm * BLOCK_M][0]);
	tile_reduce_sum(u, q, 1);
	tile_reduce_max(v, q, 1);
	tile_reduce_min(w, q, 1);
	tile_copy(&S[bm * BLOCK_M], s);
	tile_copy(&T[bm * BLOCK_M], t);
	tile_copy(&U[bm * BLOCK_M], u);
	tile_copy(&V[bm * BLOCK_M], v);
	tile_copy(&W[bm * BLOCK_M], w);
}
