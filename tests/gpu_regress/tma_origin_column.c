/* A pipelined gemm whose A is stored K x M (TILE_TRANS_A) and whose A
 * tiles start c0 columns off the block's: the tile's rows run along M,
 * A's innermost dim, so c0 moves the innermost coordinate of its TMA box
 * (3 stages of a wgmma gemm on sm_90a: the mbarrier loop by TMA).  The
 * hardware takes only boxes starting at whole 16-byte vectors; any other
 * start stopped the kernel with an illegal instruction.  TmaCopy's
 * `aligned` tests the first tile's start and the advance, as G2S's does:
 * c0 = 8 runs the loop by TMA, c0 = 5 and c0 = -3 the cp.async loop
 * (tests/tma_compile.sh checks the plans on sm_90a).
 * C[i][j] = sum over k of A[k][i + c0] * B[k][j], A's columns outside
 * [0, M) zero.
 * shape: M=136,N=72,K=96,c0=5
 * shape: M=136,N=72,K=96,c0=-3
 * shape: M=136,N=72,K=96,c0=8
 * reject-cuda: TmaCopy<[^>]*> [A-Za-z_]+\([A-Za-z_]+_map\);
 */
#include <tilec.h>

TILE_KERNEL void
tma_origin_column(int M, int N, int K, int c0, const f16 A[K][M],
		  const f16 B[K][N], f16 C[M][N])
{
	tile_threads(128);
	int bx = tile_grid_x(ceildiv(N, 64));
	int by = tile_grid_y(ceildiv(M, 128));

	tile_shared f16 As[64][128];
	tile_shared f16 Bs[64][64];
	tile_fragment f32 acc[128][64];

	tile_clear(acc);
	tile_pipelined(k, ceildiv(K, 64), 3) {
		tile_copy(As, &A[k * 64][by * 128 + c0]);
		tile_copy(Bs, &B[k * 64][bx * 64]);
		tile_gemm(acc, As, Bs, TILE_TRANS_A);
	}
	tile_copy(&C[by * 128][bx * 64], acc);
}
