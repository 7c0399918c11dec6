// expect: 8:34: error: the hip backend does not support i4 tensors yet ('X')
// args: -t hip
// A two-dim i4 tensor copied into a fragment is a located error for hip
// (the layout pass once stopped tilec with SIGFPE).
#include <tilec.h>

TILE_KERNEL void
i4_tensor(int M, int N, const i4 X[M][N], f32 Y[M][N])
{
	int bm = tile_grid_x(ceildiv(M, 16));
	tile_fragment f32 x[16][64];
	tile_copy(x, &X[bm * 16][0]);
	tile_copy(&Y[bm * 16][0], x);
}

// printer-error: the GPU printer rejects i4 tensors (emitters/gpu.c), so
// --emit=ir and --emit=launch do not report it yet (issue 13)
