/* fp8 tensors on every backend: stores into fp8e4m3 and fp8e5m2 round to
 * nearest even (E4M3 gives NaN from 464 up, E5M2 infinity from 61440
 * up), loads are exact, and arithmetic is in f32.  The inputs reach
 * every case: X in -600 .. 600 (past E4M3's range), small values scaled
 * into both types' subnormals, half-way values, NaN and infinities.
 * The GPU conversions are integer code that must agree with the
 * reference bit for bit: R4 and R5 hold the rounded values as f32,
 * compared at f32's tolerance, not fp8's.
 * shape: N=1000
 * shape: N=37
 * run: --range X=-600:600 --tol 1e-6
 * C promotes the bytes tilec.h declares fp8 as to int; the tile language
 * promotes fp8 to f32, so W4[n] * 3.0f keeps W4's fraction:
 * expect-ir: Y\[n\] = \(f32\)W4\[n\] \* 3\.0f \+ \(f32\)W5\[n\]
 * expect-cuda: tilec::from_float<tilec::fp8e4m3>
 * expect-hip: tilec::from_float<tilec::fp8e5m2>
 */
#include <tilec.h>

TILE_PARAM(BLOCK, 256);

TILE_KERNEL void
fp8_convert(int N, const f32 X[N], const fp8e4m3 W4[N], const fp8e5m2 W5[N],
	    fp8e4m3 E4[N], fp8e5m2 E5[N], f32 R4[N], f32 R5[N], f32 Y[N])
{
	tile_threads(128);
	int b = tile_grid_x(ceildiv(N, BLOCK));
	tile_parallel(i, BLOCK) {
		int n = b * BLOCK + i;
		if (n < N) {
			float x = X[n];
			float v = x;
			if (n % 8 == 1)
				v = x / 65536.0f;
			if (n % 8 == 2)
				v = x * 128.0f;
			if (n % 16 == 3)
				v = sqrtf(-1.0f - fabsf(x));
			if (n % 16 == 5)
				v = x * INFINITY;
			if (n % 16 == 7)
				v = (float)(n % 64) * 0.0078125f + 0.00390625f;
			E4[n] = v;
			E5[n] = v;
			R4[n] = (fp8e4m3)v;
			R5[n] = (fp8e5m2)v;
			Y[n] = W4[n] * 3.0f + W5[n];
		}
	}
}
