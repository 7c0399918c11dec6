// expect: 7:12: error: tile_grid_x must be a statement at the top of the kernel body, not inside a loop or branch
#include <tilec.h>

TILE_KERNEL void k(int M, f32 Y[M])
{
	for (int i = 0; i < 2; i++) {
		int bx = tile_grid_x(M);
	}
}
