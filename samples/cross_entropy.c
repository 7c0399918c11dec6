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
 * does), in base 2 (exp2f of x log2(e): one multiply-add and one exp2 per
 * element).  Only the last chunk, which may hang past V, masks its columns
 * there to -inf.  The loop is tile_pipelined: the next chunk is loaded
 * while this one reduces.  The labelled logit is read on its own, one
 * element per row.
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
	tile_fragment f32 row_max[BLOCK_M], chunk_max[BLOCK_M];
	tile_fragment f32 row_sum[BLOCK_M], target[BLOCK_M];
	tile_fragment i32 label[BLOCK_M];
	tile_fragment f32 loss[BLOCK_M];
	float log2e = 1.44269504f;

	tile_copy(label, &L[bm * BLOCK_M]);
	tile_parallel(i, BLOCK_M) {
		int row = bm * BLOCK_M + i;
		int col = label[i];
		target[i] = row < M && col >= 0 && col < V ? X[row][col] : 0.0f;
	}
	tile_fill(row_max, -INFINITY);
	tile_clear(row_sum);
	tile_pipelined(c, chunks, 2) {
		tile_copy(x, &X[bm * BLOCK_M][c * BLOCK_N]);
		int n0 = c * BLOCK_N;
		if (n0 + BLOCK_N > V) {
			tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N) {
				if (n0 + j >= V)
					x[i][j] = -INFINITY;
			}
		}
		tile_reduce_max(chunk_max, x, 1);
		tile_parallel(i, BLOCK_M) {
			float m = fmaxf(row_max[i], chunk_max[i]);
			row_sum[i] *= exp2f((row_max[i] - m) * log2e);
			row_max[i] = m;
		}
		tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
			e[i][j] = exp2f(x[i][j] * log2e - row_max[i] * log2e);
		tile_reduce_sum(row_sum, e, 1, TILE_ACCUMULATE);
	}
	tile_parallel(i, BLOCK_M)
		loss[i] = label[i] < 0 ? 0.0f :
			  row_max[i] + logf(row_sum[i]) - target[i];
	tile_copy(&Loss[bm * BLOCK_M], loss);
}
