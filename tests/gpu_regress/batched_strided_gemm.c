/* A batched gemm whose operands are tiles of 3- and 4-dimensional
 * tensors: A's rows and columns are its dims 1 and 3 (dim 2, a head, in
 * between), B's its dims 1 and 2.  In the fast loop (rows of whole
 * 16-byte vectors: the second and third shapes) tilec::G2S steps through
 * them; with --tma the copies are boxes of rank 4 and 3 (1 along the
 * dims the tiles do not cover).  C[b][m][h][n] = sum over k of
 * A[b][m][h][k] * B[b][k][n].
 * shape: BT=2,M=70,H=3,K=50,N=40
 * shape: BT=2,M=100,H=3,K=72,N=136
 * shape: BT=1,M=64,H=2,K=128,N=64
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 64, 64, 128);
TILE_PARAM(BLOCK_N, 64, 64, 128);
TILE_PARAM(BLOCK_K, 64, 32, 64);
TILE_PARAM(STAGES, 3, 2, 3, 4);

TILE_KERNEL void
batched_strided_gemm(int BT, int M, int H, int K, int N, const f16 A[BT][M][H][K],
		     const f16 B[BT][K][N], f16 C[BT][M][H][N])
{
	tile_threads(128);
	int bx = tile_grid_x(ceildiv(N, BLOCK_N));
	int by = tile_grid_y(ceildiv(M, BLOCK_M));
	int bh = tile_grid_z(BT * H);
	int b = bh / H;
	int h = bh % H;

	tile_shared f16 As[BLOCK_M][BLOCK_K];
	tile_shared f16 Bs[BLOCK_K][BLOCK_N];
	tile_fragment f32 acc[BLOCK_M][BLOCK_N];

	tile_clear(acc);
	tile_pipelined(k, ceildiv(K, BLOCK_K), STAGES) {
		tile_copy(As, tile_dims(&A[b][by * BLOCK_M][h][k * BLOCK_K], 1, 3));
		tile_copy(Bs, tile_dims(&B[b][k * BLOCK_K][bx * BLOCK_N], 1, 2));
		tile_gemm(acc, As, Bs);
	}
	tile_copy(tile_dims(&C[b][by * BLOCK_M][h][bx * BLOCK_N], 1, 3), acc);
}
