/* abs of an i32: abs(INT_MIN) does not fit (undefined in C), which the
 * reference reports with its location (run.sh, case abs).
 * Y[i] = abs(X[i]).
 */
#include <tilec.h>

TILE_KERNEL void
abs_overflow(int N, const i32 X[N], i32 Y[N])
{
	int b = tile_grid_x(ceildiv(N, 64));
	tile_parallel(i, 64) {
		int n = b * 64 + i;
		if (n < N)
			Y[n] = abs(X[n]);
	}
}
