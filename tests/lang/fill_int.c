/* tile_fill of integer values converts them as an assignment does, never
 * through double: into i8 and u8 they wrap (X[0] * 100 = -200 gives 56,
 * -1 gives 255), and an i64 value past 2^53 stays exact (L[0] +
 * 9007199254740993 is odd, which no double near it is).
 * shape: N=40
 * shape: N=3
 * run: --range X=-2:-2,L=3000000000000000:3000000000000000
 */
#include <tilec.h>

TILE_KERNEL void
fill_int(int N, const i32 X[N], const i64 L[N], i8 Y[N], u8 Z[N], i64 W[N])
{
	tile_threads(32);
	int b = tile_grid_x(ceildiv(N, 32));
	tile_shared i8 y[32];
	tile_shared u8 z[32];
	tile_fragment i64 w[32];
	tile_fill(y, X[0] * 100);
	tile_fill(z, -1);
	tile_fill(w, L[0] + 9007199254740993LL);
	tile_copy(&Y[b * 32], y);
	tile_copy(&Z[b * 32], z);
	tile_copy(&W[b * 32], w);
}
