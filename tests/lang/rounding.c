/* The rounding functions and integer abs, against the reference, whose
 * results are C's (docs/language.md, "Scalars and expressions").  Even
 * elements take the random input scaled by 8 (exact); the others are
 * steps around zero: n % 4 == 1 ties, (n - N/2) / 2 for odd n - N/2 (k +
 * 0.5 of both signs: roundf takes them away from zero, rintf to even),
 * n % 4 == 3 quarter steps, (n - N/2) / 4.  Results
 * are stored as i32 and compared exactly.
 * shape: N=1000
 * shape: N=76
 * run: --range X=-300:300,K=-1000000:1000000
 */
#include <tilec.h>

TILE_PARAM(BLOCK, 128);

TILE_KERNEL void
rounding(int N, const f32 X[N], const i32 K[N], i32 R[N], i32 RI[N],
	 i32 FL[N], i32 CE[N], i32 TR[N], i32 A[N])
{
	tile_threads(128);
	int b = tile_grid_x(ceildiv(N, BLOCK));
	tile_parallel(i, BLOCK) {
		int n = b * BLOCK + i;
		if (n < N) {
			float v = X[n] * 8.0f;
			if (n % 4 == 1)
				v = (float)(n - N / 2) * 0.5f;
			if (n % 4 == 3)
				v = (float)(n - N / 2) * 0.25f;
			R[n] = (i32)roundf(v);
			RI[n] = (i32)rintf(v);
			FL[n] = (i32)floorf(v);
			CE[n] = (i32)ceilf(v);
			TR[n] = (i32)truncf(v);
			A[n] = abs(K[n] * 1000 + n - N / 2);
		}
	}
}
