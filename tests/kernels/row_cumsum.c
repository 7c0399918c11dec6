/* Inclusive prefix sums along each row (a segmented scan whose segments
 * are the rows), exact in i32.  Within a BLOCK_N chunk the scan takes
 * log2(BLOCK_N) doubling steps (Hillis-Steele) between two buffers; each
 * row's running total carries from one chunk to the next.
 * shape: M=10,N=1000
 * shape: M=33,N=64
 * shape: M=1,N=1
 * run: --range X=-1000:1000
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 4);
TILE_PARAM(BLOCK_N, 256);
TILE_PARAM(LOG_N, 8);

TILE_KERNEL void
row_cumsum(int M, int N, const i32 X[M][N], i32 Y[M][N])
{
	tile_threads(256);
	int bm = tile_grid_x(ceildiv(M, BLOCK_M));

	tile_shared i32 u[BLOCK_M][BLOCK_N];
	tile_shared i32 v[BLOCK_M][BLOCK_N];
	tile_shared i32 carry[BLOCK_M];

	tile_clear(carry);
	for (int c = 0; c < ceildiv(N, BLOCK_N); c++) {
		tile_copy(u, &X[bm * BLOCK_M][c * BLOCK_N]);
		for (int s = 0; s < LOG_N; s += 2) {
			tile_parallel(i, BLOCK_M) {
				tile_parallel(j, BLOCK_N) {
					int d = 1 << s;
					v[i][j] = j >= d ? u[i][j] + u[i][j - d] : u[i][j];
				}
			}
			tile_parallel(i, BLOCK_M) {
				tile_parallel(j, BLOCK_N) {
					int d = 2 << s;
					u[i][j] = j >= d ? v[i][j] + v[i][j - d] : v[i][j];
				}
			}
		}
		tile_parallel(i, BLOCK_M) {
			tile_parallel(j, BLOCK_N) {
				v[i][j] = u[i][j] + carry[i];
			}
		}
		tile_parallel(i, BLOCK_M)
			carry[i] = v[i][BLOCK_N - 1];
		tile_copy(&Y[bm * BLOCK_M][c * BLOCK_N], v);
	}
}
