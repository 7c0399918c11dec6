// expect: 8:17: error: tile_gemm's A operand must be a whole buffer, not a region of 'A'
#include <tilec.h>

TILE_KERNEL void k(int M, const f16 A[M][32], f32 C[M][64])
{
	tile_shared f16 Bs[32][64];
	tile_fragment f32 acc[64][64];
	tile_gemm(acc, &A[0][0], Bs);
}
