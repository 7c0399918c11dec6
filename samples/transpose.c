/*
 * transpose.c - Y[j][i] = X[i][j] for an M x N fp16 matrix.
 *
 * Each block moves one BLOCK x BLOCK tile: it reads rows of X into shared
 * memory (whole rows, so the loads are contiguous), reads the tile back
 * column-wise into a fragment laid out as Y's rows, and stores those rows
 * (contiguous again).  The compiler picks the shared layout (padding or a
 * swizzle) that keeps the column-wise reads free of bank conflicts.  Edge
 * tiles read zeros past M and N and write nothing there.
 */
#include <tilec.h>

TILE_PARAM(BLOCK, 64, 32, 64, 128);
TILE_PARAM(THREADS, 256, 128, 256, 512);

TILE_KERNEL void
transpose(int M, int N, const f16 X[M][N], f16 Y[N][M])
{
	tile_threads(THREADS);
	int bx = tile_grid_x(ceildiv(N, BLOCK));
	int by = tile_grid_y(ceildiv(M, BLOCK));

	tile_shared f16 xs[BLOCK][BLOCK];
	tile_fragment f16 yt[BLOCK][BLOCK];

	tile_copy(xs, &X[by * BLOCK][bx * BLOCK]);
	tile_parallel(j, BLOCK) tile_parallel(i, BLOCK)
		yt[j][i] = xs[i][j];
	tile_copy(&Y[bx * BLOCK][by * BLOCK], yt);
}
