// expect: 9:2: error: tile_gemm takes 3 or 4 arguments, not 5
#include <tilec.h>

TILE_KERNEL void k(int M, f32 C[M][64])
{
	tile_shared f16 As[64][32];
	tile_shared f16 Bs[32][64];
	tile_fragment f32 acc[64][64];
	tile_gemm(acc, As, Bs, TILE_TRANS_A, 1);
}
