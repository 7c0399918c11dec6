/* A CUDA block has at most 1024 threads; 2048 was accepted. */
// args: -t cuda
#include <tilec.h>

TILE_KERNEL void
scale(int N, const f32 X[N], f32 Y[N])
{
	tile_threads(2048);
// expect: 8:15: error: thread count of 'scale' is 2048; cuda/sm_80 allows at most 1024
	int bx = tile_grid_x(ceildiv(N, 2048));
	tile_fragment f32 x[2048];
	tile_copy(x, &X[bx * 2048]);
	tile_copy(&Y[bx * 2048], x);
}
