/* A thread count whose product overflows an int once the tunables are
 * bound (clang sees only the defaults). */
// args: -D T=65536
#include <tilec.h>

TILE_PARAM(T, 8, 8, 16);

TILE_KERNEL void
scale(int N, const f32 X[N], f32 Y[N])
{
	tile_threads(T * T);
// expect: 11:15: error: thread count of 'scale' overflows: a step of it does not fit its C type (int, for tunables and literals)
	int bx = tile_grid_x(ceildiv(N, 128));
	tile_fragment f32 x[128];
	tile_copy(x, &X[bx * 128]);
	tile_copy(&Y[bx * 128], x);
}
