// expect: 8:27: error: the cuda backend does not support i4 tensors yet ('W')
// args: -t cuda
// An i4 tensor copied into a tile is a located error for cuda (the layout
// pass once divided by an i4's bits / 8 and stopped tilec with SIGFPE).
#include <tilec.h>

TILE_KERNEL void
i4_tensor(int N, const i4 W[N], f32 Y[N])
{
	int b = tile_grid_x(ceildiv(N, 64));
	tile_fragment f32 w[64];
	tile_copy(w, &W[b * 64]);
	tile_copy(&Y[b * 64], w);
}

// printer-error: the GPU printer rejects i4 tensors (emitters/gpu.c), so
// --emit=ir and --emit=launch do not report it yet (issue 13)
