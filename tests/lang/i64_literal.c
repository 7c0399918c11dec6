/* i64 constants keep their type in the output even when their value
 * fits an int: a shift takes its type from its left operand alone, so
 * `1LL << 40` printed as `1 << 40` was a shift past int's width (0 on
 * the CPU, undefined in C), and `c ? 1LL << 35 : 0` the same.
 * shape: N=4
 * shape: N=9
 */
#include <tilec.h>

TILE_KERNEL void
i64_literal(int N, i64 Y[N], i64 Z[N])
{
	tile_threads(32);
	tile_fragment i64 y[8];
	long long s = 100000LL * 100000;
	tile_parallel(i, 8)
		y[i] = (1LL << (i + 33)) + (i % 2 ? 3LL << 33 : 0) + s;
	tile_copy(&Y[0], y);
	tile_parallel(i, 8) {
		if (i < N)
			Z[i] = -(1LL << 40) + i;
	}
}
