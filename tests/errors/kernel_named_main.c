/* A kernel named main: a C function like any other on the CPU target, but
 * C++ keeps the name for the program's entry, so the CUDA and HIP output
 * cannot give it to a kernel: a located error there. */
// args: -t cuda
// expect: 9:1: error: 'main' cannot name a kernel in cuda output: C++ keeps it for the program's entry; rename it
#include <tilec.h>

TILE_KERNEL void
main(int N, const f32 X[N], f32 Y[N])
{
	tile_threads(128);
	int b = tile_grid_x(ceildiv(N, 128));
	tile_fragment f32 x[128];
	tile_copy(x, &X[b * 128]);
	tile_copy(&Y[b * 128], x);
}
// printer-error: the names a target's printed language can use are the printer's to know
