/* A name printed as code in the output must be a plain ASCII identifier:
 * clang accepts '$' and extended characters, the generated code's
 * compilers (and readers) need not. */
#include <tilec.h>

TILE_KERNEL void
scale(int N, const f32 X[N], f32 Y$[N])
// expect: 7:34: error: 'Y$' is not a plain ASCII identifier ([A-Za-z_][A-Za-z0-9_]*); generated code uses it as a name
{
	int bx = tile_grid_x(ceildiv(N, 128));
	tile_fragment f32 x[128];
	tile_copy(x, &X[bx * 128]);
	tile_copy(&Y$[bx * 128], x);
}
