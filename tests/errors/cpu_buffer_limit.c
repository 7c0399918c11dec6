// expect: 9:20: error: buffer 'x' (4 MiB) brings the buffers of kernel 'k' to 4 MiB per block; the openmp target allows 1 MiB (a block's buffers live on its thread's stack and should stay in cache)
// args: -t openmp --arch avx512
#include <tilec.h>

TILE_KERNEL void
k(int M, int N, const f32 X[M][N], f32 Y[M][N])
{
	int bm = tile_grid_x(ceildiv(M, 1024));
	tile_fragment f32 x[1024][1024];
	tile_copy(x, &X[bm * 1024][0]);
	tile_copy(&Y[bm * 1024][0], x);
}
