/* A SwiGLU feed-forward's first half fused into one GEMM: the gate and
 * up projections share the activation tile, so each k-step copies X once
 * and runs two gemms, and the epilogue writes silu(X Wg^T) * (X Wu^T) in
 * bf16.  The weights are stored [N][K] (nn.Linear's layout).
 * shape: M=300,N=200,K=136
 * shape: M=129,N=65,K=40
 * shape: M=1,N=1,K=1
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 128, 64, 128);
TILE_PARAM(BLOCK_N, 64, 64, 128);
TILE_PARAM(BLOCK_K, 32, 32, 64);
TILE_PARAM(STAGES, 3, 2, 3, 4);

TILE_KERNEL void
swiglu_gemm(int M, int N, int K, const bf16 X[M][K], const bf16 Wg[N][K],
	    const bf16 Wu[N][K], bf16 H[M][N])
{
	tile_threads(128);
	int bn = tile_grid_x(ceildiv(N, BLOCK_N));
	int bm = tile_grid_y(ceildiv(M, BLOCK_M));

	tile_shared bf16 xs[BLOCK_M][BLOCK_K];
	tile_shared bf16 gs[BLOCK_N][BLOCK_K];
	tile_shared bf16 us[BLOCK_N][BLOCK_K];
	tile_fragment f32 gate[BLOCK_M][BLOCK_N];
	tile_fragment f32 up[BLOCK_M][BLOCK_N];

	tile_clear(gate);
	tile_clear(up);
	tile_pipelined(k, ceildiv(K, BLOCK_K), STAGES) {
		tile_copy(xs, &X[bm * BLOCK_M][k * BLOCK_K]);
		tile_copy(gs, &Wg[bn * BLOCK_N][k * BLOCK_K]);
		tile_copy(us, &Wu[bn * BLOCK_N][k * BLOCK_K]);
		tile_gemm(gate, xs, gs, TILE_TRANS_B);
		tile_gemm(up, xs, us, TILE_TRANS_B);
	}
	tile_parallel(i, BLOCK_M) {
		tile_parallel(j, BLOCK_N) {
			float a = gate[i][j];
			gate[i][j] = a / (1.0f + expf(-a)) * up[i][j];
		}
	}
	tile_copy(&H[bm * BLOCK_M][bn * BLOCK_N], gate);
}
