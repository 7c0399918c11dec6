// expect: 11:2: error: tile_gemm shapes do not match: C 'acc' is 64x64, A 'As' is 64x32, B 'Bs' is 64x64 (need C MxN, A MxK, B KxN)
#include <tilec.h>

TILE_PARAM(BLOCK_K, 32, 32, 64);

TILE_KERNEL void k(int M, f32 C[M][64])
{
	tile_shared f16 As[64][BLOCK_K];
	tile_shared f16 Bs[64][64];
	tile_fragment f32 acc[64][64];
	tile_gemm(acc, As, Bs);
	tile_copy(&C[0][0], acc);
}
