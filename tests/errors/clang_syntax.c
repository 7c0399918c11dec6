// expect: 6:18: error: expected ';' after expression
#include <tilec.h>

TILE_KERNEL void k(int M, f32 Y[M])
{
	tile_threads(64)
	tile_grid_x(M);
}
