/*
 * embedding.c - Y[n][:] = table[ids[n]][:], an embedding lookup.
 *
 * The ids are row numbers of the table: random inputs in `tilec run`'s
 * default range (+-1 .. 7) index outside it, so the run needs
 * `--range ids=0:V-1`.  Each block gathers BLOCK_N rows; a row past N is
 * not written.
 */
#include <tilec.h>

TILE_PARAM(BLOCK_N, 4, 2, 4, 8);
TILE_PARAM(BLOCK_D, 64, 32, 64);

TILE_KERNEL void
embedding(int N, int V, int D, const i32 ids[N], const f16 table[V][D],
	  f16 Y[N][D])
{
	tile_threads(128);
	int bd = tile_grid_x(ceildiv(D, BLOCK_D));
	int bn = tile_grid_y(ceildiv(N, BLOCK_N));

	tile_parallel(i, BLOCK_N) tile_parallel(j, BLOCK_D) {
		if (bn * BLOCK_N + i < N && bd * BLOCK_D + j < D)
			Y[bn * BLOCK_N + i][bd * BLOCK_D + j] =
				table[ids[bn * BLOCK_N + i]][bd * BLOCK_D + j];
	}
}
