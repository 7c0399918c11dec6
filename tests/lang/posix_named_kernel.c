/* A kernel named like a POSIX function the C library exports (dup), not
 * one of the headers the generated code includes: legal, and on the CPU
 * the entry calls the kernel, not libc's dup (the runtime links the
 * object with -Bsymbolic; the kernel once never ran, its output left
 * unwritten).
 * shape: N=8
 * shape: N=37
 */
#include <tilec.h>

TILE_KERNEL void
dup(int N, const f32 X[N], f32 Y[N])
{
	tile_threads(32);
	int b = tile_grid_x(ceildiv(N, 16));
	tile_fragment f32 x[16];
	tile_copy(x, &X[b * 16]);
	tile_parallel(i, 16)
		x[i] = x[i] * 3.0f;
	tile_copy(&Y[b * 16], x);
}
