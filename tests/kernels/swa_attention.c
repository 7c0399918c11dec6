/* Causal sliding-window attention with ALiBi and soft-capped logits (as
 * Mistral's window, BLOOM's linear biases and Gemma 2's cap, here all
 * three): query t attends to keys t - WIN + 1 .. t, with the logit
 * CAP * tanh(q.k / sqrt(D) / CAP) - slope[h] * (t - s).  Flash-attention
 * style: each block holds BLOCK_M queries and walks only the key blocks
 * its window reaches, a serial loop with run-time bounds, keeping each
 * row's running max and sum.  A row with no key yet in a block keeps
 * max -inf: its terms are zeros, not exp(-inf + inf).
 * shape: B=2,H=3,S=300,WIN=100
 * shape: B=1,H=1,S=1,WIN=1
 * shape: B=1,H=2,S=130,WIN=1000
 */
#include <tilec.h>

TILE_PARAM(HEAD_D, 64);
TILE_PARAM(BLOCK_M, 64);
TILE_PARAM(BLOCK_N, 64);

TILE_KERNEL void
swa_attention(int B, int H, int S, int WIN, const f16 Q[B][H][S][HEAD_D],
	      const f16 K[B][H][S][HEAD_D], const f16 V[B][H][S][HEAD_D],
	      const f32 slopes[H], f16 O[B][H][S][HEAD_D])
{
	tile_threads(128);
	int bm = tile_grid_x(ceildiv(S, BLOCK_M));
	int h = tile_grid_y(H);
	int b = tile_grid_z(B);

	tile_shared f16 q[BLOCK_M][HEAD_D];
	tile_shared f16 k[BLOCK_N][HEAD_D];
	tile_shared f16 v[BLOCK_N][HEAD_D];
	tile_fragment f32 s[BLOCK_M][BLOCK_N];
	tile_fragment f16 p[BLOCK_M][BLOCK_N];
	tile_fragment f32 o[BLOCK_M][HEAD_D];
	tile_fragment f32 m[BLOCK_M];
	tile_fragment f32 mb[BLOCK_M];
	tile_fragment f32 l[BLOCK_M];
	tile_fragment f32 lb[BLOCK_M];
	tile_fragment f32 alpha[BLOCK_M];

	float slope = slopes[h];
	float cap = 30.0f;
	tile_copy(q, &Q[b][h][bm * BLOCK_M][0]);
	tile_clear(o);
	tile_fill(m, -INFINITY);
	tile_clear(l);
	int first = max(0, bm * BLOCK_M - WIN + 1) / BLOCK_N;
	int last = min(ceildiv(S, BLOCK_N), ceildiv((bm + 1) * BLOCK_M, BLOCK_N));
	for (int n = first; n < last; n++) {
		tile_copy(k, &K[b][h][n * BLOCK_N][0]);
		tile_copy(v, &V[b][h][n * BLOCK_N][0]);
		tile_clear(s);
		tile_gemm(s, q, k, TILE_TRANS_B);
		tile_parallel(i, BLOCK_M) {
			int t = bm * BLOCK_M + i;
			tile_parallel(j, BLOCK_N) {
				int u = n * BLOCK_N + j;
				float x = cap * tanhf(s[i][j] * 0.125f / cap) -
					  slope * (t - u);
				s[i][j] = u <= t && t - u < WIN && u < S ? x : -INFINITY;
			}
		}
		tile_reduce_max(mb, s, 1);
		tile_parallel(i, BLOCK_M) {
			float mn = fmaxf(m[i], mb[i]);
			alpha[i] = mn == -INFINITY ? 1.0f : expf(m[i] - mn);
			mb[i] = mn;
			m[i] = mn;
		}
		tile_parallel(i, BLOCK_M) {
			tile_parallel(j, BLOCK_N) {
				p[i][j] = mb[i] == -INFINITY ? 0.0f : expf(s[i][j] - mb[i]);
				s[i][j] = p[i][j];
			}
		}
		tile_reduce_sum(lb, s, 1);
		tile_parallel(i, BLOCK_M) {
			l[i] = l[i] * alpha[i] + lb[i];
			tile_parallel(d, HEAD_D) {
				o[i][d] = o[i][d] * alpha[i];
			}
		}
		tile_gemm(o, p, v);
	}
	tile_parallel(i, BLOCK_M) {
		tile_parallel(d, HEAD_D) {
			o[i][d] = l[i] > 0.0f ? o[i][d] / l[i] : 0.0f;
		}
	}
	tile_copy(&O[b][h][bm * BLOCK_M][0], o);
}
