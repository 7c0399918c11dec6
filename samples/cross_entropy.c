/*
 * cross_entropy.c - the per-row cross-entropy loss of logits against
 * class labels, the last step of a language model's training forward:
 *
 *     Loss[i] = log(sum_j exp(X[i][j])) - X[i][L[i]]    (0 where L[i] < 0)
 *
 * X is M x V (rows by vocabulary), fp16 or fp32; the loss is fp32.  A
 * negative label marks an ignored row (padding, torch's ignore_index); a
 * label must otherwise be below V.  Each block owns BLOCK_M rows and walks
 * the vocabulary once in BLOCK_N-wide chunks with an online log-sum-exp (a
 * running maximum and a sum rescaled as the maximum grows, as softmax.c
 * does; columns past V are masked to -inf).  The labelled logit is picked
 * up on the way: each chunk contributes the element whose column is the
 * label, zero elsewhere, to a running sum, so the row is read once.
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 1, 1, 2, 4);
TILE_PARAM(BLOCK_N, 4096, 1024, 2048, 4096, 8192);
TILE_PARAM(THREADS, 256, 128, 256, 512);

TILE_KERNEL void
cross_entropy(int M, int V, const f16 X[M][V], const i32 L[M], f32 Loss[M])
{
	tile_threads(THREADS);
	int bm = tile_grid_x(ceildiv(M, BLOCK_M));
	int chunks = ceildiv(V, BLOCK_N);

	tile_fragment f32 x[BLOCK_M][BLOCK_N], e[BLOCK_M][BLOCK_N];
	tile_fragment f32 picked[BLOCK_M][BLOCK_N];
	tile_fragment f32 row_max[BLOCK_M], chunk_max[BLOCK_M];
	tile_fragment f32 row_sum[BLOCK_M], target[BLOCK_M];
	tile_fragment i32 label[BLOCK_M];
	tile_fragment f32 loss[BLOCK_M];

	tile_copy(label, &L[bm * BLOCK_M]);
	tile_fill(row_max, -INFINITY);
	tile_clear(row_sum);
	tile_clear(target);
	for (int c = 0; c < chunks; c++) {
		int n0 = c * BLOCK_N;
		tile_copy(x, &X[bm * BLOCK_M][n0]);
		tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N) {
			picked[i][j] = n0 + j == label[i] ? x[i][j] : 0.0f;
			if (n0 + j >= V)
				x[i][j] = -INFINITY;
		}
		tile_reduce_sum(target, picked, 1, TILE_ACCUMULATE);
		tile_reduce_max(chunk_max, x, 1);
		tile_parallel(i, BLOCK_M) {
			float m = fmaxf(row_max[i], chunk_max[i]);
			row_sum[i] *= expf(row_max[i] - m);
			row_max[i] = m;
		}
		tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
			e[i][j] = expf(x[i][j] - row_max[i]);
		tile_reduce_sum(row_sum, e, 1, TILE_ACCUMULATE);
	}
	tile_parallel(i, BLOCK_M)
		loss[i] = label[i] < 0 ? 0.0f :
			  row_max[i] + logf(row_sum[i]) - target[i];
	tile_copy(&Loss[bm * BLOCK_M], loss);
}
