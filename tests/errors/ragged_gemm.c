// expect: 11:15: error: tile_bounded is an operand of tile_copy only, not of tile_gemm
#include <tilec.h>

TILE_KERNEL void
k(int M, int n, const f32 X[M][64], const i32 I[M], f32 Y[M][64])
{
	tile_shared f16 a[16][16];
	tile_fragment f32 c[16][64];
	tile_shared f16 b[16][64];
	tile_clear(c);
	tile_gemm(c, tile_bounded(&a[0][0], n), b);
	tile_copy(&Y[0][0], c);
}
