/* A histogram of bin ids with atomics: each block counts its BLOCK
 * elements per bin (one iteration per bin, a serial scan over the tile),
 * then adds its counts into H with one tile_atomic_add.  Elements past N
 * read as 0, which is a bin: the scan stops at the block's valid count.
 * Ids outside 0 .. NB-1 are not counted.
 * shape: N=5000,NB=37
 * shape: N=1,NB=1
 * shape: N=300,NB=64
 * run: --range X=-2:NB+1
 */
#include <tilec.h>

TILE_PARAM(BLOCK, 512);
TILE_PARAM(BINS, 64);

TILE_KERNEL void
histogram(int N, int NB, const i32 X[N], i32 H[NB])
{
	tile_threads(128);
	int bx = tile_grid_x(ceildiv(N, BLOCK));

	tile_shared i32 x[BLOCK];
	tile_shared i32 cnt[BINS];

	tile_copy(x, &X[bx * BLOCK]);
	int valid = min(BLOCK, N - bx * BLOCK);
	tile_parallel(b, BINS) {
		int c = 0;
		for (int i = 0; i < valid; i++)
			c += x[i] == b ? 1 : 0;
		cnt[b] = c;
	}
	tile_atomic_add(&H[0], cnt);
}
