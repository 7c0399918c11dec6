// expect: 9:12: error: region [96, 160) of dim 1 is outside buffer 'big' (extent 128)
#include <tilec.h>

TILE_KERNEL void k(int M, const f32 X[M][64])
{
	tile_fragment f32 x[16][64];
	tile_shared f32 big[16][128];
	tile_copy(x, &X[0][0]);
	tile_copy(&big[0][96], x);
}
