/* A pipelined gemm whose A tiles start r0 rows off the block's rows, r0
 * possibly negative: A's rows before the first read as zeros, in the
 * ordinary pipelined loop and in the fast loop (tilec::G2S, whole 16-byte
 * rows: the second and third shapes).  C[i][j] = sum over k of
 * A[i + r0][k] * B[k][j], A's rows outside [0, M) zero.
 * shape: M=100,N=70,K=50,r0=-5
 * shape: M=136,N=72,K=96,r0=-8
 * shape: M=136,N=72,K=96,r0=3
 * expect-cuda: As_copy\.issue\(As, 0, M - \(by \* BLOCK_M \+ r0\), K, A,$
 * expect-cuda: ^[[:space:]]*tilec::neg\(by \* BLOCK_M \+ r0\), 0\);
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 64, 64, 128);
TILE_PARAM(BLOCK_N, 64, 64, 128);
TILE_PARAM(BLOCK_K, 32, 32, 64);
TILE_PARAM(STAGES, 2, 2, 3);

TILE_KERNEL void
neg_origin_pipelined(int M, int N, int K, int r0, const f16 A[M][K],
		     const f16 B[K][N], f16 C[M][N])
{
	tile_threads(128);
	int bx = tile_grid_x(ceildiv(N, BLOCK_N));
	int by = tile_grid_y(ceildiv(M, BLOCK_M));

	tile_shared f16 As[BLOCK_M][BLOCK_K];
	tile_shared f16 Bs[BLOCK_K][BLOCK_N];
	tile_fragment f32 acc[BLOCK_M][BLOCK_N];

	tile_clear(acc);
	tile_pipelined(k, ceildiv(K, BLOCK_K), STAGES) {
		tile_copy(As, &A[by * BLOCK_M + r0][k * BLOCK_K]);
		tile_copy(Bs, &B[k * BLOCK_K][bx * BLOCK_N]);
		tile_gemm(acc, As, Bs);
	}
	tile_copy(&C[by * BLOCK_M][bx * BLOCK_N], acc);
}
