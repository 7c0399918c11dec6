/*
 * gqa_attention.c - grouped-query attention, forward pass (prefill):
 *
 *     O[b][:][h] = softmax(Q[b][:][h] K[b][:][g]^T / sqrt(HEAD_DIM)) V[b][:][g]
 *
 * with g = h / (H / HKV): the H query heads share HKV key/value heads in
 * groups of H / HKV (Llama's 32 query heads over 8 KV heads; H must be a
 * multiple of HKV).  Q and O are [B][S][H][HEAD_DIM], K and V
 * [B][S][HKV][HEAD_DIM], all fp16.  The algorithm is flash_attention.c's:
 * each block owns BLOCK_M queries of one query head and streams BLOCK_N
 * keys of that head's KV head through shared memory, with a running row
 * maximum and sum; scores in base 2.  The blocks of one group read the
 * same K and V tiles, which the launch order keeps in L2 (the head is the
 * grid's y).  -D CAUSAL=1 masks keys after each query and stops the key
 * loop at the block's last query.
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 128, 64, 128);
TILE_PARAM(BLOCK_N, 64, 32, 64, 128);
TILE_PARAM(STAGES, 2, 1, 2, 3);
TILE_PARAM(HEAD_DIM, 128);
TILE_PARAM(CAUSAL, 0);

TILE_KERNEL void
gqa_attention(int B, int S, int H, int HKV, const f16 Q[B][S][H][HEAD_DIM],
	      const f16 K[B][S][HKV][HEAD_DIM],
	      const f16 V[B][S][HKV][HEAD_DIM], f16 O[B][S][H][HEAD_DIM])
{
	tile_threads(128);
	int bm = tile_grid_x(ceildiv(S, BLOCK_M));
	int h = tile_grid_y(H);
	int b = tile_grid_z(B);
	int g = h / (H / HKV);

	tile_shared f16 Qs[BLOCK_M][HEAD_DIM];
	tile_shared f16 Ks[BLOCK_N][HEAD_DIM];
	tile_shared f16 Vs[BLOCK_N][HEAD_DIM];
	tile_fragment f32 s[BLOCK_M][BLOCK_N];
	tile_fragment f16 p[BLOCK_M][BLOCK_N];
	tile_fragment f32 o[BLOCK_M][HEAD_DIM];
	tile_fragment f32 row_max[BLOCK_M], prev_max[BLOCK_M];
	tile_fragment f32 row_sum[BLOCK_M], chunk_sum[BLOCK_M];

	float qk_scale = 1.44269504f * rsqrtf((float)HEAD_DIM);
	int kv_end = CAUSAL ? min(S, (bm + 1) * BLOCK_M) : S;

	tile_copy(Qs, tile_dims(&Q[b][bm * BLOCK_M][h][0], 1, 3));
	tile_clear(o);
	tile_fill(row_max, -INFINITY);
	tile_clear(row_sum);
	tile_pipelined(n, ceildiv(kv_end, BLOCK_N), STAGES) {
		tile_copy(Ks, tile_dims(&K[b][n * BLOCK_N][g][0], 1, 3));
		tile_copy(Vs, tile_dims(&V[b][n * BLOCK_N][g][0], 1, 3));
		tile_clear(s);
		tile_gemm(s, Qs, Ks, TILE_TRANS_B);
		tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N) {
			int q = bm * BLOCK_M + i;
			int kv = n * BLOCK_N + j;
			bool keep = kv < S && (!CAUSAL || kv <= q);
			s[i][j] = keep ? s[i][j] * qk_scale : -INFINITY;
		}
		tile_copy(prev_max, row_max);
		tile_reduce_max(row_max, s, 1, TILE_ACCUMULATE);
		tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
			s[i][j] = exp2f(s[i][j] - row_max[i]);
		tile_reduce_sum(chunk_sum, s, 1);
		tile_parallel(i, BLOCK_M) {
			float correction = exp2f(prev_max[i] - row_max[i]);
			row_sum[i] = row_sum[i] * correction + chunk_sum[i];
			tile_parallel(d, HEAD_DIM)
				o[i][d] *= correction;
		}
		tile_copy(p, s);
		tile_gemm(o, p, Vs);
	}
	tile_parallel(i, BLOCK_M) tile_parallel(d, HEAD_DIM)
		o[i][d] /= row_sum[i];
	tile_copy(tile_dims(&O[b][bm * BLOCK_M][h][0], 1, 3), o);
}
