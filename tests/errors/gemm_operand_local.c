// expect: 9:17: error: tile_gemm's operand 'As' must be shared or fragment, not local
#include <tilec.h>

TILE_KERNEL void k(int M, f32 C[M][64])
{
	tile_local f16 As[64][32];
	tile_shared f16 Bs[32][64];
	tile_fragment f32 acc[64][64];
	tile_gemm(acc, As, Bs);
}
