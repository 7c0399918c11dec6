// expect: 11:22: error: the bound of loop 'c' is f32; loop bounds must be integers
#include <tilec.h>

/* A float bound passed check and failed the verifier (C would compare the
 * int counter in float). */
TILE_KERNEL void k(int N, const f32 X[N], f32 Y[N])
{
	tile_fragment f32 x[64];
	float chunks = ceildiv(N, 64);
	tile_clear(x);
	for (int c = 0; c < chunks; c++)
		tile_copy(x, &X[c * 64]);
	tile_copy(&Y[0], x);
}
