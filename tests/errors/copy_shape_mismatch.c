// expect: 9:2: error: tile_copy: shapes differ: 'xs' is 64x32, 'x' is 64x64
#include <tilec.h>

TILE_KERNEL void k(int M, f32 Y[M][64])
{
	tile_fragment f32 x[64][64];
	tile_shared f32 xs[64][32];
	tile_clear(x);
	tile_copy(xs, x);
}
