/*
 * swizzle.c - which shared buffers the CUDA backend swizzles (src/passes/smem.c):
 * those only tile copies from tensors write and only matrix-instruction
 * gemms read.  Bs is also read element by element (the bias row below), so
 * it keeps padded rows; As and the transposed Ws are swizzled.  Run on the
 * CPU too: the program is checked against the reference like any other.
 */
#include <tilec.h>

TILE_KERNEL void
gemm_row_bias(int M, int N, int K, const f16 A[M][K], const f16 B[K][N],
	      const f16 W[N][K], f32 C[M][N])
{
	tile_threads(128);
	int bx = tile_grid_x(ceildiv(N, 64));
	int by = tile_grid_y(ceildiv(M, 64));

	tile_shared f16 As[64][32];
	tile_shared f16 Bs[32][64];
	tile_shared f16 Ws[64][32];
	tile_fragment f32 acc[64][64];

	tile_clear(acc);
	for (int k = 0; k < ceildiv(K, 32); k++) {
		tile_copy(As, &A[by * 64][k * 32]);
		tile_copy(Bs, &B[k * 32][bx * 64]);
		tile_copy(Ws, &W[bx * 64][k * 32]);
		tile_gemm(acc, As, Bs);
		tile_gemm(acc, As, Ws, TILE_TRANS_B);
		tile_parallel(i, 64) tile_parallel(j, 64)
			acc[i][j] += Bs[0][j];
	}
	tile_copy(&C[by * 64][bx * 64], acc);
}
