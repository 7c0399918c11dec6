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
 */
#include <tilec.h>

TILE_PARAM(HEAD_DIM, 128);
TILE_PARAM(PAGE, 16);
TILE_PARAM(THREADS, 128, 64, 128, 256);

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
