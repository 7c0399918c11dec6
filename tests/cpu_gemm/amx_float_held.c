/*
 * amx_float_held.c - a bf16 gemm operand the program also changes element
 * by element: on AMX it stays float-held (its partner too), the gemm
 * converts both on every call, and tilec says so in a note.
 */
#include <tilec.h>

TILE_PARAM(B, 64);

TILE_KERNEL void
amx_float_held(int M, int N, int K, const bf16 A[M][K], const bf16 W[N][K],
	       f32 C[M][N])
{
	int bx = tile_grid_x(ceildiv(N, B));
	int by = tile_grid_y(ceildiv(M, B));
	tile_shared bf16 As[B][B];
	tile_shared bf16 Ws[B][B];
	tile_fragment f32 acc[B][B];
	tile_clear(acc);
	for (int k = 0; k < ceildiv(K, B); k++) {
		tile_copy(As, &A[by * B][k * B]);
		tile_copy(Ws, &W[bx * B][k * B]);
		tile_parallel(i, B) tile_parallel(j, B)
			As[i][j] = As[i][j] * 2.0f;
		tile_gemm(acc, As, Ws, TILE_TRANS_B);
	}
	tile_copy(&C[by * B][bx * B], acc);
}
