/*
 * gpu_padded_copy_zero.c - reduced from tests/gen/tilegen.py seed 8
 * kernels k2 and k8 (the H200 run of 2026-12-01: "got 0, want 255"): an
 * element-by-element copy from a tensor into a shared tile printed its
 * out-of-bounds zero as 0.0f, so `in ? (int)X[...] : 0.0f` was a float:
 * an i8 -1 bound for a u8 tile became -1.0f, which a GPU converts to 0
 * (x86 to 255; the HIP emulator now traps on it), and an i64 above 2^24
 * lost its low bits.  Fixed in emitters/gpu.c (copy_generic): the zero
 * has the destination's value type.
 *   tilec run gpu_padded_copy_zero.c --shape M=37,N=70,K=3 --tol 0
 */
#include <tilec.h>
TILE_KERNEL void
k(int M, int N, int K, const i8 X[M][K][N], const i64 W[M][K][N],
  i32 Y[M][N], i64 Z[M][N])
{
	tile_threads(128);
	int b0 = tile_grid_x(ceildiv(M, 4));
	int b1 = tile_grid_y(ceildiv(N, 64));
	tile_shared u8 x[4][64];
	tile_shared i64 w[4][64];
	tile_copy(x, tile_dims(&X[b0 * 4][1][b1 * 64], 0, 2));
	tile_copy(w, tile_dims(&W[b0 * 4][2][b1 * 64], 0, 2));
	tile_parallel(i, 4) tile_parallel(j, 64)
		w[i][j] = w[i][j] * 33554467 + x[i][j];
	tile_copy(&Y[b0 * 4][b1 * 64], x);
	tile_copy(&Z[b0 * 4][b1 * 64], w);
}
