/* Per-token int8 quantization: each row of X gets the scale amax / 127
 * (amax its largest |x|; 1 for a row of zeros) and Q = sat_i8(x * 127 /
 * amax), rounded to nearest even.  Rows of any length: the first pass
 * takes the absmax chunk by chunk (an accumulating reduce), the second
 * writes Q.  S holds each row's scale for the dequantization.
 * shape: T=70,D=1000
 * shape: T=1,D=5
 */
#include <tilec.h>

TILE_PARAM(BLOCK_T, 4);
TILE_PARAM(BLOCK_D, 512);

TILE_KERNEL void
quant_i8_token(int T, int D, const bf16 X[T][D], i8 Q[T][D], f32 S[T])
{
	tile_threads(128);
	int bt = tile_grid_x(ceildiv(T, BLOCK_T));

	tile_fragment f32 x[BLOCK_T][BLOCK_D];
	tile_fragment i8 q[BLOCK_T][BLOCK_D];
	tile_shared f32 amax[BLOCK_T];
	tile_shared f32 inv[BLOCK_T];
	tile_shared f32 scale[BLOCK_T];

	tile_clear(amax);
	for (int c = 0; c < ceildiv(D, BLOCK_D); c++) {
		tile_copy(x, &X[bt * BLOCK_T][c * BLOCK_D]);
		tile_reduce_absmax(amax, x, 1, TILE_ACCUMULATE);
	}
	tile_parallel(i, BLOCK_T) {
		float m = amax[i] > 0.0f ? amax[i] : 127.0f;
		inv[i] = 127.0f / m;
		scale[i] = m / 127.0f;
	}
	tile_copy(&S[bt * BLOCK_T], scale);
	for (int c = 0; c < ceildiv(D, BLOCK_D); c++) {
		tile_copy(x, &X[bt * BLOCK_T][c * BLOCK_D]);
		tile_parallel(i, BLOCK_T) {
			tile_parallel(j, BLOCK_D) {
				q[i][j] = sat_i8(x[i][j] * inv[i]);
			}
		}
		tile_copy(&Q[bt * BLOCK_T][c * BLOCK_D], q);
	}
}
