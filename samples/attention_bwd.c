/*
 * attention_bwd.c - the backward pass of attention (FlashAttention-2's
 * algorithm), non-causal: from the forward's inputs Q, K, V, its output O
 * and per-row log-sum-exp LSE, and the output's gradient dO,
 *
 *     P  = exp(Q K^T * scale - LSE)          (the forward's softmax)
 *     dV = P^T dO
 *     dS = P * (dO V^T - Delta),  Delta = rowsum(dO * O)
 *     dK = dS^T Q * scale
 *     dQ = dS K * scale
 *
 * Q, K, V, O, dO and the gradients are [B][S][H][HEAD_DIM] fp16; LSE and
 * Delta are [B][H][S] fp32 (LSE in natural log, as torch's flash kernels
 * keep it).  Three kernels: attn_bwd_delta computes Delta; attn_bwd_dkdv
 * owns BLOCK_N keys of one (batch, head), keeps their dK and dV in
 * registers and streams every query block past them (P^T and dS^T go
 * through shared memory, as the transposed gemm operands); attn_bwd_dq
 * owns BLOCK_M queries and streams the keys.  P is recomputed in both,
 * never stored.  Rows and keys past S are masked to P = 0.
 */
#include <tilec.h>

TILE_PARAM(HEAD_DIM, 64);
TILE_PARAM(BLOCK_M, 64, 64, 128);
TILE_PARAM(BLOCK_N, 64, 64, 128);
TILE_PARAM(STAGES, 2, 1, 2, 3);
TILE_PARAM(THREADS, 128, 128, 256);

TILE_KERNEL void
attn_bwd_delta(int B, int S, int H, const f16 O[B][S][H][HEAD_DIM],
	       const f16 dO[B][S][H][HEAD_DIM], f32 Delta[B][H][S])
{
	tile_threads(THREADS);
	int bm = tile_grid_x(ceildiv(S, BLOCK_M));
	int h = tile_grid_y(H);
	int b = tile_grid_z(B);

	tile_fragment f32 o[BLOCK_M][HEAD_DIM], d_o[BLOCK_M][HEAD_DIM];
	tile_fragment f32 delta[BLOCK_M];

	tile_copy(o, tile_dims(&O[b][bm * BLOCK_M][h][0], 1, 3));
	tile_copy(d_o, tile_dims(&dO[b][bm * BLOCK_M][h][0], 1, 3));
	tile_parallel(i, BLOCK_M) tile_parallel(d, HEAD_DIM)
		o[i][d] = o[i][d] * d_o[i][d];
	tile_reduce_sum(delta, o, 1);
	tile_copy(&Delta[b][h][bm * BLOCK_M], delta);
}

TILE_KERNEL void
attn_bwd_dkdv(int B, int S, int H, float scale,
	      const f16 Q[B][S][H][HEAD_DIM], const f16 K[B][S][H][HEAD_DIM],
	      const f16 V[B][S][H][HEAD_DIM], const f16 dO[B][S][H][HEAD_DIM],
	      const f32 LSE[B][H][S], const f32 Delta[B][H][S],
	      f16 dK[B][S][H][HEAD_DIM], f16 dV[B][S][H][HEAD_DIM])
{
	tile_threads(THREADS);
	int bn = tile_grid_x(ceildiv(S, BLOCK_N));
	int h = tile_grid_y(H);
	int b = tile_grid_z(B);

	tile_shared f16 Ks[BLOCK_N][HEAD_DIM], Vs[BLOCK_N][HEAD_DIM];
	tile_shared f16 Qs[BLOCK_M][HEAD_DIM], dOs[BLOCK_M][HEAD_DIM];
	tile_shared f16 Ps[BLOCK_M][BLOCK_N], dSs[BLOCK_M][BLOCK_N];
	tile_fragment f32 s[BLOCK_M][BLOCK_N], dp[BLOCK_M][BLOCK_N];
	tile_fragment f32 lse[BLOCK_M], delta[BLOCK_M];
	tile_fragment f32 dk[BLOCK_N][HEAD_DIM], dv[BLOCK_N][HEAD_DIM];

	tile_copy(Ks, tile_dims(&K[b][bn * BLOCK_N][h][0], 1, 3));
	tile_copy(Vs, tile_dims(&V[b][bn * BLOCK_N][h][0], 1, 3));
	tile_clear(dk);
	tile_clear(dv);
	tile_pipelined(m, ceildiv(S, BLOCK_M), STAGES) {
		tile_copy(Qs, tile_dims(&Q[b][m * BLOCK_M][h][0], 1, 3));
		tile_copy(dOs, tile_dims(&dO[b][m * BLOCK_M][h][0], 1, 3));
		tile_copy(lse, &LSE[b][h][m * BLOCK_M]);
		tile_copy(delta, &Delta[b][h][m * BLOCK_M]);
		tile_clear(s);
		tile_gemm(s, Qs, Ks, TILE_TRANS_B);
		tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N) {
			bool keep = m * BLOCK_M + i < S && bn * BLOCK_N + j < S;
			s[i][j] = keep ? expf(s[i][j] * scale - lse[i]) : 0.0f;
		}
		tile_copy(Ps, s);
		tile_gemm(dv, Ps, dOs, TILE_TRANS_A);
		tile_clear(dp);
		tile_gemm(dp, dOs, Vs, TILE_TRANS_B);
		tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
			dp[i][j] = s[i][j] * (dp[i][j] - delta[i]);
		tile_copy(dSs, dp);
		tile_gemm(dk, dSs, Qs, TILE_TRANS_A);
	}
	tile_parallel(j, BLOCK_N) tile_parallel(d, HEAD_DIM)
		dk[j][d] *= scale;
	tile_copy(tile_dims(&dK[b][bn * BLOCK_N][h][0], 1, 3), dk);
	tile_copy(tile_dims(&dV[b][bn * BLOCK_N][h][0], 1, 3), dv);
}

