/* Tile copies into and out of shared memory whose origins may be negative
 * along both dims: elements before the tensor's first row or column are
 * not read (zeros in the tile) and not written.  Y[i][j] = X[i][j] over
 * the rows each block covers and columns c0 .. c0 + 31; the rest of Y is
 * untouched.  c0 = -4 with N = 32 keeps the source 16-byte aligned, so
 * the vector paths see a negative origin too.
 * shape: M=40,N=30,r0=-3,c0=-5
 * shape: M=40,N=30,r0=2,c0=3
 * shape: M=40,N=32,r0=-1,c0=-4
 * shape: M=7,N=32,r0=-16,c0=0
 */
#include <tilec.h>

TILE_KERNEL void
neg_origin_shared(int M, int N, int r0, int c0, const f32 X[M][N], f32 Y[M][N])
{
	int b = tile_grid_x(ceildiv(M, 16));
	tile_shared f32 s[16][32];
	tile_copy(s, &X[b * 16 + r0][c0]);
	tile_copy(&Y[b * 16 + r0][c0], s);
}
