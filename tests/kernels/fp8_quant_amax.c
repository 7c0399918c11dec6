/* fp8 (e4m3) quantization with delayed scaling, as fp8 training keeps
 * it: X is quantized with the scale of the previous step (scale[0]),
 * clamped to e4m3's largest finite value, 448; in the same pass each
 * block writes the absmax of its tile, from which the next step's scale
 * is made (the host, or a small second kernel, takes the max over
 * Amax).  There is no atomic max in the language, so the partial maxima
 * go to one element per block.
 * shape: M=100,N=700
 * shape: M=3,N=10
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 16);
TILE_PARAM(BLOCK_N, 256);

TILE_KERNEL void
fp8_quant_amax(int M, int N, const f32 X[M][N], const f32 scale[1],
	       fp8e4m3 Q[M][N], f32 Amax[ceildiv(M, BLOCK_M)][ceildiv(N, BLOCK_N)])
{
	tile_threads(256);
	int bn = tile_grid_x(ceildiv(N, BLOCK_N));
	int bm = tile_grid_y(ceildiv(M, BLOCK_M));

	tile_fragment f32 x[BLOCK_M][BLOCK_N];
	tile_fragment fp8e4m3 q[BLOCK_M][BLOCK_N];
	tile_shared f32 s[1];
	tile_shared f32 m[1];

	tile_copy(s, &scale[0]);
	tile_copy(x, &X[bm * BLOCK_M][bn * BLOCK_N]);
	float sc = tile_max(s);
	tile_parallel(i, BLOCK_M) {
		tile_parallel(j, BLOCK_N) {
			q[i][j] = fminf(fmaxf(x[i][j] * sc, -448.0f), 448.0f);
		}
	}
	tile_copy(&Q[bm * BLOCK_M][bn * BLOCK_N], q);
	float a = tile_absmax(x);
	tile_fill(m, a);
	tile_copy(&Amax[bm][bn], m);
}