TILE_KERNEL void
attn_bwd_dq(int B, int S, int H, float scale, const f16 Q[B][S][H][HEAD_DIM],
	    const f16 K[B][S][H][HEAD_DIM], const f16 V[B][S][H][HEAD_DIM],
	    const f16 dO[B][S][H][HEAD_DIM], const f32 LSE[B][H][S],
	    const f32 Delta[B][H][S], f16 dQ[B][S][H][HEAD_DIM])
{
	tile_threads(THREADS);
	int bm = tile_grid_x(ceildiv(S, BLOCK_M));
	int h = tile_grid_y(H);
	int b = tile_grid_z(B);

	tile_shared f16 Qs[BLOCK_M][HEAD_DIM], dOs[BLOCK_M][HEAD_DIM];
	tile_shared f16 Ks[BLOCK_N][HEAD_DIM], Vs[BLOCK_N][HEAD_DIM];
	tile_fragment f32 s[BLOCK_M][BLOCK_N], dp[BLOCK_M][BLOCK_N];
	tile_fragment f16 ds[BLOCK_M][BLOCK_N];
	tile_fragment f32 lse[BLOCK_M], delta[BLOCK_M];
	tile_fragment f32 dq[BLOCK_M][HEAD_DIM];

	tile_copy(Qs, tile_dims(&Q[b][bm * BLOCK_M][h][0], 1, 3));
	tile_copy(dOs, tile_dims(&dO[b][bm * BLOCK_M][h][0], 1, 3));
	tile_copy(lse, &LSE[b][h][bm * BLOCK_M]);
	tile_copy(delta, &Delta[b][h][bm * BLOCK_M]);
	tile_clear(dq);
	tile_pipelined(n, ceildiv(S, BLOCK_N), STAGES) {
		tile_copy(Ks, tile_dims(&K[b][n * BLOCK_N][h][0], 1, 3));
		tile_copy(Vs, tile_dims(&V[b][n * BLOCK_N][h][0], 1, 3));
		tile_clear(s);
		tile_gemm(s, Qs, Ks, TILE_TRANS_B);
		tile_clear(dp);
		tile_gemm(dp, dOs, Vs, TILE_TRANS_B);
		tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N) {
			bool keep = bm * BLOCK_M + i < S && n * BLOCK_N + j < S;
			float p = keep ? expf(s[i][j] * scale - lse[i]) : 0.0f;
			dp[i][j] = p * (dp[i][j] - delta[i]);
		}
		tile_copy(ds, dp);
		tile_gemm(dq, ds, Ks);
	}
	tile_parallel(i, BLOCK_M) tile_parallel(d, HEAD_DIM)
		dq[i][d] *= scale;
	tile_copy(tile_dims(&dQ[b][bm * BLOCK_M][h][0], 1, 3), dq);
}
