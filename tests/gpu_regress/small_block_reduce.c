/* A block smaller than a wave: tile_threads(32) on HIP's 64-lane waves,
 * reducing a shared tile.  smem_reduce stepped over its outputs by
 * THREADS / WARP, which is 0 (a hang), and its shuffles read lanes that
 * do not exist (tests/gen/FINDINGS.md, bug 4).
 * S[r] = sum of X[r][:], Q[r] = max of I[r][:].
 * shape: M=50,N=40
 * shape: M=8,N=64
 */
#include <tilec.h>

TILE_KERNEL void
small_block_reduce(int M, int N, const f32 X[M][N], const i32 I[M][N],
		   f32 S[M], i32 Q[M])
{
	tile_threads(32);
	int b = tile_grid_x(ceildiv(M, 8));
	tile_shared f32 x[8][64];
	tile_shared i32 v[8][64];
	tile_shared f32 s[8];
	tile_shared i32 q[8];
	tile_copy(x, &X[b * 8][0]);
	tile_copy(v, &I[b * 8][0]);
	tile_reduce_sum(s, x, 1);
	tile_reduce_max(q, v, 1);
	tile_copy(&S[b * 8], s);
	tile_copy(&Q[b * 8], q);
}
