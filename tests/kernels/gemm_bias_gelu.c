/* A linear layer with its bias and exact (erf) GELU in the epilogue:
 * Y = gelu(A W^T + bias), f16 in and out, f32 accumulation, W stored
 * [N][K].  128 x 128 tiles over 256 threads, four stages: the shape the
 * sm_90a fast loop takes (wgmma, TMA copies where the rows allow).
 * shape: M=500,N=384,K=264
 * shape: M=200,N=130,K=100
 * shape: M=17,N=9,K=3
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 128, 64, 128);
TILE_PARAM(BLOCK_N, 128, 64, 128, 256);
TILE_PARAM(BLOCK_K, 64, 32, 64);
TILE_PARAM(STAGES, 4, 3, 4);

TILE_KERNEL void
gemm_bias_gelu(int M, int N, int K, const f16 A[M][K], const f16 W[N][K],
	       const f32 bias[N], f16 Y[M][N])
{
	tile_threads(256);
	int bn = tile_grid_x(ceildiv(N, BLOCK_N));
	int bm = tile_grid_y(ceildiv(M, BLOCK_M));

	tile_shared f16 as[BLOCK_M][BLOCK_K];
	tile_shared f16 ws[BLOCK_N][BLOCK_K];
	tile_shared f32 bs[BLOCK_N];
	tile_fragment f32 acc[BLOCK_M][BLOCK_N];

	tile_clear(acc);
	tile_pipelined(k, ceildiv(K, BLOCK_K), STAGES) {
		tile_copy(as, &A[bm * BLOCK_M][k * BLOCK_K]);
		tile_copy(ws, &W[bn * BLOCK_N][k * BLOCK_K]);
		tile_gemm(acc, as, ws, TILE_TRANS_B);
	}
	tile_copy(bs, &bias[bn * BLOCK_N]);
	tile_parallel(i, BLOCK_M) {
		tile_parallel(j, BLOCK_N) {
			float v = acc[i][j] + bs[j];
			acc[i][j] = 0.5f * v * (1.0f + erff(v * 0.70710678f));
		}
	}
	tile_copy(&Y[bm * BLOCK_M][bn * BLOCK_N], acc);
}
