// expect: 13:18: error: use of undeclared identifier 'scale'
// Tests the error runner: the caret keeps the tabs before the column.
#include <tilec.h>

TILE_KERNEL void
scale_rows(int M, f32 Y[M])
{
	int b = tile_grid_x(ceildiv(M, 64));
	tile_fragment f32 y[64];
	tile_copy(y, &Y[b * 64]);
	tile_parallel(i, 64) {
		if (i > 0)
			y[i] = y[i] * scale;
	}
	tile_copy(&Y[b * 64], y);
}
