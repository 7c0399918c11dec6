// expect: 9:25: error: tile_gemm's flags must be a constant
#include <tilec.h>

TILE_KERNEL void k(int M, f32 C[M][64])
{
	tile_shared f16 As[64][32];
	tile_shared f16 Bs[32][64];
	tile_fragment f32 acc[64][64];
	tile_gemm(acc, As, Bs, M);
}
