/* tile_masked with a mask of the tile's shape and with a row mask, on
 * loads and stores, and tile_rows as a scatter (the rows of X permuted,
 * as MoE routing undoes a sort).  A masked load reads zero where the
 * mask is 0; a masked store leaves those elements alone (they keep the
 * poison).  The scatter's row of tile row i is (r * 5 + 3) % T for
 * global row r: a permutation, since no T here is a multiple of 5; the
 * tile rows past T are bounded off, or they would write rows of other
 * blocks.
 * shape: T=77,D=40
 * shape: T=3,D=5
 * run: --range keep=0:1,G=-1:1
 */
#include <tilec.h>

TILE_PARAM(BM, 32);
TILE_PARAM(BD, 32);

TILE_KERNEL void
masked(int T, int D, const f32 X[T][D], const u8 keep[T][D], const f32 G[T],
       f32 Y[T][D], f32 Z[T][D], f32 P[T][D])
{
	tile_threads(128);
	int b = tile_grid_x(ceildiv(T, BM));
	int c = tile_grid_y(ceildiv(D, BD));
	tile_shared bool m[BM][BD];
	tile_shared f32 g[BM];
	tile_shared i32 rowm[BM];
	tile_shared i64 dest[BM];
	tile_fragment f32 x[BM][BD];
	tile_copy(m, &keep[b * BM][c * BD]);
	tile_copy(x, tile_masked(&X[b * BM][c * BD], m));
	tile_parallel(i, BM) tile_parallel(j, BD)
		x[i][j] = x[i][j] * 2.0f + 1.0f;
	tile_copy(tile_masked(&Y[b * BM][c * BD], m), x);
	tile_copy(g, &G[b * BM]);
	tile_parallel(i, BM)
		rowm[i] = g[i] > 0.0f;
	tile_copy(tile_masked(&Z[b * BM][c * BD], rowm), x);
	tile_parallel(i, BM)
		dest[i] = ((long long)(b * BM + i) * 5 + 3) % T;
	tile_copy(tile_bounded(tile_rows(&P[0][c * BD], dest), T - b * BM), x);
}
