/*
 * gpu_pipelined_fragment_twice.c - reduced by hand from tests/gen/tilegen.py
 * seed 1173 (the third H200 run: NVRTC "a4_next has already been
 * declared"): a gemm operand kept in registers and copied twice in a
 * pipelined loop declared its prefetch copy A_next once per copy, and
 * moved it into the fragment once per copy.  Fixed in emitters/gpu.c
 * (first_copy_into): one prefetch copy per fragment, which the later
 * copy overwrites as it overwrites the fragment.
 *   tilec run gpu_pipelined_fragment_twice.c --shape M=70,N=45,K=40
 */
#include <tilec.h>
TILE_KERNEL void
k(int M, int N, int K, const f16 A[M][K], const f16 A2[M][K],
  const f16 B[K][N], f32 C[M][N])
{
	tile_threads(128);
	int b0 = tile_grid_x(ceildiv(M, 64));
	int b1 = tile_grid_y(ceildiv(N, 64));
	tile_fragment f16 a[64][16];
	tile_shared f16 b[16][64];
	tile_fragment f32 acc[64][64];
	tile_fill(acc, 0.0f);
	tile_pipelined(k, ceildiv(K, 16), 2) {
		tile_copy(a, &A2[b0 * 64][k * 16]);
		tile_copy(b, &B[k * 16][b1 * 64]);
		tile_copy(a, &A[b0 * 64][k * 16]);
		tile_gemm(acc, a, b);
	}
	tile_copy(&C[b0 * 64][b1 * 64], acc);
}
