/*
 * partial_write.c - kernels that write only part of their output.
 *
 * lower: Y[i][j] = X[i][j] + 1 on and below the diagonal; the elements
 * above it are never written, by the kernel or by the reference, so they
 * must come back holding the poison `tilec run` filled them with.
 * argmax: the i32 index of each row's largest element, compared exactly.
 */
#include <tilec.h>

TILE_PARAM(BLOCK, 32, 16, 32);

TILE_KERNEL void
lower(int N, const f32 X[N][N], f32 Y[N][N])
{
	tile_threads(128);
	int bx = tile_grid_x(ceildiv(N, BLOCK));
	int by = tile_grid_y(ceildiv(N, BLOCK));

	tile_parallel(i, BLOCK) tile_parallel(j, BLOCK) {
		if (by * BLOCK + i < N && bx * BLOCK + j <= by * BLOCK + i)
			Y[by * BLOCK + i][bx * BLOCK + j] =
				X[by * BLOCK + i][bx * BLOCK + j] + 1.0f;
	}
}

TILE_KERNEL void
argmax(int M, int N, const f16 X[M][N], i32 Y[M])
{
	tile_threads(128);
	int b = tile_grid_x(ceildiv(M, BLOCK));

	tile_parallel(i, BLOCK) {
		if (b * BLOCK + i < M) {
			int best = 0;
			float top = X[b * BLOCK + i][0];
			for (int j = 1; j < N; j++) {
				if (X[b * BLOCK + i][j] > top) {
					top = X[b * BLOCK + i][j];
					best = j;
				}
			}
			Y[b * BLOCK + i] = best;
		}
	}
}
