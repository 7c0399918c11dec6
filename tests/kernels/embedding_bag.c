/* EmbeddingBag (sum, with per-sample weights): Y[b] = sum over l of
 * psw[b][l] * W[ids[b][l]].  Each block gathers BLOCK_L rows of its bag
 * at a time (tile_rows), bounded to the L ids the bag has: past L the id
 * tile reads zeros, and 0 is a row.  Ids outside the table (-1 pads a
 * bag) read as zero rows.
 * shape: B=5,L=70,V=300,D=200
 * shape: B=1,L=1,V=1,D=1
 * run: --range ids=-1:V
 */
#include <tilec.h>

TILE_PARAM(BLOCK_L, 32);
TILE_PARAM(BLOCK_D, 128);

TILE_KERNEL void
embedding_bag(int B, int L, int V, int D, const i32 ids[B][L],
	      const f32 psw[B][L], const f16 W[V][D], f32 Y[B][D])
{
	tile_threads(128);
	int bd = tile_grid_x(ceildiv(D, BLOCK_D));
	int b = tile_grid_y(B);

	tile_shared i32 idx[BLOCK_L];
	tile_shared f32 wt[BLOCK_L];
	tile_shared f16 rows[BLOCK_L][BLOCK_D];
	tile_fragment f32 e[BLOCK_L][BLOCK_D];
	tile_fragment f32 y[BLOCK_D];

	tile_clear(y);
	for (int c = 0; c < ceildiv(L, BLOCK_L); c++) {
		tile_copy(idx, &ids[b][c * BLOCK_L]);
		tile_copy(wt, &psw[b][c * BLOCK_L]);
		tile_copy(rows, tile_bounded(tile_rows(&W[0][bd * BLOCK_D], idx),
					     L - c * BLOCK_L));
		tile_parallel(l, BLOCK_L) {
			tile_parallel(d, BLOCK_D) {
				e[l][d] = wt[l] * (float)rows[l][d];
			}
		}
		tile_reduce_sum(y, e, 0, TILE_ACCUMULATE);
	}
	tile_copy(&Y[b][bd * BLOCK_D], y);
}
