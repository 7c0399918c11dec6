/* tile_sum, tile_min and tile_max with 96 threads, which are not whole
 * warps on CUDA (32) or HIP (64): every fragment stays in shared memory
 * and the block combines through a value per thread.  An i32 sum is
 * exact, an f64 one combines in double, an i32 max goes into an f32
 * local (converted once), an f16 tile's min is an f32.
 * shape: N=1000
 * shape: N=33
 * run: --range X=-100000:100000
 */
#include <tilec.h>

TILE_PARAM(BLOCK, 200);

TILE_KERNEL void
reduce_all_threads(int N, const i32 X[N], const f64 D[N], const f16 H[N],
		   i32 S[N], f64 SD[N], f32 MX[N], f32 MN[N])
{
	tile_threads(96);
	int b = tile_grid_x(ceildiv(N, BLOCK));
	tile_fragment i32 x[BLOCK];
	tile_fragment f64 d[BLOCK];
	tile_shared f16 h[BLOCK];
	tile_copy(x, &X[b * BLOCK]);
	tile_copy(d, &D[b * BLOCK]);
	tile_copy(h, &H[b * BLOCK]);
	int s = tile_sum(x);
	double sd = tile_sum(d);
	float mx = tile_max(x);
	float mn = tile_min(h);
	tile_parallel(i, BLOCK) {
		int n = b * BLOCK + i;
		if (n < N) {
			S[n] = s + x[i];
			SD[n] = sd * d[i];
			MX[n] = mx;
			MN[n] = mn;
		}
	}
}
