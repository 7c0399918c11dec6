/* Selects in a fused row loop over f16 rows, which on AVX-512 and avx2
 * targets run on explicit vectors: a varying condition becomes a lane
 * mask (tilec_vselect; && || ! as & | ~, a uniform part broadcast),
 * a uniform one stays C's ?: over vectors.  A leaky ReLU, a NaN test,
 * nested selects; ragged columns, rows past the tensor's end.
 * shape: M=5,N=1030,alpha=0.1
 * shape: M=3,N=16,alpha=3.0
 * shape: M=9,N=2100,alpha=0.7
 * run: --range X=-3:3,B=-1:1
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 4);
TILE_PARAM(BLOCK_N, 256);

TILE_KERNEL void
vector_select(int M, int N, float alpha, const f16 X[M][N], const f16 B[N],
	      f16 Y[M][N])
{
	tile_threads(128);
	int bm = tile_grid_x(ceildiv(M, BLOCK_M));
	int bn = tile_grid_y(ceildiv(N, BLOCK_N));
	tile_fragment f32 x[BLOCK_M][BLOCK_N];
	tile_fragment f32 b[BLOCK_N];
	tile_copy(x, &X[bm * BLOCK_M][bn * BLOCK_N]);
	tile_copy(b, &B[bn * BLOCK_N]);
	tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N) {
		float v = x[i][j] + b[j];
		float w = v > 0.0f ? v : alpha * v;
		x[i][j] = (w < 1.0f && !(v != v)) || alpha > 2.0f ? w
			  : 0.0f < v ? 1.0f : -w;
		x[i][j] = alpha > 0.5f ? x[i][j] : -x[i][j];
	}
	tile_copy(&Y[bm * BLOCK_M][bn * BLOCK_N], x);
}
