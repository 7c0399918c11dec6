// expect: 8:3: error: tile_pipelined cannot be inside a tile_parallel loop
#include <tilec.h>

TILE_KERNEL void k(int M, f32 Y[M])
{
	tile_fragment f32 x[64];
	tile_parallel(i, 64) {
		tile_pipelined(k, M, 2) {
			x[i] = 1.0f;
		}
	}
}
