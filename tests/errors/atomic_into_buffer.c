// expect: 9:18: error: tile_atomic_add adds into a tensor region; 'y' is a buffer
#include <tilec.h>

TILE_KERNEL void k(int M, f32 Y[M])
{
	tile_fragment f32 x[64];
	tile_fragment f32 y[64];
	tile_clear(x);
	tile_atomic_add(y, x);
}
