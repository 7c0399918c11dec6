/* The saturating casts and fmaf, log1pf, expm1f against the reference.
 * sat_*: the value rounds to nearest, ties to even, and clamps; NaN
 * gives 0.  The inputs reach every case: random values past the i8 and
 * u8 ranges (X in -300 .. 300), half steps around zero (every tie),
 * NaN (sqrtf of a negative) and both infinities, and for sat_i32 values
 * scaled by 2^24 past its range.  The integer outputs compare exactly.
 * F holds fmaf(x, x, -(x * x)) * 2^24: the rounding error of x * x,
 * which only a fused multiply-add sees (a * b + c gives 0).
 * shape: N=1000
 * shape: N=60
 * run: --range X=-300:300
 */
#include <tilec.h>

TILE_PARAM(BLOCK, 256);

TILE_KERNEL void
quantize(int N, const f32 X[N], i8 Q8[N], u8 QU[N], i32 Q32[N], f32 F[N],
	 f32 L[N], f32 E[N])
{
	tile_threads(128);
	int b = tile_grid_x(ceildiv(N, BLOCK));
	tile_parallel(i, BLOCK) {
		int n = b * BLOCK + i;
		if (n < N) {
			float x = X[n];
			float v = x;
			if (n % 4 == 1)
				v = (float)(n - N / 2) * 0.5f;
			if (n % 16 == 3)
				v = sqrtf(-1.0f - fabsf(x));
			if (n % 16 == 7)
				v = x * INFINITY;
			Q8[n] = sat_i8(v);
			QU[n] = sat_u8(v);
			Q32[n] = sat_i32(v * 16777216.0f);
			float y = x / 256.0f;
			F[n] = fmaf(y, y, -(y * y)) * 16777216.0f;
			L[n] = log1pf(x / 512.0f);
			E[n] = expm1f(x / 512.0f);
		}
	}
}
