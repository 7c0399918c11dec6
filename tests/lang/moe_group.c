/* tile_bounded with run-time extents: an MoE grouped GEMM.  Tokens are
 * sorted by expert; expert e owns counts[e] rows (0 .. MAXC), after the
 * rows of the experts before it.  Each block multiplies up to BLOCK_M of
 * its expert's rows by the expert's weights: the loads read only the
 * expert's rows (the rest of the tile is zeros) and the store writes
 * only them, so rows of other experts, and the rows past the last, keep
 * the poison.  Blocks past an expert's rows write nothing.
 * shape: E=3,MAXC=70,T=210,N=72,K=40
 * shape: E=2,MAXC=5,T=10,N=8,K=8
 * run: --range counts=0:MAXC
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 64);
TILE_PARAM(BLOCK_N, 64);
TILE_PARAM(BLOCK_K, 32);

TILE_KERNEL void
moe_group(int E, int MAXC, int T, int N, int K, const i32 counts[E],
	  const f16 X[T][K], const f16 W[E][K][N], f32 Y[T][N])
{
	tile_threads(128);
	int m = tile_grid_x(ceildiv(MAXC, BLOCK_M));
	int bn = tile_grid_y(ceildiv(N, BLOCK_N));
	int e = tile_grid_z(E);
	tile_shared i32 cnt[BLOCK_M];
	tile_shared f16 xs[BLOCK_M][BLOCK_K];
	tile_shared f16 ws[BLOCK_K][BLOCK_N];
	tile_fragment f32 acc[BLOCK_M][BLOCK_N];
	/* The expert's first row: the counts of the experts before it. */
	tile_copy(cnt, tile_bounded(&counts[0], e + 1));
	int upto = tile_sum(cnt);
	int rows = cnt[e] - m * BLOCK_M;
	int first = upto - cnt[e] + m * BLOCK_M;
	tile_clear(acc);
	tile_pipelined(k, ceildiv(K, BLOCK_K), 2) {
		tile_copy(xs, tile_bounded(&X[first][k * BLOCK_K], rows));
		tile_copy(ws, &W[e][k * BLOCK_K][bn * BLOCK_N]);
		tile_gemm(acc, xs, ws);
	}
	tile_copy(tile_bounded(&Y[first][bn * BLOCK_N], rows), acc);
}
