/* Appending a decode step's keys to a contiguous KV cache: sequence b
 * holds its first pos[b] tokens already; its nnew[b] new ones (at most
 * TNEW, the rest of Knew is padding) go to rows pos[b] .. pos[b] +
 * nnew[b] - 1 of its cache.  A bounded store at a run-time origin: the
 * rows past the new ones, and the whole cache around them, are left as
 * they were (tilec run checks they keep the poison).  Rows past MAXS are
 * dropped, as a tile store past the edge is.
 * shape: B=3,TNEW=20,H=2,MAXS=100
 * shape: B=1,TNEW=1,H=1,MAXS=2
 * run: --range pos=0:MAXS-1,nnew=0:TNEW
 */
#include <tilec.h>

TILE_PARAM(HEAD_D, 64);
TILE_PARAM(BLOCK_T, 16);

TILE_KERNEL void
kv_append(int B, int TNEW, int H, int MAXS, const f16 Knew[B][TNEW][H][HEAD_D],
	  const i32 pos[B], const i32 nnew[B], f16 Kc[B][MAXS][H][HEAD_D])
{
	tile_threads(64);
	int h = tile_grid_x(H);
	int b = tile_grid_y(B);

	tile_shared f16 k[BLOCK_T][HEAD_D];

	int start = pos[b];
	int count = nnew[b];
	for (int c = 0; c < ceildiv(TNEW, BLOCK_T); c++) {
		tile_copy(k, tile_dims(&Knew[b][c * BLOCK_T][h][0], 1, 3));
		tile_copy(tile_bounded(tile_dims(&Kc[b][start + c * BLOCK_T][h][0],
						 1, 3), count - c * BLOCK_T), k);
	}
}
