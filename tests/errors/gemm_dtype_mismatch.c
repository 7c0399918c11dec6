// expect: 9:2: error: tile_gemm operands differ in dtype: 'As' is f16, 'Bs' is bf16
#include <tilec.h>

TILE_KERNEL void k(int M, f32 C[M][64])
{
	tile_shared f16 As[64][32];
	tile_shared bf16 Bs[32][64];
	tile_fragment f32 acc[64][64];
	tile_gemm(acc, As, Bs);
	tile_copy(&C[0][0], acc);
}
