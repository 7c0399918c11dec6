/*
 * flash_decode.c - attention for one new token per sequence (decode), with
 * the KV length split across blocks (flash decoding):
 *
 *     O[b][h] = softmax(Q[b][h] . K[b][s][g]^T / sqrt(HEAD_DIM)) V[b][s][g]
 *
 * over s < S, where g = h / (H / HKV) is the KV head that query head h
 * reads (HKV = H is multi-head attention, fewer KV heads grouped-query
 * attention; H must be a multiple of HKV).  Q and O are [B][H][HEAD_DIM],
 * the cache K and V [B][S][HKV][HEAD_DIM], all fp16.
 *
 * One query row gives no matrix for tensor cores, and a single block per
 * head would leave most of the GPU idle at B * H blocks, so the work is
 * split two ways.  flash_decode_split runs NSPLIT blocks per head, each
 * over its own stretch of keys, BLOCK_N at a time: scores as element-wise
 * products reduced along the head dim, an online softmax (running maximum
 * and sum, as flash_attention.c keeps them), and the weighted values
 * reduced along the keys.  It writes its normalized partial output and
 * the log-sum-exp of its scores (fp32; -inf, with a zero output, for a
 * stretch past the end of a short sequence).  flash_decode_combine then
 * weighs each head's partials by exp(lse - max lse): the exact softmax
 * over all S keys.  It walks the splits BLOCK_S at a time with the same
 * online rescaling, so NSPLIT is not bounded by a tile.
 *
 * flash_decode_split_gqa computes the same partials for grouped-query
 * attention, reading each KV head's keys and values once for its whole
 * group rather than once per query head: a block owns one split of one
 * KV head and BLOCK_H query heads of its group (the group's H / HKV
 * heads, BLOCK_H at a time; a block past the group's end computes rows
 * it does not store).  Those heads' scores are a BLOCK_H x BLOCK_N matrix
 * product on the tensor cores, Q K^T (the query heads as the rows), and
 * their weighted values a second one, P V, as in gqa_attention.c; the
 * keys and values stream through shared memory STAGES deep, scores in
 * base 2, a warp for each 16 heads (it holds whole rows of the scores, so
 * P stays in registers).  With one query head per KV head (HKV = H) it computes the
 * same partials as flash_decode_split, with BLOCK_H - 1 rows unused.
 */
#include <tilec.h>

TILE_PARAM(HEAD_DIM, 128);
TILE_PARAM(BLOCK_N, 32, 16, 32, 64);
TILE_PARAM(BLOCK_S, 16, 8, 16, 32);
TILE_PARAM(THREADS, 128, 64, 128, 256);
TILE_PARAM(BLOCK_H, 16, 16, 32, 64);
TILE_PARAM(STAGES, 3, 2, 3, 4);

