/* The reference stops (an i32 overflow: X + INT_MAX for X >= 1), and the
 * hint names the integer inputs that may be the cause: X, which the
 * kernel reads, not R, which it never touches (run.sh, case range).
 */
#include <tilec.h>

TILE_KERNEL void
unused_int_tensor(int N, const i32 X[N], i32 Y[N], i8 R[N])
{
	tile_threads(32);
	tile_parallel(i, 32) {
		if (i < N)
			Y[i] = X[i] + 2147483647;
	}
}
