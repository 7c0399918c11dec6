/* A run-time extent min(C, e) runs none when e is 0 or less, also when e
 * is a constant (a tunable that empties the loop for some tiling): the
 * loop is planned for C and runs nothing, where a constant extent of 0
 * is an error.  The generator found it (tests/gen, runtime_extent):
 * `tile_parallel(i, min(32, 0))` was rejected as an extent of 0.
 * shape: N=70
 * shape: N=5
 */
#include <tilec.h>
TILE_PARAM(EXTRA, 0);
TILE_KERNEL void
parallel_min_empty(int N, const f32 X[N], f32 Y[N])
{
	int b = tile_grid_x(ceildiv(N, 32));
	tile_fragment f32 x[32];
	tile_copy(x, &X[b * 32]);
	tile_parallel(i, min(32, EXTRA))
		x[i] = x[i] * 2.0f;
	tile_parallel(i, min(-3, 32))
		x[i] = x[i] + 1.0f;
	tile_parallel(i, min(32, EXTRA + 5))
		x[i] = x[i] - 0.5f;
	tile_copy(&Y[b * 32], x);
}