TILE_KERNEL void
flash_decode_split(int B, int H, int HKV, int S, int NSPLIT, float scale,
		   const f16 Q[B][H][HEAD_DIM],
		   const f16 K[B][S][HKV][HEAD_DIM],
		   const f16 V[B][S][HKV][HEAD_DIM],
		   f32 Opart[B][H][NSPLIT][HEAD_DIM], f32 Lse[B][H][NSPLIT])
{
	tile_threads(THREADS);
	int sp = tile_grid_x(NSPLIT);
	int h = tile_grid_y(H);
	int b = tile_grid_z(B);
	int g = h / (H / HKV);
	/* This block's keys: [start, end), a whole number of BLOCK_N tiles. */
	int per = ceildiv(ceildiv(S, NSPLIT), BLOCK_N) * BLOCK_N;
	int start = sp * per;
	int end = min(S, start + per);

	tile_fragment f32 q[HEAD_DIM], acc[HEAD_DIM], o[HEAD_DIM];
	tile_fragment f32 k[BLOCK_N][HEAD_DIM], v[BLOCK_N][HEAD_DIM];
	tile_fragment f32 qk[BLOCK_N][HEAD_DIM], pv[BLOCK_N][HEAD_DIM];
	tile_fragment f32 s[BLOCK_N];
	tile_shared f32 lse[1];

	tile_copy(q, &Q[b][h][0]);
	tile_clear(acc);
	float m = -INFINITY;
	float l = 0.0f;
	for (int n0 = start; n0 < end; n0 += BLOCK_N) {
		tile_copy(k, tile_dims(&K[b][n0][g][0], 1, 3));
		tile_copy(v, tile_dims(&V[b][n0][g][0], 1, 3));
		tile_parallel(j, BLOCK_N) tile_parallel(d, HEAD_DIM)
			qk[j][d] = q[d] * k[j][d];
		tile_reduce_sum(s, qk, 1);
		tile_parallel(j, BLOCK_N)
			s[j] = n0 + j < end ? s[j] * scale : -INFINITY;
		float tile_m = tile_max(s);
		float m_new = fmaxf(m, tile_m);
		/* A tile's first key is below end, so m_new is finite. */
		float alpha = expf(m - m_new);
		tile_parallel(j, BLOCK_N)
			s[j] = expf(s[j] - m_new);
		float tile_l = tile_sum(s);
		l = l * alpha + tile_l;
		m = m_new;
		tile_parallel(j, BLOCK_N) tile_parallel(d, HEAD_DIM)
			pv[j][d] = s[j] * v[j][d];
		tile_reduce_sum(o, pv, 0);
		tile_parallel(d, HEAD_DIM)
			acc[d] = acc[d] * alpha + o[d];
	}
	float inv_l = l > 0.0f ? 1.0f / l : 0.0f;
	tile_parallel(d, HEAD_DIM)
		acc[d] = acc[d] * inv_l;
	tile_parallel(z, 1)
		lse[z] = l > 0.0f ? m + logf(l) : -INFINITY;
	tile_copy(&Opart[b][h][sp][0], acc);
	tile_copy(&Lse[b][h][sp], lse);
}

TILE_KERNEL void
flash_decode_split_gqa(int B, int H, int HKV, int S, int NSPLIT, float scale,
		       const f16 Q[B][H][HEAD_DIM],
		       const f16 K[B][S][HKV][HEAD_DIM],
		       const f16 V[B][S][HKV][HEAD_DIM],
		       f32 Opart[B][H][NSPLIT][HEAD_DIM], f32 Lse[B][H][NSPLIT])
{
	/* A warp per 16 heads: P stays in registers as the A operand of P V
	 * when each warp holds whole rows of the scores. */
	tile_threads(32 * (BLOCK_H / 16));
	int group = H / HKV;
	int hblocks = ceildiv(group, BLOCK_H);
	int sp = tile_grid_x(NSPLIT);
	int gh = tile_grid_y(HKV * ceildiv(H / HKV, BLOCK_H));
	int b = tile_grid_z(B);
	int g = gh / hblocks;
	/* This block's query heads: [h0, h0 + nh), all of KV head g. */
	int first = (gh % hblocks) * BLOCK_H;
	int h0 = g * group + first;
	int nh = min(BLOCK_H, group - first);
	/* Its keys: [start, end), flash_decode_split's stretch. */
	int per = ceildiv(ceildiv(S, NSPLIT), BLOCK_N) * BLOCK_N;
	int start = sp * per;
	int end = min(S, start + per);
	int tiles = end > start ? ceildiv(end - start, BLOCK_N) : 0;

	tile_shared f16 Qs[BLOCK_H][HEAD_DIM];
	tile_shared f16 Ks[BLOCK_N][HEAD_DIM];
	tile_shared f16 Vs[BLOCK_N][HEAD_DIM];
	tile_fragment f32 s[BLOCK_H][BLOCK_N];
	tile_fragment f16 p[BLOCK_H][BLOCK_N];
	tile_fragment f32 o[BLOCK_H][HEAD_DIM];
	tile_fragment f32 row_max[BLOCK_H], prev_max[BLOCK_H];
	tile_fragment f32 row_sum[BLOCK_H], chunk_sum[BLOCK_H];
	tile_fragment f32 lse[BLOCK_H];

	float qk_scale = scale * 1.44269504f;
	/* Rows past the group read other heads (or zeros past H): their
	 * results are not stored. */
	tile_copy(Qs, tile_dims(&Q[b][h0][0], 1, 2));
	tile_clear(o);
	tile_fill(row_max, -INFINITY);
	tile_clear(row_sum);
	tile_pipelined(t, tiles, STAGES) {
		tile_copy(Ks, tile_dims(&K[b][start + t * BLOCK_N][g][0], 1, 3));
		tile_copy(Vs, tile_dims(&V[b][start + t * BLOCK_N][g][0], 1, 3));
		tile_clear(s);
		tile_gemm(s, Qs, Ks, TILE_TRANS_B);
		tile_parallel(i, BLOCK_H) tile_parallel(j, BLOCK_N)
			s[i][j] = start + t * BLOCK_N + j < end ?
				  s[i][j] * qk_scale : -INFINITY;
		tile_copy(prev_max, row_max);
		tile_reduce_max(row_max, s, 1, TILE_ACCUMULATE);
		/* A tile's first key is below end, so row_max is finite. */
		tile_parallel(i, BLOCK_H) tile_parallel(j, BLOCK_N)
			s[i][j] = exp2f(s[i][j] - row_max[i]);
		tile_reduce_sum(chunk_sum, s, 1);
		tile_parallel(i, BLOCK_H) {
			float correction = exp2f(prev_max[i] - row_max[i]);
			row_sum[i] = row_sum[i] * correction + chunk_sum[i];
			tile_parallel(d, HEAD_DIM)
				o[i][d] *= correction;
		}
		tile_copy(p, s);
		tile_gemm(o, p, Vs);
	}
	/* The log-sum-exp of the scores in natural units, as
	 * flash_decode_split writes it. */
	tile_parallel(i, BLOCK_H) {
		float l = row_sum[i];
		float inv_l = l > 0.0f ? 1.0f / l : 0.0f;
		tile_parallel(d, HEAD_DIM)
			o[i][d] *= inv_l;
		lse[i] = l > 0.0f ? (row_max[i] + log2f(l)) * 0.69314718f :
			 -INFINITY;
	}
	tile_copy(tile_bounded(tile_dims(&Opart[b][h0][sp][0], 1, 3), nh), o);
	tile_copy(tile_bounded(tile_dims(&Lse[b][h0][sp], 1), nh), lse);
}

