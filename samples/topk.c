/*
 * topk.c - mixture-of-experts routing: each token's TOPK best experts and
 * their gate weights, the softmax of the chosen logits (Mixtral's router):
 *
 *     I[t][0..TOPK-1] = the indices of the TOPK greatest G[t][e], greatest
 *                       first (equal logits: the smaller index first)
 *     Wt[t][k]        = exp(G[t][I[t][k]]) / sum_k' exp(G[t][I[t][k']])
 *
 * G is the router's fp32 logits, T tokens by EXPERTS experts.  Each block
 * owns BLOCK_T tokens: tile_reduce_topk picks the TOPK logits of each row
 * in order, and the weights are a softmax over those TOPK values alone
 * (the greatest is the first, but a reduction says so without indexing a
 * column).  Rows past T read as zeros and are not written.
 */
#include <tilec.h>

TILE_PARAM(EXPERTS, 64);
TILE_PARAM(TOPK, 8);
TILE_PARAM(BLOCK_T, 32, 16, 32, 64);
TILE_PARAM(THREADS, 128, 64, 128, 256);

TILE_KERNEL void
topk(int T, const f32 G[T][EXPERTS], f32 Wt[T][TOPK], i32 I[T][TOPK])
{
	tile_threads(THREADS);
	int bt = tile_grid_x(ceildiv(T, BLOCK_T));

	tile_fragment f32 g[BLOCK_T][EXPERTS];
	tile_fragment f32 best[BLOCK_T][TOPK];
	tile_fragment i32 index[BLOCK_T][TOPK];
	tile_fragment f32 w[BLOCK_T][TOPK];
	tile_fragment f32 top[BLOCK_T], sum[BLOCK_T];

	tile_copy(g, &G[bt * BLOCK_T][0]);
	tile_reduce_topk(best, index, g, 1);
	tile_reduce_max(top, best, 1);
	tile_parallel(i, BLOCK_T) tile_parallel(k, TOPK)
		w[i][k] = expf(best[i][k] - top[i]);
	tile_reduce_sum(sum, w, 1);
	tile_parallel(i, BLOCK_T) tile_parallel(k, TOPK)
		w[i][k] = w[i][k] / sum[i];
	tile_copy(&Wt[bt * BLOCK_T][0], w);
	tile_copy(&I[bt * BLOCK_T][0], index);
}
