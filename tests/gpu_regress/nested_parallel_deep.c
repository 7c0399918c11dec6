/* Parallel nests with statements between their levels, under an if and
 * three deep: a perfect pair (a, b) is spread as one flat loop, and every
 * parallel loop inside its iterations runs in the thread that runs the
 * iteration.  Y[a][b][c] = X[a][b][c] + a + b for even b, and
 * X[a][b][c] * (b + 1) + c for odd b.
 * shape: N=1
 * expect-ir: parallel c in 0 \.\. 32 serial in thread \{
 * reject-cuda: for \(int c = threadIdx\.x
 * reject-cuda: for \(int (c|e)_e = threadIdx\.x
 */
#include <tilec.h>

TILE_KERNEL void
nested_parallel_deep(int N, const f32 X[4][8][32], f32 Y[4][8][32])
{
	tile_threads(64);
	tile_shared f32 x[4][8][32];
	tile_copy(x, &X[0][0][0]);
	tile_parallel(a, 4) tile_parallel(b, 8) {
		float s = (float)(a + b);
		if (b % 2 == 0) {
			tile_parallel(c, 32)
				x[a][b][c] = x[a][b][c] + s;
		} else {
			float m = (float)(b + 1);
			tile_parallel(e, 4) {
				float c0 = (float)(e * 8);
				tile_parallel(c, 8)
					x[a][b][e * 8 + c] = x[a][b][e * 8 + c] * m + c0 + (float)c;
			}
		}
	}
	tile_copy(&Y[0][0][0], x);
}
