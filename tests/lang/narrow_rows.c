/* Rows of f16 and bf16 tensors through a fused row loop, which on AVX-512
 * targets runs on explicit vectors (tilec_vload_f16, tilec_vround_bf16,
 * tilec_vstream_f16): a bf16 fragment holds the rounded sum X + B, its
 * square sums into f32, and Y = tanh(h) * rs rounds to f16.  Columns not
 * a multiple of the 16 lanes, rows past the tensor's end, and rows long
 * enough to be streamed (N=2100) check the vector loop's edges; the
 * values go through bf16 rounding and tanh's whole range.
 * shape: M=5,N=37
 * shape: M=3,N=2100
 * shape: M=9,N=16
 * run: --range X=-6:6,B=-2:2
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 4);
TILE_PARAM(BLOCK_N, 2112);

TILE_KERNEL void
narrow_rows(int M, int N, const bf16 X[M][N], const f16 B[N], f16 Y[M][N],
	    bf16 H[M][N], f32 S[M])
{
	tile_threads(128);
	int bm = tile_grid_x(ceildiv(M, BLOCK_M));
	tile_fragment f32 x[BLOCK_M][BLOCK_N];
	tile_fragment f32 b[BLOCK_N];
	tile_fragment bf16 h[BLOCK_M][BLOCK_N];
	tile_fragment f32 sq[BLOCK_M][BLOCK_N];
	tile_fragment f32 rs[BLOCK_M];
	tile_fragment f32 y[BLOCK_M][BLOCK_N];
	tile_copy(x, &X[bm * BLOCK_M][0]);
	tile_copy(b, &B[0]);
	tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N) {
		h[i][j] = x[i][j] + b[j];
		sq[i][j] = (float)h[i][j] * (float)h[i][j];
	}
	tile_copy(&H[bm * BLOCK_M][0], h);
	tile_reduce_sum(rs, sq, 1);
	tile_copy(&S[bm * BLOCK_M], rs);
	tile_parallel(i, BLOCK_M)
		rs[i] = 1.0f / (1.0f + rs[i] / (float)N);
	tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
		y[i][j] = tanhf((float)h[i][j]) * rs[i];
	tile_copy(&Y[bm * BLOCK_M][0], y);
}
