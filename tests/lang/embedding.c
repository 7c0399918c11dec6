/* tile_rows as a gather: an embedding lookup.  Row t of Y is row ids[t]
 * of W; ids run from -2 to V + 1, so some fall outside W and their rows
 * read as zeros (the defined behaviour).  T and D ragged against the
 * blocks; W in f16, Y in f32.
 * shape: T=77,V=50,D=72
 * shape: T=5,V=3,D=8
 * run: --range ids=-2:V+1
 */
#include <tilec.h>

TILE_PARAM(BLOCK_T, 32);
TILE_PARAM(BLOCK_D, 64);

TILE_KERNEL void
embedding(int T, int V, int D, const i32 ids[T], const f16 W[V][D],
	  f32 Y[T][D])
{
	tile_threads(128);
	int b = tile_grid_x(ceildiv(T, BLOCK_T));
	int c = tile_grid_y(ceildiv(D, BLOCK_D));
	tile_shared i32 idx[BLOCK_T];
	tile_fragment f32 y[BLOCK_T][BLOCK_D];
	tile_copy(idx, &ids[b * BLOCK_T]);
	tile_copy(y, tile_rows(&W[0][c * BLOCK_D], idx));
	tile_copy(&Y[b * BLOCK_T][c * BLOCK_D], y);
}