TILE_KERNEL void
flash_decode_combine(int B, int H, int NSPLIT,
		     const f32 Opart[B][H][NSPLIT][HEAD_DIM],
		     const f32 Lse[B][H][NSPLIT], f16 O[B][H][HEAD_DIM])
{
	tile_threads(THREADS);
	int h = tile_grid_x(H);
	int b = tile_grid_y(B);

	tile_fragment f32 lse[BLOCK_S], w[BLOCK_S];
	tile_fragment f32 part[BLOCK_S][HEAD_DIM], wp[BLOCK_S][HEAD_DIM];
	tile_fragment f32 acc[HEAD_DIM], o[HEAD_DIM];

	tile_clear(acc);
	float m = -INFINITY;
	float l = 0.0f;
	for (int s0 = 0; s0 < NSPLIT; s0 += BLOCK_S) {
		tile_copy(lse, &Lse[b][h][s0]);
		tile_copy(part, &Opart[b][h][s0][0]);
		tile_parallel(i, BLOCK_S) {
			if (s0 + i >= NSPLIT)
				lse[i] = -INFINITY;
		}
		float tile_m = tile_max(lse);
		float m_new = fmaxf(m, tile_m);
		/* Splits with no keys have lse -inf and weigh nothing; while
		 * every split so far is empty, take the maximum as 0. */
		float m_use = m_new == -INFINITY ? 0.0f : m_new;
		float alpha = expf(m - m_use);
		tile_parallel(i, BLOCK_S)
			w[i] = expf(lse[i] - m_use);
		float tile_l = tile_sum(w);
		l = l * alpha + tile_l;
		m = m_new;
		tile_parallel(i, BLOCK_S) tile_parallel(d, HEAD_DIM)
			wp[i][d] = w[i] * part[i][d];
		tile_reduce_sum(o, wp, 0);
		tile_parallel(d, HEAD_DIM)
			acc[d] = acc[d] * alpha + o[d];
	}
	float inv_l = l > 0.0f ? 1.0f / l : 0.0f;
	tile_parallel(d, HEAD_DIM)
		acc[d] = acc[d] * inv_l;
	tile_copy(&O[b][h][0], acc);
}
