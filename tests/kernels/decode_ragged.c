/* Decode attention (one query row per head) over ragged per-sequence
 * lengths read from an i32 tensor (0 and 1 included), grouped-query
 * heads (GROUP query heads share a KV head), bf16 inputs, HEAD_D = 96.
 * Keys are loaded with tile_bounded to the sequence's length; the online
 * softmax keeps block-level scalars m, l.  A sequence of length 0 has no
 * keys: its output rows are 0 and its LSE is -inf (defined, no 0/0).
 * shape: B=4,HKV=2,T=150,scale=0.1
 * shape: B=3,HKV=1,T=1
 * shape: B=5,HKV=3,T=33,scale=0.2
 * run: --range lens=0:T
 */
#include <tilec.h>

TILE_PARAM(BLOCK_N, 32);
TILE_PARAM(HEAD_D, 96);
TILE_PARAM(GROUP, 2);

TILE_KERNEL void
decode_ragged(int B, int HKV, int T, float scale,
	      const bf16 Q[B][HKV * GROUP][HEAD_D],
	      const bf16 K[B][T][HKV][HEAD_D], const bf16 V[B][T][HKV][HEAD_D],
	      const i32 lens[B], bf16 O[B][HKV * GROUP][HEAD_D],
	      f32 LSE[B][HKV * GROUP])
{
	tile_threads(128);
	int h = tile_grid_x(HKV * GROUP);
	int b = tile_grid_y(B);
	int g = h / GROUP;
	tile_shared bf16 q[HEAD_D];
	tile_shared bf16 k[BLOCK_N][HEAD_D];
	tile_shared bf16 v[BLOCK_N][HEAD_D];
	tile_fragment f32 s[BLOCK_N];
	tile_fragment f32 acc[HEAD_D];
	int L = min(lens[b], T);
	float m = -INFINITY;
	float l = 0.0f;
	tile_copy(q, &Q[b][h][0]);
	tile_clear(acc);
	for (int n = 0; n < ceildiv(L, BLOCK_N); n++) {
		int cnt = L - n * BLOCK_N;
		tile_copy(k, tile_bounded(tile_dims(&K[b][n * BLOCK_N][g][0], 1, 3), cnt));
		tile_copy(v, tile_bounded(tile_dims(&V[b][n * BLOCK_N][g][0], 1, 3), cnt));
		tile_parallel(j, BLOCK_N) {
			float a = 0.0f;
			for (int d = 0; d < HEAD_D; d++)
				a += (float)q[d] * (float)k[j][d];
			s[j] = j < cnt ? a * scale : -INFINITY;
		}
		float bmax = tile_max(s);
		float mn = fmaxf(m, bmax);
		float alpha = expf(m - mn);
		tile_parallel(j, BLOCK_N)
			s[j] = expf(s[j] - mn);
		float ps = tile_sum(s);
		l = l * alpha + ps;
		tile_parallel(d, HEAD_D) {
			float a = acc[d] * alpha;
			for (int j = 0; j < min(BLOCK_N, cnt); j++)
				a += s[j] * (float)v[j][d];
			acc[d] = a;
		}
		m = mn;
	}
	tile_parallel(d, HEAD_D)
		O[b][h][d] = L > 0 ? acc[d] / l : 0.0f;
	LSE[b][h] = L > 0 ? m + logf(l) : -INFINITY;
}
