/* Gathers and scatters through i64 indices far outside the table: ids of
 * 2^32 + k or -2^32 + k (k a valid row) must read as zeros and scatter
 * nowhere, not wrap to row k.  A gather into a shared tile and a
 * fragment, and a bounded scatter of the gathered rows to rows ids[t] of
 * S (the valid ids are distinct in the checks).
 * shape: T=37,V=40,D=20
 * shape: T=1,V=1,D=1
 * run: --range ids=-4294967296:4294967296
 */
#include <tilec.h>

TILE_PARAM(BT, 16);
TILE_PARAM(BD, 32);

TILE_KERNEL void
gather_i64_ids(int T, int V, int D, const i64 ids[T], const f32 W[V][D],
	 f32 Y[T][D], f32 Z[T][D], f32 S[V][D])
{
	tile_threads(64);
	int b = tile_grid_x(ceildiv(T, BT));
	int c = tile_grid_y(ceildiv(D, BD));
	tile_shared i64 idx[BT];
	tile_shared f32 y[BT][BD];
	tile_fragment f32 z[BT][BD];
	tile_copy(idx, &ids[b * BT]);
	tile_copy(y, tile_rows(&W[0][c * BD], idx));
	tile_copy(z, tile_rows(&W[0][c * BD], idx));
	tile_copy(&Y[b * BT][c * BD], y);
	tile_copy(&Z[b * BT][c * BD], z);
	tile_copy(tile_bounded(tile_rows(&S[0][c * BD], idx), T - b * BT), y);
}
