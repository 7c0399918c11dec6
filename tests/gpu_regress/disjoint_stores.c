/*
 * Tile stores to one tensor that share no element need no barrier
 * between them (barrier.c): the two halves of each row of Y (origins 64
 * apart, 64-wide tiles), and the same stores one iteration of i later
 * (the row moves by one, a dim the tiles do not cover).  Nothing else
 * is shared, so the kernel has no barrier at all.  Ragged: the last
 * block's rows and the tokens past T.
 * shape: T=37,H=5
 * shape: T=8,H=16
 * reject-ir: ^\s*barrier
 * expect-ir: copy Y\[bt \* 4 \+ i, bh \* 16, 64\] dims \(1, 2\) <- b
 */
#include <tilec.h>

TILE_KERNEL void
halves(int T, int H, const f16 X[T][H][128], f16 Y[T][H][128])
{
	tile_threads(128);
	int bt = tile_grid_x(ceildiv(T, 4));
	int bh = tile_grid_y(ceildiv(H, 16));
	tile_fragment f32 a[16][64], b[16][64];
	for (int i = 0; i < min(4, T - bt * 4); i++) {
		tile_copy(a, tile_dims(&X[bt * 4 + i][bh * 16][0], 1, 2));
		tile_copy(b, tile_dims(&X[bt * 4 + i][bh * 16][64], 1, 2));
		tile_parallel(h, 16) tile_parallel(j, 64) {
			float t = a[h][j];
			a[h][j] = b[h][j] * 2.0f;
			b[h][j] = t - 1.0f;
		}
		tile_copy(tile_dims(&Y[bt * 4 + i][bh * 16][0], 1, 2), a);
		tile_copy(tile_dims(&Y[bt * 4 + i][bh * 16][64], 1, 2), b);
	}
}
