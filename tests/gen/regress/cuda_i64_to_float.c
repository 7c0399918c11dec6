/*
 * cuda_i64_to_float.c - reduced from tests/gen/tilegen.py seed 1 (kernel
 * k0): a reduce of an i64 shared tile into a float fragment.  The CUDA
 * helpers had to_float for float, double, half, bfloat16 and int, so
 * to_float(long long) was ambiguous and nvcc rejected the output (sm_80
 * and sm_90a; HIP's helpers had it).  Fixed in templates/cuda/tilec_cuda.cuh.
 *   tilec cuda_i64_to_float.c -t cuda --standalone -o k.cu && nvcc -cubin k.cu
 */
#include <tilec.h>

TILE_KERNEL void
k0(int M, int N, const i64 X[M][N], f32 Y[M])
{
	tile_threads(128);
	int b0 = tile_grid_x(ceildiv(M, 4));
	tile_shared i64 x[4][8];
	tile_fragment f32 s[4];
	tile_copy(x, &X[b0 * 4][0]);
	tile_reduce_sum(s, x, 1);
	tile_copy(&Y[b0 * 4], s);
}
