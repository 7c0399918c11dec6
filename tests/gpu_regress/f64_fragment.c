/* An f64 fragment in registers holds doubles, in element-wise code and in
 * a row reduction across warps (they were once float arrays, good to 1e-7
 * only).  S[i] = sum over j of X[i][j] * X[i][j] / 3.
 * shape: M=10,N=256
 * expect-cuda: ^	double x\[x_rows::count\]\[x_cols::count\];
 */
#include <tilec.h>

TILE_KERNEL void
f64_fragment(int M, int N, const f64 X[M][N], f64 S[M])
{
	tile_threads(128);
	int bm = tile_grid_x(ceildiv(M, 2));
	tile_fragment f64 x[2][256];
	tile_fragment f64 s[2];
	tile_copy(x, &X[bm * 2][0]);
	tile_parallel(i, 2) tile_parallel(j, 256)
		x[i][j] = x[i][j] * x[i][j] / 3.0;
	tile_reduce_sum(s, x, 1);
	tile_copy(&S[bm * 2], s);
}
