/* An i4 tensor copied into a packed i4 shared tile (tilec::copy_g2s_i4:
 * 16-byte runs where both sides' rows are whole aligned bytes, bytes packed
 * from their two elements otherwise), its elements read one by one
 * (tilec::i4_get) and written one by one into a second packed tile and an
 * i4 tensor (tilec::i4_put: two threads write the two nibbles of one
 * byte), then copied whole to another i4 tensor.  With N odd, rows start
 * mid-byte.  Y = X * 3 (f32), Z = X + 5 wrapped to i4, W = -X wrapped
 * (-(-8) is 8, which wraps to -8).
 * shape: M=40,N=64
 * shape: M=40,N=96
 * shape: M=9,N=37
 * expect-cuda: tilec::copy_g2s_i4<
 * expect-cuda: tilec::i4_put\(
 * expect-ir: copy Xs <- X.*vector
 */
#include <tilec.h>

TILE_KERNEL void
i4_shared(int M, int N, const i4 X[M][N], f32 Y[M][N], i4 Z[M][N], i4 W[M][N])
{
	int bm = tile_grid_x(ceildiv(M, 8));
	int bn = tile_grid_y(ceildiv(N, 64));
	tile_shared i4 Xs[8][64];
	tile_shared i4 Ns[8][64];
	tile_copy(Xs, &X[bm * 8][bn * 64]);
	tile_parallel(i, 8) tile_parallel(j, 64) {
		int r = bm * 8 + i, c = bn * 64 + j;
		if (r < M && c < N) {
			Y[r][c] = (float)Xs[i][j] * 3.0f;
			Z[r][c] = (i4)(Xs[i][j] + 5);
		}
		Ns[i][j] = (i4)(-Xs[i][j]);
	}
	tile_copy(&W[bm * 8][bn * 64], Ns);
}
