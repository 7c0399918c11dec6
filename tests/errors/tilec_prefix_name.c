/* Names beginning with tilec_ are the generated code's own (its helpers,
 * its shared-memory array): a program's is an error where it is declared,
 * on every target, not a helper hidden in the output. */
// expect: 9:13: error: 'tilec_ceildiv' begins with 'tilec_', which names the generated code's own helpers; rename it
#include <tilec.h>

TILE_KERNEL void
scale(int N, const f32 X[N], f32 Y[N],
      float tilec_ceildiv)
{
	tile_threads(128);
	int b = tile_grid_x(ceildiv(N, 128));
	tile_fragment f32 x[128];
	tile_copy(x, &X[b * 128]);
	tile_parallel(i, 128)
		x[i] = x[i] * tilec_ceildiv;
	tile_copy(&Y[b * 128], x);
}
