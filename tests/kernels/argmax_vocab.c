/* Greedy decoding's argmax over a long vocabulary: each row's largest
 * logit and its index, the first one on ties (as torch.argmax).  Rows
 * of any length: each chunk's argmax (tile_reduce_argmax) is merged
 * into a running best, which keeps the earlier chunk's index on a tie.
 * Columns past V are set to -inf so they never win.
 * shape: B=5,V=50000
 * shape: B=1,V=1
 * shape: B=9,V=1000
 * run: --range X=-3:3
 */
#include <tilec.h>

TILE_PARAM(BLOCK_B, 2);
TILE_PARAM(BLOCK_V, 1024);

TILE_KERNEL void
argmax_vocab(int B, int V, const f32 X[B][V], i32 Y[B])
{
	tile_threads(256);
	int bb = tile_grid_x(ceildiv(B, BLOCK_B));

	tile_shared f32 x[BLOCK_B][BLOCK_V];
	tile_shared f32 cmax[BLOCK_B];
	tile_shared i32 carg[BLOCK_B];
	tile_shared f32 best[BLOCK_B];
	tile_shared i32 arg[BLOCK_B];

	tile_fill(best, -INFINITY);
	tile_clear(arg);
	for (int c = 0; c < ceildiv(V, BLOCK_V); c++) {
		tile_copy(x, &X[bb * BLOCK_B][c * BLOCK_V]);
		tile_parallel(i, BLOCK_B) {
			tile_parallel(j, BLOCK_V) {
				x[i][j] = c * BLOCK_V + j < V ? x[i][j] : -INFINITY;
			}
		}
		tile_reduce_argmax(cmax, carg, x, 1);
		tile_parallel(i, BLOCK_B) {
			if (cmax[i] > best[i]) {
				best[i] = cmax[i];
				arg[i] = c * BLOCK_V + carg[i];
			}
		}
	}
	tile_copy(&Y[bb * BLOCK_B], arg);
}
