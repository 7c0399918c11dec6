/* Copies into outputs the kernel only writes may stream their rows past
 * the cache (passes/cpu_stream.c; non-temporal stores where the output
 * is TILEC_STREAM_OUT bytes or more, tests/cpu_math/stream_out.c):
 * Y (f32) and H (f16), written only by their copies, do, and the grid's
 * threads fence once after their blocks; Z, read before it is written,
 * and S, whose copy runs down its dims 0 and 1 (not along its rows), do
 * not.
 * shape: M=40,N=29
 * shape: M=32,N=32
 * shape: M=70,N=33
 * expect-openmp: tilec_store_f32_out\(&Y\[
 * expect-openmp: tilec_store_f16_out\(&H\[
 * expect-openmp: #pragma omp for collapse\(2\) schedule\(static\) nowait
 * expect-openmp: tilec_stream_fence\(\);
 * reject-openmp: tilec_store_f32_out\(&Z
 * reject-openmp: _out\(&S
 */
#include <tilec.h>

TILE_KERNEL void
stream_forms(int M, int N, const f32 X[M][N], f32 Y[N][M], f16 H[N][M],
	     f32 Z[M][N], f32 S[N][M][3])
{
	int bx = tile_grid_x(ceildiv(N, 32));
	int by = tile_grid_y(ceildiv(M, 32));
	tile_shared f32 x[32][32];
	tile_shared f32 t[32][32];
	tile_shared f32 z[32][32];
	tile_shared f32 u[32][32];

	tile_copy(x, &X[by * 32][bx * 32]);
	tile_copy(z, &Z[by * 32][bx * 32]);
	tile_parallel(j, 32) tile_parallel(i, 32)
		t[j][i] = x[i][j];
	tile_parallel(j, 32) tile_parallel(i, 32)
		u[j][i] = z[i][j];
	tile_copy(&Y[bx * 32][by * 32], t);
	tile_copy(&H[bx * 32][by * 32], t);
	tile_copy(&Z[by * 32][bx * 32], u);
	tile_copy(tile_dims(&S[bx * 32][by * 32][1], 0, 1), t);
}
