/* Tunables are numbered apart from a kernel's vars, so their numbers
 * meet those of parameters and locals: T11 has local e's.  The CPU's
 * explicit vectors once took T11 for a lane value (y's store did not
 * compile); it is uniform.  The many tunables and few vars also reach
 * past the kernel's var slots wherever a pass confuses the two.
 * shape: M=37,N=64
 * shape: M=3,N=64
 */
#include <tilec.h>

TILE_PARAM(T0, 1);
TILE_PARAM(T1, 1);
TILE_PARAM(T2, 1);
TILE_PARAM(T3, 1);
TILE_PARAM(T4, 1);
TILE_PARAM(T5, 1);
TILE_PARAM(T6, 1);
TILE_PARAM(T7, 1);
TILE_PARAM(T8, 1);
TILE_PARAM(T9, 1);
TILE_PARAM(T10, 1);
TILE_PARAM(T11, 1);
TILE_PARAM(T12, 1);
TILE_PARAM(T13, 1);
TILE_PARAM(T14, 1);
TILE_PARAM(T15, 1);
TILE_PARAM(BLOCK_M, 4);
TILE_PARAM(BLOCK_N, 64);

TILE_KERNEL void
many_tunables(int M, int N, const f32 X[M][N], f32 Y[M][N], f32 Z[M][N])
{
	int bm = tile_grid_x(ceildiv(M, BLOCK_M));
	tile_fragment f32 x[BLOCK_M][BLOCK_N];
	tile_fragment f32 y[BLOCK_M][BLOCK_N];
	tile_fragment f32 z[BLOCK_M][BLOCK_N];
	tile_copy(x, &X[bm * BLOCK_M][0]);
	tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N) {
		y[i][j] = (float)T11;
		float e = expf(x[i][j]);
		z[i][j] = e;
	}
	tile_copy(&Y[bm * BLOCK_M][0], y);
	tile_copy(&Z[bm * BLOCK_M][0], z);
}
