/*
 * standalone_two_kernels.c - a file of two kernels translated with
 * --standalone for cuda or hip inlined the helper headers once per
 * kernel: the second copy redefines every helper (nvcc and hipcc
 * errors).  Found by tests/gen/fuzz.py on every multi-kernel file; fixed
 * in emitters/gpu.c: the helpers are inlined once per output, before its
 * first kernel.
 *   tilec standalone_two_kernels.c -t cuda --standalone -o k.cu && nvcc -cubin k.cu
 */
#include <tilec.h>

TILE_KERNEL void
scale(int M, int N, const f32 X[M][N], f32 Y[M][N])
{
	tile_threads(128);
	int b0 = tile_grid_x(ceildiv(M, 16));
	tile_fragment f32 x[16][32];
	tile_copy(x, &X[b0 * 16][0]);
	tile_parallel(i, 16) tile_parallel(j, 32)
		x[i][j] = x[i][j] * 2.0f;
	tile_copy(&Y[b0 * 16][0], x);
}

TILE_KERNEL void
colmax(int M, int N, const f32 X[M][N], f32 Y[N])
{
	tile_threads(64);
	int b0 = tile_grid_x(ceildiv(N, 32));
	tile_fragment f32 x[16][32];
	tile_fragment f32 m[32];
	tile_copy(x, &X[0][b0 * 32]);
	tile_reduce_max(m, x, 0);
	tile_copy(&Y[b0 * 32], m);
}
