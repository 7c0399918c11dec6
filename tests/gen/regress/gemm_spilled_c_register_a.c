/*
 * gemm_spilled_c_register_a.c - reduced by hand from tests/gen/tilegen.py
 * seed 60 kernel k9 (the second H200 run: NVRTC "no instance of to_value"
 * for a double *): an f64 gemm is the element-wise one over shared
 * memory, so its C lives there; a second gemm into that C with its A a
 * fragment kept the A in registers (the layout skipped a gemm whose C was
 * already spilled), and the element-wise gemm indexed the register array
 * as shared memory.  Fixed in src/passes/layout.c: a gemm whose C is not in
 * registers spills its A.
 *   tilec run gemm_spilled_c_register_a.c --shape M=37,N=70,Q=9,T=45
 */
#include <tilec.h>
TILE_KERNEL void
k(int M, int N, int Q, int T, const f32 A5[Q][M], const f32 B6[N][Q],
  const f64 A8[T][M], const f64 B9[T][N], f64 C[M][N])
{
	tile_threads(128);
	int b0 = tile_grid_x(ceildiv(M, 16));
	int b1 = tile_grid_y(ceildiv(N, 64));
	tile_shared f64 a6[4][16];
	tile_fragment f64 b7[64][4];
	tile_fragment f64 acc8[16][64];
	tile_fragment f64 a12[32][16];
	tile_fragment f64 b13[32][64];
	tile_fill(acc8, 1.0f);
	for (int k = 0; k < ceildiv(Q, 4); k++) {
		tile_copy(a6, &A5[k * 4][b0 * 16]);
		tile_copy(b7, &B6[b1 * 64][k * 4]);
		tile_gemm(acc8, a6, b7, TILE_TRANS_A | TILE_TRANS_B);
	}
	for (int k = 0; k < ceildiv(T, 32); k++) {
		tile_copy(a12, &A8[k * 32][b0 * 16]);
		tile_copy(b13, &B9[k * 32][b1 * 64]);
		tile_gemm(acc8, a12, b13, TILE_TRANS_A);
	}
	tile_copy(&C[b0 * 16][b1 * 64], acc8);
}
