/* Constants converted to fp8 round to the 8-bit float as any value does:
 * `fp8e4m3 a = 300;` holds 288, `= -0.3f` -0.3125, and an fp8e5m2 of
 * 1000 holds 1024.  clang sees fp8 as a byte (tilec.h), so to it the
 * first changes value "from 300 to 44", an error (constant conversion),
 * and 0.75f becomes 0, a warning: tilec rejected the program and warned
 * wrongly (tests/gen/FINDINGS.md, bug 27).  Y = X + 288 + 0.75 - 0.3125
 * - 1 + 1024 + 288, Z = 320.
 * shape: N=300
 * shape: N=37
 * run: --tol 1e-6
 */
#include <tilec.h>

TILE_KERNEL void
fp8_constant(int N, const f32 X[N], f32 Y[N], fp8e5m2 Z[N])
{
	tile_threads(128);
	int b = tile_grid_x(ceildiv(N, 128));
	tile_shared fp8e4m3 t[128];
	tile_fill(t, 300);
	tile_parallel(i, 128) {
		fp8e4m3 a = 300, c = 0.75f, d = -0.3f;
		fp8e5m2 e = -1, f = 1000;
		int n = b * 128 + i;
		if (n < N) {
			Y[n] = X[n] + a + c + d + e + f + t[i];
			Z[n] = 300;
		}
	}
}
