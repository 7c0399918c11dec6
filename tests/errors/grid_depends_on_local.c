// expect: 7:23: error: the grid extent along x cannot depend on 'n' (a local); use scalar parameters, tunables and constants
#include <tilec.h>

TILE_KERNEL void k(int M, f32 Y[M])
{
	int n = M * 2;
	int bx = tile_grid_x(n);
}
