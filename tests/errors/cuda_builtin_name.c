/* A variable named as a built-in the kernel's code uses (here blockIdx,
 * which every kernel reads for its grid) is a located error on the HIP
 * target too, not generated code that fails to compile. */
// args: -t hip
// expect: 13:6: error: 'blockIdx' cannot name a variable in hip output: the kernel's code uses the built-in or function of that name; rename it
#include <tilec.h>

TILE_KERNEL void
shift(int N, const f32 X[N], f32 Y[N])
{
	tile_threads(128);
	int b = tile_grid_x(ceildiv(N, 128));
	int blockIdx = b * 128;
	tile_fragment f32 x[128];
	tile_copy(x, &X[blockIdx]);
	tile_copy(&Y[blockIdx], x);
}
// printer-error: the names a target's printed language can use are the printer's to know
