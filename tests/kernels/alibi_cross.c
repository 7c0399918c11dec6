/* Cross-attention, Q length S != KV length T, bottom-right aligned causal
 * mask (query r sees keys c <= r + T - S) plus an ALiBi bias computed in
 * the kernel: head h of H has slope 2^(-8 (h + 1) / H), and the score of
 * (r, c) gets slope * (c - (r + T - S)).  bf16 inputs, HEAD_D = 96, K/V
 * through a pipelined loop.  When T < S the first S - T rows see no key:
 * their output is 0 and their LSE -inf.  T = 0 leaves every row empty.
 * shape: B=2,H=3,S=70,T=45,scale=0.1
 * shape: B=1,H=2,S=17,T=100,scale=0.1
 * shape: B=1,H=1,S=5,T=0
 * shape: B=1,H=4,S=1,T=1
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 64);
TILE_PARAM(BLOCK_N, 64);
TILE_PARAM(HEAD_D, 96);
TILE_PARAM(STAGES, 2);

TILE_KERNEL void
alibi_cross(int B, int H, int S, int T, float scale,
	    const bf16 Q[B][S][H][HEAD_D], const bf16 K[B][T][H][HEAD_D],
	    const bf16 V[B][T][H][HEAD_D], bf16 O[B][S][H][HEAD_D],
	    f32 LSE[B][H][S])
{
	tile_threads(128);
	int bm = tile_grid_x(ceildiv(S, BLOCK_M));
	int h = tile_grid_y(H);
	int b = tile_grid_z(B);
	tile_shared bf16 q[BLOCK_M][HEAD_D];
	tile_shared bf16 k[BLOCK_N][HEAD_D];
	tile_shared bf16 v[BLOCK_N][HEAD_D];
	tile_fragment f32 s[BLOCK_M][BLOCK_N];
	tile_fragment bf16 p[BLOCK_M][BLOCK_N];
	tile_fragment f32 acc[BLOCK_M][HEAD_D];
	tile_fragment f32 m[BLOCK_M], l[BLOCK_M], mn[BLOCK_M], ms[BLOCK_M];
	float slope = exp2f(-8.0f * (float)(h + 1) / (float)H);
	int shift = T - S;
	int last = min(T, (bm + 1) * BLOCK_M + shift);
	tile_copy(q, tile_dims(&Q[b][bm * BLOCK_M][h][0], 1, 3));
	tile_fill(m, -INFINITY);
	tile_clear(l);
	tile_clear(acc);
	tile_pipelined(n, ceildiv(max(last, 0), BLOCK_N), STAGES) {
		tile_copy(k, tile_dims(&K[b][n * BLOCK_N][h][0], 1, 3));
		tile_copy(v, tile_dims(&V[b][n * BLOCK_N][h][0], 1, 3));
		tile_clear(s);
		tile_gemm(s, q, k, TILE_TRANS_B);
		tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N) {
			int r = bm * BLOCK_M + i + shift;
			int c = n * BLOCK_N + j;
			s[i][j] = c <= r && c < T ?
				s[i][j] * scale + slope * (float)(c - r) : -INFINITY;
		}
		tile_copy(mn, m);
		tile_reduce_max(mn, s, 1, TILE_ACCUMULATE);
		tile_parallel(i, BLOCK_M) {
			float safe = mn[i] == -INFINITY ? 0.0f : mn[i];
			l[i] = l[i] * expf(m[i] - safe);
			ms[i] = expf(m[i] - safe);
			m[i] = mn[i];
		}
		tile_parallel(i, BLOCK_M) tile_parallel(d, HEAD_D)
			acc[i][d] = acc[i][d] * ms[i];
		tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
			s[i][j] = expf(s[i][j] - (m[i] == -INFINITY ? 0.0f : m[i]));
		tile_reduce_sum(l, s, 1, TILE_ACCUMULATE);
		tile_copy(p, s);
		tile_gemm(acc, p, v);
	}
	tile_parallel(i, BLOCK_M) tile_parallel(d, HEAD_D)
		acc[i][d] = l[i] > 0.0f ? acc[i][d] / l[i] : 0.0f;
	tile_parallel(i, BLOCK_M)
		ms[i] = l[i] > 0.0f ? m[i] + logf(l[i]) : -INFINITY;
	tile_copy(tile_dims(&O[b][bm * BLOCK_M][h][0], 1, 3), acc);
	tile_copy(&LSE[b][h][bm * BLOCK_M], ms);
}
