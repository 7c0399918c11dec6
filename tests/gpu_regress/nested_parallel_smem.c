/* A tile_parallel nest over a shared buffer whose outer body has a
 * statement of its own (the scalar k): the outer loop is spread over the
 * threads and the inner one runs in the thread of each outer iteration
 * (both were once strided by threadIdx.x, so thread t visited element
 * [t][t] alone).  Y[i][d] = X[i][d] * 2 * C[i].
 * shape: N=1
 * expect-ir: parallel d in 0 \.\. 128 serial in thread \{
 * reject-cuda: for \(int d = threadIdx\.x
 */
#include <tilec.h>

TILE_KERNEL void
nested_parallel_smem(int N, const f32 X[16][128], const f32 C[16],
		     f32 Y[16][128])
{
	tile_threads(128);
	tile_shared f32 x[16][128];
	tile_shared f32 c[16];
	tile_copy(x, &X[0][0]);
	tile_copy(c, &C[0]);
	tile_parallel(i, 16) {
		float k = 2.0f * c[i];
		tile_parallel(d, 128)
			x[i][d] *= k;
	}
	tile_copy(&Y[0][0], x);
}
