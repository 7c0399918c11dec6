// expect: 17:12: error: tile_gemm accumulates f32 operands in a float type, not i32 ('acc'); i32 takes i8 operands
/* f32 operands into an i32 accumulator: backends truncated each operand
 * to int; no instruction sums float products as integers.
 */
#include <tilec.h>
TILE_KERNEL void
gemm_f32_into_i32(int M, int N, int K, const f32 A[M][K], const f32 B[K][N],
		  i32 C[M][N])
{
	tile_threads(32);
	tile_shared f32 as[16][16];
	tile_shared f32 bs[16][16];
	tile_fragment i32 acc[16][16];
	tile_clear(acc);
	tile_copy(as, &A[0][0]);
	tile_copy(bs, &B[0][0]);
	tile_gemm(acc, as, bs);
	tile_copy(&C[0][0], acc);
}
