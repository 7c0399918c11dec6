/* Reductions of and into i4 tiles (docs/language.md, "Reductions"): each
 * element converted to i4 first (wrapped to 4 bits: 9 is -7), combined in
 * i4 (a sum wraps; an absmax takes |x| in i4, where |-8| is -8, which
 * never beats the 0 it starts at).  The OpenMP output kept i4 values in
 * int8_t without wrapping them (casts, element stores, reduces), and the
 * GPU backends refused i4 operands of reductions (tests/gen/FINDINGS.md,
 * bug 25).  Paths: a register fragment into a shared i4 tile (reduce2d,
 * the leaders' tilec::i4_put), with TILE_ACCUMULATE; a shared tile into
 * i4 (smem_reduce) along either dim; a shared i4 tile into i32 and into
 * i4; a rank-3 tile (one thread per output); tile_sum and tile_absmax of
 * an i4 tile.
 * shape: M=300
 * shape: M=37
 * run: --range X=-100:100,Y=-8:7
 * expect-cuda: reduce_value<tilec::REDUCE_ABSMAX, tilec::i4x2>
 * expect-cuda: tilec::i4_put\(r,
 */
#include <tilec.h>

/* x = X, but its last 16 columns 8, -24, 40 (-8 as i4) and -9 (7). */
TILE_KERNEL void
reduce_i4(int M, const i32 X[M][64], const i4 Y[M], i4 R[M], i4 S[M],
	  i4 T[M], i4 U[M], i32 V[M], i4 W[M][64], i4 Z[M][4])
{
	tile_threads(128);
	int b = tile_grid_x(ceildiv(M, 16));
	tile_fragment i32 x[16][64];
	tile_shared i32 y[16][64];
	tile_shared i32 y3[16][4][16];
	tile_shared i4 q[16][64];
	tile_shared i4 r[16];
	tile_shared i4 s[16];
	tile_shared i4 t[16];
	tile_shared i4 u[16];
	tile_shared i32 v[16];
	tile_shared i4 w[64];
	tile_shared i4 z[16][4];
	tile_copy(x, &X[b * 16][0]);
	tile_parallel(i, 16) tile_parallel(j, 64)
		x[i][j] = j < 48 ? x[i][j] : j % 4 == 3 ? -9 : 8 + 32 * (j % 3) * (1 - 2 * (j % 2));
	tile_copy(y, x);
	tile_parallel(i, 16) tile_parallel(c, 4) tile_parallel(l, 16)
		y3[i][c][l] = y[i][c * 16 + l];
	tile_copy(q, x);
	tile_reduce_absmax(r, x, 1);
	tile_copy(s, &Y[b * 16]);
	tile_reduce_sum(s, x, 1, TILE_ACCUMULATE);
	tile_reduce_max(t, y, 1);
	tile_copy(u, &Y[b * 16]);
	tile_reduce_absmax(u, y, 1, TILE_ACCUMULATE);
	tile_reduce_sum(v, q, 1);
	tile_reduce_min(w, q, 0);
	tile_reduce_absmax(z, y3, 2);
	int total = tile_sum(q);
	int most = tile_absmax(q);
	tile_parallel(i, 16)
		v[i] = v[i] + total * 1000 + most * 100000;
	tile_copy(&R[b * 16], r);
	tile_copy(&S[b * 16], s);
	tile_copy(&T[b * 16], t);
	tile_copy(&U[b * 16], u);
	tile_copy(&V[b * 16], v);
	tile_copy(&W[b][0], w);
	tile_copy(&Z[b * 16][0], z);
}
