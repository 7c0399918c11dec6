/* A tile_parallel iteration reads an element another iteration of the
 * same loop writes: the order of the iterations decides what it reads (a
 * GPU runs them at once), so the program translates with a warning at
 * the read.  Reading the element it writes, or an element a loop before
 * this one wrote, or the row an enclosing iteration owns along a serial
 * loop, is not warned about. */
// expect: 22:15: warning: this reads an element of 'xs' that another iteration of tile_parallel loop 'j' may write (the assignment at 22:4): iterations run concurrently, so what it reads depends on their order; read it in a loop after this one
#include <tilec.h>

TILE_KERNEL void
reverse_rows(int M, const f16 X[M][40], f16 Y[M][40])
{
	tile_threads(128);
	int bm = tile_grid_x(ceildiv(M, 32));
	tile_shared f16 xs[32][40];
	tile_shared f16 ys[32][40];
	tile_copy(xs, &X[bm * 32][0]);
	tile_parallel(i, 32) tile_parallel(j, 40)
		ys[i][j] = xs[i][39 - j] * 2.0f;
	tile_parallel(i, 32) {
		tile_parallel(j, 40)
			xs[i][j] = xs[i][39 - j] + ys[i][j];
		for (int k = 1; k < 40; k++)
			ys[i][k] = ys[i][k - 1] + xs[i][k];
	}
	tile_copy(&Y[bm * 32][0], xs);
}
