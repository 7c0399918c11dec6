// expect: 15:2: error: the cuda backend does not take i4 tile 'Xs' in tile_reduce_argmax/argmin yet; copy it to a wider type first
// args: -t cuda
// A packed i4 shared tile scanned by an arg-reduction: its helper reads
// whole elements, so it is a located error (copy it to i8 or wider first).
// The other reductions take i4 operands.
#include <tilec.h>

TILE_KERNEL void
i4_argmax(int M, const i4 X[M][64], i32 Y[M], i32 I[M])
{
	int b = tile_grid_x(ceildiv(M, 16));
	tile_shared i4 Xs[16][64];
	tile_shared i32 s[16], j[16];
	tile_copy(Xs, &X[b * 16][0]);
	tile_reduce_argmax(s, j, Xs, 1);
	tile_copy(&Y[b * 16], s);
	tile_copy(&I[b * 16], j);
}

// printer-error: the GPU printer rejects i4 operands of the
// arg-reductions (emitters/gpu.c), so --emit=ir and --emit=launch do not
// report it
