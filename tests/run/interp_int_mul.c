/* Integers of opposite signs multiplied: the reference interpreter once
 * computed the product as unsigned and clamped it (-2 * 3 gave -1024),
 * failing the correct compiled kernel.  Run by tests/meson.build
 * (run-interp-int-mul); tests/unit/test_interp.c checks every integer
 * operation against C. */
#include <tilec.h>

TILE_KERNEL void
interp_int_mul(int N, const i32 X[N], i32 Y[N])
{
	tile_parallel(j, 8) {
		if (j < N)
			Y[j] = X[j] * 3;
	}
}
