// expect: 15:3: error: every iteration of tile_parallel loop 'i' writes the same element of 'Y': index it by 'i', or move the write out of the loop
#include <tilec.h>

/* r depends on i only until the serial loop, which may overwrite it with
 * a value every iteration shares: the race check follows locals through
 * branches and loops and needs the dependence on every path. */
TILE_KERNEL void k(int N, const f32 X[N], f32 Y[N])
{
	tile_fragment f32 x[64];
	tile_copy(x, &X[0]);
	tile_parallel(i, 64) {
		int r = i;
		for (int t = 0; t < N; t++)
			r = t;
		Y[r] = x[i];
	}
}
