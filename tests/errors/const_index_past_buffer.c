// expect: 13:19: error: this index of 's' reaches 8, outside its 8 elements along dim 1: guard it with an if, or shrink the loop
#include <tilec.h>

TILE_KERNEL void
k(int M, f32 R[M])
{
	tile_threads(32);
	tile_shared f32 s[4][8];
	tile_fragment f32 r[32];
	tile_parallel(i, 4) tile_parallel(j, 8)
		s[i][j] = i < 2 ? s[i][j + 1 > 7 ? 7 : j + 1] : 0.0f;
	tile_parallel(i, 32)
		r[i] = s[i / 8][8] + (i < 16 && s[3][i] > 0.0f);
	tile_copy(&R[0], r);
}
