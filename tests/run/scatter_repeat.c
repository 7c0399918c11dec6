/* tile_rows as a scatter whose index repeats a row: two tile rows would
 * write the same tensor elements, and which one wins would depend on the
 * backend's order.  The reference run stops there with the index's
 * location (run.sh, case scatter); with distinct rows (STRIDE=1, every
 * row its own) it runs.
 */
#include <tilec.h>

TILE_PARAM(BLOCK, 16);
TILE_PARAM(STRIDE, 1);

TILE_KERNEL void
scatter_repeat(int N, const f32 X[N][8], f32 Y[N][8])
{
	tile_threads(64);
	int b = tile_grid_x(ceildiv(N, BLOCK));
	tile_shared i32 dest[BLOCK];
	tile_fragment f32 x[BLOCK][8];
	tile_copy(x, &X[b * BLOCK][0]);
	tile_parallel(i, BLOCK)
		dest[i] = b * BLOCK + i / STRIDE;
	tile_copy(tile_bounded(tile_rows(&Y[0][0], dest), N - b * BLOCK), x);
}
