/* logsumexp over long rows, in one pass: each row's running max m and
 * sum s of exp(x - m) are updated chunk by chunk (s rescaled when the max
 * grows), so a row of any length is read once.  Columns past N read as
 * zeros, which would count: they are set to -inf first.
 * shape: M=9,N=20000
 * shape: M=130,N=300
 * shape: M=1,N=1
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 2);
TILE_PARAM(BLOCK_N, 1024);

TILE_KERNEL void
logsumexp(int M, int N, const f32 X[M][N], f32 Y[M])
{
	tile_threads(256);
	int bm = tile_grid_x(ceildiv(M, BLOCK_M));

	tile_fragment f32 x[BLOCK_M][BLOCK_N];
	tile_shared f32 m[BLOCK_M];
	tile_shared f32 s[BLOCK_M];
	tile_shared f32 cm[BLOCK_M];
	tile_shared f32 cs[BLOCK_M];

	tile_fill(m, -INFINITY);
	tile_clear(s);
	for (int c = 0; c < ceildiv(N, BLOCK_N); c++) {
		tile_copy(x, &X[bm * BLOCK_M][c * BLOCK_N]);
		tile_parallel(i, BLOCK_M) {
			tile_parallel(j, BLOCK_N) {
				x[i][j] = c * BLOCK_N + j < N ? x[i][j] : -INFINITY;
			}
		}
		tile_reduce_max(cm, x, 1);
		tile_parallel(i, BLOCK_M) {
			float mn = fmaxf(m[i], cm[i]);
			tile_parallel(j, BLOCK_N) {
				x[i][j] = expf(x[i][j] - mn);
			}
		}
		tile_reduce_sum(cs, x, 1);
		tile_parallel(i, BLOCK_M) {
			float mn = fmaxf(m[i], cm[i]);
			s[i] = s[i] * expf(m[i] - mn) + cs[i];
			m[i] = mn;
		}
	}
	tile_parallel(i, BLOCK_M)
		s[i] = m[i] + logf(s[i]);
	tile_copy(&Y[bm * BLOCK_M], s);
}
