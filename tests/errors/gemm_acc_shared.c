// expect: 9:12: error: tile_gemm's accumulator 'acc' must be a tile_fragment buffer, not shared
#include <tilec.h>

TILE_KERNEL void k(int M, f32 C[M][64])
{
	tile_shared f16 As[64][32];
	tile_shared f16 Bs[32][64];
	tile_shared f32 acc[64][64];
	tile_gemm(acc, As, Bs);
}
