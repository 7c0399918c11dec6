// expect: 6:1: error: kernel 'k' needs 81920 bytes of shared memory (x 65536, s 16384); hip gfx90a allows 65536 per block; tile_fragment 'x' is there, not in registers, because an element of it is read or written outside tile_parallel at 13:16
// args: -t hip --emit=ir
#include <tilec.h>

TILE_KERNEL void
k(int M, const f32 X[M][128], f32 Y[M][128])
{
	int bm = tile_grid_x(ceildiv(M, 128));
	tile_fragment f32 x[128][128];
	tile_shared f32 s[32][128];
	tile_copy(x, &X[bm * 128][0]);
	tile_copy(s, &X[bm * 128][0]);
	float first = x[0][0] + s[0][0];
	tile_parallel(i, 128) tile_parallel(j, 128)
		x[i][j] = x[i][j] - first;
	tile_copy(&Y[bm * 128][0], x);
}
