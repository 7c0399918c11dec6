/* tile_fill with a value read from an element of another fragment at
 * block level (no tile_parallel around it): the fragment moves to shared
 * memory, with the note saying why, and every element of y gets
 * 2 * x[0][3] of its own block (the layout pass once missed the read
 * and the GPU printers stopped on an internal error).
 * shape: N=37
 * shape: N=16
 * shape: N=3
 */
#include <tilec.h>

TILE_KERNEL void
fill_from_element(int N, const f32 X[N][64], f32 Y[N][64])
{
	tile_threads(128);
	int b = tile_grid_x(ceildiv(N, 16));
	tile_fragment f32 x[16][64];
	tile_fragment f32 y[16][64];
	tile_copy(x, &X[b * 16][0]);
	tile_fill(y, x[0][3] * 2.0f);
	tile_copy(&Y[b * 16][0], y);
}
