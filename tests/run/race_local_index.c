/* Writes indexed through locals computed from the parallel variable.  The
 * race check rejected `Y[r]` with `int r = b * 64 + i` ("every iteration
 * writes the same element") though each iteration writes its own element;
 * it now follows locals through their definitions, branches and loops.
 * Run by tests/meson.build (run-race-local-index). */
#include <tilec.h>

TILE_KERNEL void
race_local_index(int N, const f32 X[N], f32 Y[N], f32 Z[N])
{
	int b = tile_grid_x(ceildiv(N, 64));
	tile_fragment f32 x[64];
	tile_copy(x, &X[b * 64]);
	tile_parallel(i, 64) {
		int r = b * 64 + i;
		if (r < N)
			Y[r] = 2.0f * x[i];
		/* Both branches keep the dependence on i; so does the loop. */
		int q;
		if (x[i] > 0.0f)
			q = r;
		else
			q = r + 0;
		for (int t = 0; t < 2; t++)
			q = q + 0 * t;
		if (q < N)
			Z[q] = x[i] + 1.0f;
	}
}
