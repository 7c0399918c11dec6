// expect: 9:27: error: the extent of tile_parallel loop 'i' reads 'cnt', which the loop writes
#include <tilec.h>

TILE_KERNEL void
k(int M, int n, const f32 X[M][64], const i32 I[M], f32 Y[M][64])
{
	tile_shared i32 cnt[16];
	tile_copy(cnt, &I[0]);
	tile_parallel(i, min(16, cnt[3]))
		cnt[i] = 0;
}
