/*
 * omp_i4_wrap.c - reduced from tests/gen/tilegen.py seed 1 kernel k4
 * (feature +narrow_all; the first local run of the narrow types): the
 * OpenMP output held i4 values in int8_t and never wrapped them to 4 bits,
 * so the i4 fragment x0 assigned a u8 element 11 kept 11 where the
 * language (and the reference, and the GPUs) has -5, and every value
 * computed from it was off; casts to i4 and i4 locals were the same.
 * Fixed in emitters/openmp.c (tc_omp_rounds: a store into an i4 buffer
 * or local, a conversion to i4 and a reduction into i4 wrap through
 * tilec_round_i4, as the narrow floats round), bug 25.
 *   tilec run omp_i4_wrap.c --shape M=53 --tol 0
 */
#include <tilec.h>

TILE_KERNEL void
k(int M, const u8 X0[M], i4 Y5[M], i32 Y6[M])
{
	tile_threads(128);
	int b0 = tile_grid_x(ceildiv(M, 16));

	tile_fragment i4 x0[16];
	tile_shared u8 x1[16];
	tile_shared i32 x2[16];

	tile_parallel(i, 16) {
		if (b0 * 16 + i < M)
			x0[i] = X0[b0 * 16 + i];
		else
			x0[i] = 0;
	}
	tile_parallel(i, 16) {
		i4 s = x0[i] + 9;
		x1[i] = abs((i32)((i ^ (i * x0[i]))));
		x2[i] = s * 100 + (i4)(x0[i] * 3);
	}
	tile_copy(&Y5[b0 * 16], x1);
	tile_copy(&Y6[b0 * 16], x2);
}
