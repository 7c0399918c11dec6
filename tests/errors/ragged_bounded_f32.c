// expect: 11:35: error: tile_bounded's extents are integers, not f32
/* tile_bounded given an f32 extent: C promotes it to double (the
 * function is variadic), and the error once named f64. */
#include <tilec.h>

TILE_KERNEL void
bf(int N, float n, const f32 X[N], f32 Y[N])
{
	tile_threads(32);
	tile_fragment f32 x[16];
	tile_copy(x, tile_bounded(&X[0], n));
	tile_copy(&Y[0], x);
}
