/* A mixture-of-experts router: each token's E expert logits go through a
 * softmax, the TOPK largest probabilities are picked (tile_reduce_topk:
 * ties by the smaller expert id) and renormalized to sum to 1.  E is at
 * most BLOCK_E; the experts past E read as zero logits, so they are set
 * to -inf before the softmax and can never be picked.
 * shape: T=300,E=60
 * shape: T=1,E=2
 * shape: T=65,E=64
 */
#include <tilec.h>

TILE_PARAM(BLOCK_T, 16);
TILE_PARAM(BLOCK_E, 64);
TILE_PARAM(TOPK, 2);

TILE_KERNEL void
moe_router(int T, int E, const bf16 logits[T][E], i32 ids[T][TOPK],
	   f32 weights[T][TOPK])
{
	tile_threads(128);
	int bt = tile_grid_x(ceildiv(T, BLOCK_T));

	tile_shared f32 x[BLOCK_T][BLOCK_E];
	tile_shared f32 mx[BLOCK_T];
	tile_shared f32 sum[BLOCK_T];
	tile_shared f32 top[BLOCK_T][TOPK];
	tile_shared i32 idx[BLOCK_T][TOPK];
	tile_shared f32 norm[BLOCK_T];

	tile_copy(x, &logits[bt * BLOCK_T][0]);
	tile_parallel(i, BLOCK_T) {
		tile_parallel(e, BLOCK_E) {
			x[i][e] = e < E ? x[i][e] : -INFINITY;
		}
	}
	tile_reduce_max(mx, x, 1);
	tile_parallel(i, BLOCK_T) {
		tile_parallel(e, BLOCK_E) {
			x[i][e] = expf(x[i][e] - mx[i]);
		}
	}
	tile_reduce_sum(sum, x, 1);
	tile_parallel(i, BLOCK_T) {
		tile_parallel(e, BLOCK_E) {
			x[i][e] = x[i][e] / sum[i];
		}
	}
	tile_reduce_topk(top, idx, x, 1);
	tile_reduce_sum(norm, top, 1);
	tile_parallel(i, BLOCK_T) {
		tile_parallel(k, TOPK) {
			top[i][k] = top[i][k] / norm[i];
		}
	}
	tile_copy(&ids[bt * BLOCK_T][0], idx);
	tile_copy(&weights[bt * BLOCK_T][0], top);
}
