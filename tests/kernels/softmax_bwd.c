/* Softmax backward: with y = softmax(x) along each row, dx = y * (dy -
 * sum(dy * y)).  Rows of any length: each block takes BLOCK_M rows, sums
 * dy * y over BLOCK_N-column chunks, then writes dx chunk by chunk.  y
 * and dy are bf16, as a training framework keeps them; dx is bf16 too.
 * shape: M=65,N=1000
 * shape: M=3,N=77
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 8);
TILE_PARAM(BLOCK_N, 128);

TILE_KERNEL void
softmax_bwd(int M, int N, const bf16 Y[M][N], const bf16 dY[M][N],
	    bf16 dX[M][N])
{
	tile_threads(256);
	int bm = tile_grid_x(ceildiv(M, BLOCK_M));

	tile_fragment f32 y[BLOCK_M][BLOCK_N];
	tile_fragment f32 dy[BLOCK_M][BLOCK_N];
	tile_fragment f32 p[BLOCK_M][BLOCK_N];
	tile_fragment f32 dot[BLOCK_M];

	tile_clear(dot);
	for (int c = 0; c < ceildiv(N, BLOCK_N); c++) {
		tile_copy(y, &Y[bm * BLOCK_M][c * BLOCK_N]);
		tile_copy(dy, &dY[bm * BLOCK_M][c * BLOCK_N]);
		tile_parallel(i, BLOCK_M) {
			tile_parallel(j, BLOCK_N) {
				p[i][j] = y[i][j] * dy[i][j];
			}
		}
		tile_reduce_sum(dot, p, 1, TILE_ACCUMULATE);
	}
	for (int c = 0; c < ceildiv(N, BLOCK_N); c++) {
		tile_copy(y, &Y[bm * BLOCK_M][c * BLOCK_N]);
		tile_copy(dy, &dY[bm * BLOCK_M][c * BLOCK_N]);
		tile_parallel(i, BLOCK_M) {
			tile_parallel(j, BLOCK_N) {
				p[i][j] = y[i][j] * (dy[i][j] - dot[i]);
			}
		}
		tile_copy(&dX[bm * BLOCK_M][c * BLOCK_N], p);
	}
}
