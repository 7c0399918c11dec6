/*
 * bias_gelu.c - Y = gelu(X + bias), element-wise fusion.
 *
 * GELU in its tanh form, 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))),
 * applied to X plus a bias broadcast along the rows; fp16 in and out, fp32
 * arithmetic.  One pass over X: each block loads a BLOCK_M x BLOCK_N tile,
 * computes in registers and writes it back.  Tiles past the edges of X read
 * zeros and write nothing.
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 8, 4, 8, 16);
TILE_PARAM(BLOCK_N, 512, 256, 512, 1024);

TILE_KERNEL void
bias_gelu(int M, int N, const f16 X[M][N], const f16 bias[N], f16 Y[M][N])
{
	tile_threads(128);
	int bn = tile_grid_x(ceildiv(N, BLOCK_N));
	int bm = tile_grid_y(ceildiv(M, BLOCK_M));

	tile_fragment f32 x[BLOCK_M][BLOCK_N];
	tile_fragment f32 b[BLOCK_N];

	tile_copy(x, &X[bm * BLOCK_M][bn * BLOCK_N]);
	tile_copy(b, &bias[bn * BLOCK_N]);
	tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N) {
		float v = x[i][j] + b[j];
		float u = 0.7978845608f * (v + 0.044715f * v * v * v);
		x[i][j] = 0.5f * v * (1.0f + tanhf(u));
	}
	tile_copy(&Y[bm * BLOCK_M][bn * BLOCK_N], x);
}
