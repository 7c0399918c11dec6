// expect: 10:3: error: 'total' is declared outside this tile_parallel loop and assigned inside it: iterations would race; declare it inside the loop, or keep per-iteration values in a buffer
#include <tilec.h>

TILE_KERNEL void k(int M, f32 Y[M])
{
	tile_fragment f32 x[64];
	float total = 0.0f;
	tile_clear(x);
	tile_parallel(i, 64)
		total += x[i];
}
