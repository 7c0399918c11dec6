/* Each extent fits an int, their product does not: generated code indexes
 * buffers with int. */
// args: -D BLOCK=65536
#include <tilec.h>

TILE_PARAM(BLOCK, 128, 64, 128);

TILE_KERNEL void
rows(int M, int N, const f32 X[M][N], f32 Y[M][N])
{
	int bx = tile_grid_x(ceildiv(N, BLOCK));
	int by = tile_grid_y(ceildiv(M, BLOCK));
	tile_fragment f32 x[BLOCK][BLOCK];
// expect: 13:20: error: buffer 'x' has more than 2147483647 elements
	tile_copy(x, &X[by * BLOCK][bx * BLOCK]);
	tile_copy(&Y[by * BLOCK][bx * BLOCK], x);
}
