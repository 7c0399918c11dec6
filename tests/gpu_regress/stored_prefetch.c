/*
 * A pipelined loop whose copies fill register fragments from 16-bit
 * tensors: the prefetch copies (x_next, w_next) hold the elements as
 * stored (tilec::Stored, whole vectors), converted only at the top of
 * the next iteration, so their loads are not waited for while the
 * iteration before reduces.  x is f32 from f16 (converted on the
 * rotation), w bf16 from bf16 (the same type).  Ragged shapes: the last
 * tile's columns and the last block's rows are partial, so the
 * element-wise path of the copy fills the Stored runs too.
 * shape: M=70,N=150
 * shape: M=32,N=128
 * expect-ir: fragment f16 x_next\[32\]\[64\] .*as stored
 * expect-cuda: tilec::Stored<__half, x_rows, x_cols> x_next;
 * expect-cuda: tilec::Stored<__nv_bfloat16, x_rows, x_cols> w_next;
 * expect-cuda: x\[r0\]\[r1\] = tilec::to_float\(x_next\[r0\]\[r1\]\);
 * expect-hip: tilec::Stored<__half, x_rows, x_cols> x_next;
 */
#include <tilec.h>

TILE_KERNEL void
rowdot_pipe(int M, int N, const f16 X[M][N], const bf16 W[M][N], f32 Y[M])
{
	tile_threads(128);
	int bx = tile_grid_x(ceildiv(M, 32));
	tile_fragment f32 x[32][64], p[32][64];
	tile_fragment bf16 w[32][64];
	tile_fragment f32 acc[32];
	tile_clear(acc);
	tile_pipelined(k, ceildiv(N, 64), 2) {
		tile_copy(x, &X[bx * 32][k * 64]);
		tile_copy(w, &W[bx * 32][k * 64]);
		tile_parallel(i, 32) tile_parallel(j, 64)
			p[i][j] = x[i][j] * w[i][j];
		tile_reduce_sum(acc, p, 1, TILE_ACCUMULATE);
	}
	tile_copy(&Y[bx * 32], acc);
}
