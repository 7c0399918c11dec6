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
 */
#include <tilec.h>

TILE_PARAM(HEAD_DIM, 128);
TILE_PARAM(BLOCK_N, 32, 16, 32, 64);
TILE_PARAM(BLOCK_S, 16, 8, 16, 32);
TILE_PARAM(THREADS, 128, 64, 128, 256);

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
