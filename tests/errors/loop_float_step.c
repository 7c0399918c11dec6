// expect: 9:30: error: the step of loop 'c' is f32; loop steps must be integers
#include <tilec.h>

TILE_KERNEL void k(int N, float s, const f32 X[N], f32 Y[N])
{
	tile_fragment f32 x[64];
	tile_clear(x);
	/* A float step: the trip count would depend on float rounding. */
	for (int c = 0; c < N; c += s)
		tile_copy(x, &X[c]);
	tile_copy(&Y[0], x);
}
