/*
 * gpu_u8_cast.c - reduced from tests/gen/tilegen.py seed 1 kernel k4
 * (features +int_fragment,+neg_origin; the H200 run of 2026-12-01 and the
 * HIP emulator): a cast to u8 or i8 printed as (int) on CUDA and HIP, the
 * value type of 8-bit integers, so it did not wrap: (u8)(-5) stayed -5,
 * min(1, (u8)x) was -5 where the reference has 1, and the u8 register
 * fragment assigned from it kept values past 255 until its store.  Fixed
 * in emitters/gpu.c (hook_convert): a cast to an 8-bit integer converts
 * to its storage type.  The shared copy of an i8 into an i16-less u8
 * tile also needs the cast to wrap.
 *   tilec run gpu_u8_cast.c --shape M=53 --tol 0
 */
#include <tilec.h>
TILE_KERNEL void
k(int M, const i8 X[M], i8 Y[M], u8 Z[M])
{
	tile_threads(64);
	int b0 = tile_grid_x(ceildiv(M, 16));
	tile_fragment u8 x0[16];
	tile_fragment i64 x1[16];
	tile_shared i32 s[16];
	tile_fill(x0, 1);
	tile_parallel(i, 16) {
		if (b0 * 16 + i < M)
			x1[i] = X[b0 * 16 + i];
		else
			x1[i] = 0;
	}
	tile_parallel(i, 16) {
		x0[i] += min(1, (u8)(x1[i])) & 7;
		s[i] = (i8)((u8)(x1[i]) + 100) / 3;
	}
	tile_parallel(i, 16) {
		x0[i] = x0[i] * 200 / 7;
		s[i] += (u8)(s[i] * 3) >> 1;
	}
	tile_copy(&Y[b0 * 16], x0);
	tile_copy(&Z[b0 * 16], s);
}
