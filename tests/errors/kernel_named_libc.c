/* A kernel named like a C library function: the generated code includes
 * math.h (and stdlib.h, string.h, stdio.h), whose declaration of exp
 * conflicts with the kernel's, so no backend's output would compile. */
// expect: 8:1: error: 'exp' cannot name a kernel: a kernel is an external function of the generated code, and the C library it includes declares one of that name; rename it
#include <tilec.h>

TILE_KERNEL void
exp(int N, const f32 X[N], f32 Y[N])
{
	tile_parallel(i, 64)
		if (i < N)
			Y[i] = expf(X[i]);
}
