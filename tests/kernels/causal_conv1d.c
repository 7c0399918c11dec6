/* A depthwise causal 1-D convolution over time with SiLU, as in Mamba's
 * block: y[b][t][c] = silu(bias[c] + sum_k w[c][k] x[b][t - KW + 1 + k][c]).
 * Each block loads its BLOCK_T steps and the KW - 1 before them in one
 * copy whose origin is negative at the sequence's start (those rows read
 * as zeros: the causal padding).
 * shape: B=2,T=300,C=100
 * shape: B=1,T=1,C=1
 * shape: B=3,T=64,C=64
 */
#include <tilec.h>

TILE_PARAM(KW, 4);
TILE_PARAM(BLOCK_T, 64);
TILE_PARAM(BLOCK_C, 64);

TILE_KERNEL void
causal_conv1d(int B, int T, int C, const f16 X[B][T][C], const f32 W[C][KW],
	      const f32 bias[C], f16 Y[B][T][C])
{
	tile_threads(128);
	int bc = tile_grid_x(ceildiv(C, BLOCK_C));
	int bt = tile_grid_y(ceildiv(T, BLOCK_T));
	int b = tile_grid_z(B);

	tile_shared f16 x[BLOCK_T + KW - 1][BLOCK_C];
	tile_shared f32 w[BLOCK_C][KW];
	tile_shared f32 bs[BLOCK_C];
	tile_fragment f32 y[BLOCK_T][BLOCK_C];

	tile_copy(x, &X[b][bt * BLOCK_T - (KW - 1)][bc * BLOCK_C]);
	tile_copy(w, &W[bc * BLOCK_C][0]);
	tile_copy(bs, &bias[bc * BLOCK_C]);
	tile_parallel(t, BLOCK_T) {
		tile_parallel(c, BLOCK_C) {
			float acc = bs[c];
			for (int k = 0; k < KW; k++)
				acc += w[c][k] * (float)x[t + k][c];
			y[t][c] = acc / (1.0f + expf(-acc));
		}
	}
	tile_copy(&Y[b][bt * BLOCK_T][bc * BLOCK_C], y);
}
