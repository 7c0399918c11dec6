/*
 * paged_decode.c - decode attention over a paged KV cache (vLLM's
 * PagedAttention): one new query token per sequence attends to the keys
 * and values of its context, which live in fixed-size pages scattered
 * through a shared pool.
 *
 *     O[b][h] = softmax(Q[b][h] . K^T * scale) V   over the CL[b] tokens
 *               of sequence b, token t in page BT[b][t / PAGE], row t % PAGE
 *
 * Q and O are [B][H][HEAD_DIM] fp16; the pools KC and VC are
 * [NPAGES][PAGE][HKV][HEAD_DIM] fp16; BT is each sequence's block table
 * (its pages in order, MAXP entries, of which the first
 * ceildiv(CL[b], PAGE) are used: each must be below NPAGES) and CL each
 * sequence's context length (at most MAXP * PAGE).  Query head h reads KV
 * head h / (H / HKV).  Each block owns one (sequence, head) and walks its
 * pages in order: the page's index is read from the block table, the
 * page's rows are copied as one tile, and the online softmax is
 * flash_decode.c's.  The walk is tile_pipelined: the next page's keys and
 * values (their page index read early from the read-only block table)
 * are loaded while this page's are reduced.  A sequence of length 0 writes
 * zeros.  (A gather copy would let one copy take rows from several pages;
 * a page per tile is the natural unit here.)
 *
 * paged_decode_split_gqa is the kernel for grouped-query attention (HKV <
 * H), as flash_decode.c's flash_decode_split_gqa is for a contiguous
 * cache: a block owns one KV head of one sequence, BLOCK_H query heads of
 * its group and one of NSPLIT stretches of the sequence's pages (each
 * ceildiv(pages, NSPLIT) pages long, so a short sequence leaves later
 * splits empty).  It reads its KV head's pages once for all those heads:
 * their scores are a BLOCK_H x PAGE product on the tensor cores, Q K^T,
 * and their weighted values a second one, P V, a page per iteration,
 * STAGES pages in flight.  It writes flash_decode_split's partials
 * (Opart, normalized, and Lse; -inf and zeros for an empty split), which
 * flash_decode.c's flash_decode_combine turns into O.  With HKV = H it
 * serves multi-head attention too, 15 of its 16 rows unused: at long
 * contexts the splits make it faster than paged_decode (docs/perf-gpu.md).
 */
#include <tilec.h>

TILE_PARAM(HEAD_DIM, 128);
TILE_PARAM(PAGE, 16);
TILE_PARAM(THREADS, 128, 64, 128, 256);
TILE_PARAM(BLOCK_H, 16, 16, 32, 64);
TILE_PARAM(STAGES, 4, 2, 3, 4, 6);

TILE_KERNEL void
paged_decode(int B, int H, int HKV, int NPAGES, int MAXP, float scale,
	     const f16 Q[B][H][HEAD_DIM],
	     const f16 KC[NPAGES][PAGE][HKV][HEAD_DIM],
	     const f16 VC[NPAGES][PAGE][HKV][HEAD_DIM], const i32 BT[B][MAXP],
	     const i32 CL[B], f16 O[B][H][HEAD_DIM])
{
	tile_threads(THREADS);
	int h = tile_grid_x(H);
	int b = tile_grid_y(B);
	int g = h / (H / HKV);
	int len = CL[b];

	tile_fragment f32 q[HEAD_DIM], acc[HEAD_DIM], o[HEAD_DIM];
	tile_fragment f32 k[PAGE][HEAD_DIM], v[PAGE][HEAD_DIM];
	tile_fragment f32 qk[PAGE][HEAD_DIM], pv[PAGE][HEAD_DIM];
	tile_fragment f32 s[PAGE];

	tile_copy(q, &Q[b][h][0]);
	tile_clear(acc);
	float m = -INFINITY;
	float l = 0.0f;
	tile_pipelined(p, ceildiv(len, PAGE), 2) {
		tile_copy(k, tile_dims(&KC[BT[b][p]][0][g][0], 1, 3));
		tile_copy(v, tile_dims(&VC[BT[b][p]][0][g][0], 1, 3));
		tile_parallel(j, PAGE) tile_parallel(d, HEAD_DIM)
			qk[j][d] = q[d] * k[j][d];
		tile_reduce_sum(s, qk, 1);
		tile_parallel(j, PAGE)
			s[j] = p * PAGE + j < len ? s[j] * scale : -INFINITY;
		float tile_m = tile_max(s);
		float m_new = fmaxf(m, tile_m);
		/* A page's first token is below len, so m_new is finite. */
		float alpha = expf(m - m_new);
		tile_parallel(j, PAGE)
			s[j] = expf(s[j] - m_new);
		float tile_l = tile_sum(s);
		l = l * alpha + tile_l;
		m = m_new;
		tile_parallel(j, PAGE) tile_parallel(d, HEAD_DIM)
			pv[j][d] = s[j] * v[j][d];
		tile_reduce_sum(o, pv, 0);
		tile_parallel(d, HEAD_DIM)
			acc[d] = acc[d] * alpha + o[d];
	}
	float inv_l = l > 0.0f ? 1.0f / l : 0.0f;
	tile_parallel(d, HEAD_DIM)
		acc[d] = acc[d] * inv_l;
	tile_copy(&O[b][h][0], acc);
}

TILE_KERNEL void
paged_decode_split_gqa(int B, int H, int HKV, int NPAGES, int MAXP, int NSPLIT,
		       float scale, const f16 Q[B][H][HEAD_DIM],
		       const f16 KC[NPAGES][PAGE][HKV][HEAD_DIM],
		       const f16 VC[NPAGES][PAGE][HKV][HEAD_DIM],
		       const i32 BT[B][MAXP], const i32 CL[B],
		       f32 Opart[B][H][NSPLIT][HEAD_DIM], f32 Lse[B][H][NSPLIT])
{
	/* A warp per 16 heads: it holds whole rows of the scores, so P
	 * stays in registers as the A operand of P V. */
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
	/* Its pages: [p0, p1) of the sequence's, tokens below len. */
	int len = CL[b];
	int per = ceildiv(ceildiv(len, PAGE), NSPLIT);
	int p0 = sp * per;
	int p1 = min(ceildiv(len, PAGE), p0 + per);
	int pages = p1 > p0 ? p1 - p0 : 0;

	tile_shared f16 Qs[BLOCK_H][HEAD_DIM];
	tile_shared f16 Ks[PAGE][HEAD_DIM];
	tile_shared f16 Vs[PAGE][HEAD_DIM];
	tile_fragment f32 s[BLOCK_H][PAGE];
	tile_fragment f16 p[BLOCK_H][PAGE];
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
	tile_pipelined(t, pages, STAGES) {
		tile_copy(Ks, tile_dims(&KC[BT[b][p0 + t]][0][g][0], 1, 3));
		tile_copy(Vs, tile_dims(&VC[BT[b][p0 + t]][0][g][0], 1, 3));
		tile_clear(s);
		tile_gemm(s, Qs, Ks, TILE_TRANS_B);
		tile_parallel(i, BLOCK_H) tile_parallel(j, PAGE)
			s[i][j] = (p0 + t) * PAGE + j < len ?
				  s[i][j] * qk_scale : -INFINITY;
		tile_copy(prev_max, row_max);
		tile_reduce_max(row_max, s, 1, TILE_ACCUMULATE);
		/* A page's first token is below len, so row_max is finite. */
		tile_parallel(i, BLOCK_H) tile_parallel(j, PAGE)
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
