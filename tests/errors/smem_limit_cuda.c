// expect: 6:1: error: kernel 'k' needs 262144 bytes of shared memory (a 131072, b 131072); cuda sm_80 allows 166912 per block
// args: -t cuda --arch sm_80 --emit=ir
#include <tilec.h>

TILE_KERNEL void
k(int M, int N, const f16 X[M][N], f16 Y[M][N])
{
	int bm = tile_grid_x(ceildiv(M, 256));
	tile_shared f16 a[256][256];
	tile_shared f16 b[256][256];
	tile_copy(a, &X[bm * 256][0]);
	tile_copy(b, a);
	tile_copy(&Y[bm * 256][0], b);
}
