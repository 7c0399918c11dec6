/*
 * Tile stores to one tensor that may share elements keep their barrier
 * (barrier.c): in each iteration two 64-wide stores 32 apart, and the
 * next iteration's 32 further on, so the later store's value must win
 * where they overlap (the reference says which).
 * shape: M=37,N=200
 * shape: M=16,N=64
 * expect-ir: ^\s*barrier  // 25:3
 * expect-ir: ^\s*barrier  // 26:3
 */
#include <tilec.h>

TILE_KERNEL void
overlap(int M, int N, const f32 X[M][N], f32 Y[M][N])
{
	tile_threads(128);
	int bm = tile_grid_x(ceildiv(M, 16));
	tile_fragment f32 a[16][64], b[16][64];
	for (int c = 0; c < ceildiv(N, 32); c++) {
		tile_copy(a, &X[bm * 16][c * 32]);
		tile_parallel(i, 16) tile_parallel(j, 64) {
			b[i][j] = a[i][j] + 1.0f;
			a[i][j] = a[i][j] * 3.0f;
		}
		tile_copy(&Y[bm * 16][c * 32], a);
		tile_copy(&Y[bm * 16][c * 32 + 32], b);
	}
}
