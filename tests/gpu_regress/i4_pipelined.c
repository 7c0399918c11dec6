/* An i4 tensor copied into a packed i4 shared tile inside a pipelined
 * loop: on CUDA the copy is asynchronous, its aligned 16-byte runs by
 * cp.async into stage k % 3 (stages of packed bytes: `(ELEMS + 1) / 2`
 * apart), the rest (odd K: rows start mid-byte) by plain stores.
 * Y[m][j] = sum over k of X[m][k * 64 + j] * (k + 1).
 * shape: M=40,K=640
 * shape: M=37,K=333
 * expect-cuda: tilec::copy_g2s_i4<16, 64, 128, true>
 * expect-cuda: Xs \+ k_stage \* \(\(16 \* 64 \+ 1\) / 2\)
 * expect-ir: async_copy Xs stage
 */
#include <tilec.h>

TILE_KERNEL void
i4_pipelined(int M, int K, const i4 X[M][K], f32 Y[M][64])
{
	tile_threads(128);
	int b = tile_grid_x(ceildiv(M, 16));
	tile_shared i4 Xs[16][64];
	tile_shared f32 acc[16][64];
	tile_fill(acc, 0.0f);
	tile_pipelined(k, ceildiv(K, 64), 3) {
		tile_copy(Xs, &X[b * 16][k * 64]);
		tile_parallel(i, 16) tile_parallel(j, 64)
			acc[i][j] += (float)Xs[i][j] * (float)(k + 1);
	}
	tile_copy(&Y[b * 16][0], acc);
}
