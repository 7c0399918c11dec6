/* A buffer copied in twice before an element-wise nest reads it.  The
 * OpenMP fusion keeps b in a register and declared its local once per
 * copy ("redefinition of 'b'", a cc error); the second copy must win.
 * Run by tests/meson.build (run-copy-in-twice, run-copy-in-twice-gemm). */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 8, 4, 8);
TILE_PARAM(BLOCK_N, 64, 64, 128);

TILE_KERNEL void
bias_twice(int M, int N, const f32 X[M][N], const f32 bias[N],
	   const f32 bias2[N], f32 Y[M][N])
{
	int bn = tile_grid_x(ceildiv(N, BLOCK_N));
	int bm = tile_grid_y(ceildiv(M, BLOCK_M));
	tile_fragment f32 x[BLOCK_M][BLOCK_N];
	tile_fragment f32 b[BLOCK_N];

	tile_copy(x, &X[bm * BLOCK_M][bn * BLOCK_N]);
	tile_copy(b, &bias[bn * BLOCK_N]);
	tile_copy(b, &bias2[bn * BLOCK_N]);
	tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
		x[i][j] = x[i][j] * 2.0f + b[j];
	tile_copy(&Y[bm * BLOCK_M][bn * BLOCK_N], x);
}

/* The same after a gemm (the epilogue of gemm_bias_relu). */
TILE_KERNEL void
gemm_bias_twice(int M, int N, int K, const f16 A[M][K], const f16 B[K][N],
		const f16 bias[N], const f16 bias2[N], f16 C[M][N])
{
	int bx = tile_grid_x(ceildiv(N, BLOCK_N));
	int by = tile_grid_y(ceildiv(M, BLOCK_M));
	tile_shared f16 As[BLOCK_M][32];
	tile_shared f16 Bs[32][BLOCK_N];
	tile_fragment f32 acc[BLOCK_M][BLOCK_N];
	tile_fragment f32 b[BLOCK_N];

	tile_clear(acc);
	tile_pipelined(k, ceildiv(K, 32), 2) {
		tile_copy(As, &A[by * BLOCK_M][k * 32]);
		tile_copy(Bs, &B[k * 32][bx * BLOCK_N]);
		tile_gemm(acc, As, Bs);
	}
	tile_copy(b, &bias[bx * BLOCK_N]);
	tile_copy(b, &bias2[bx * BLOCK_N]);
	tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N)
		acc[i][j] = fmaxf(acc[i][j] + b[j], 0.0f);
	tile_copy(&C[by * BLOCK_M][bx * BLOCK_N], acc);
}
