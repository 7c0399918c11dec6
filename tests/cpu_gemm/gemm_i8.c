/*
 * gemm_i8.c - C = A * B^T with int8 operands and an int32 accumulator,
 * exact: on --arch amx on AMX tiles (tdpbssd), with AVX512-VNNI on
 * vpdpbusd, elsewhere as loops.  B is stored [N][K].
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 64, 32, 64, 128, 256, 512);
TILE_PARAM(BLOCK_N, 64, 32, 64, 128);
TILE_PARAM(BLOCK_K, 64, 64, 128, 256, 512);

TILE_KERNEL void
gemm_i8(int M, int N, int K, const i8 A[M][K], const i8 B[N][K],
	i32 C[M][N])
{
	int bx = tile_grid_x(ceildiv(N, BLOCK_N));
	int by = tile_grid_y(ceildiv(M, BLOCK_M));

	tile_shared i8 As[BLOCK_M][BLOCK_K];
	tile_shared i8 Bs[BLOCK_N][BLOCK_K];
	tile_fragment i32 acc[BLOCK_M][BLOCK_N];

	tile_clear(acc);
	for (int k = 0; k < ceildiv(K, BLOCK_K); k++) {
		tile_copy(As, &A[by * BLOCK_M][k * BLOCK_K]);
		tile_copy(Bs, &B[bx * BLOCK_N][k * BLOCK_K]);
		tile_gemm(acc, As, Bs, TILE_TRANS_B);
	}
	tile_copy(&C[by * BLOCK_M][bx * BLOCK_N], acc);
}
