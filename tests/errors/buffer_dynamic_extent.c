// expect: 6:20: error: extent of 'x' must be a constant (literals and tunables)
#include <tilec.h>

TILE_KERNEL void k(int M, f32 Y[M])
{
	tile_shared f32 x[M];
}
