/* A name valid in C that the CUDA and HIP output, C++, cannot use: a C++
 * keyword (here a parameter `new`) is a located error on those targets,
 * not generated code that fails to compile.  The CPU target takes it. */
// args: -t cuda
// expect: 10:13: error: 'new' cannot name a variable in cuda output: it is a C++ keyword; rename it
#include <tilec.h>

TILE_KERNEL void
scale(int N,
      float new, const f32 X[N], f32 Y[N])
{
	tile_threads(128);
	int b = tile_grid_x(ceildiv(N, 128));
	tile_fragment f32 x[128];
	tile_copy(x, &X[b * 128]);
	tile_parallel(i, 128)
		x[i] = x[i] * new;
	tile_copy(&Y[b * 128], x);
}
// printer-error: the names a target's printed language can use are the printer's to know
