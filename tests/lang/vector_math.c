/* The math functions with vector forms in a fused row loop over f16 rows
 * (on AVX-512 and avx2 targets, explicit vectors: tilec_vfmaf,
 * tilec_vfmaxf, tilec_vsqrtf, ...), a uniform argument broadcast among
 * varying ones, ragged columns and rows past the tensor's end.  The
 * rounding functions (floorf, ceilf, truncf, rintf) see values near
 * their steps; fmaxf and fminf clamp.
 * shape: M=5,N=1030
 * shape: M=3,N=16
 * shape: M=9,N=2100
 * run: --range X=-20:20,B=-3:3
 */
#include <tilec.h>

TILE_PARAM(BLOCK_M, 4);
TILE_PARAM(BLOCK_N, 1024);

TILE_KERNEL void
vector_math(int M, int N, const f16 X[M][N], const f16 B[N], f16 Y[M][N],
	    f32 Z[M][N])
{
	tile_threads(128);
	int bm = tile_grid_x(ceildiv(M, BLOCK_M));
	int bn = tile_grid_y(ceildiv(N, BLOCK_N));
	tile_fragment f32 x[BLOCK_M][BLOCK_N], z[BLOCK_M][BLOCK_N];
	tile_fragment f32 b[BLOCK_N];
	tile_copy(x, &X[bm * BLOCK_M][bn * BLOCK_N]);
	tile_copy(b, &B[bn * BLOCK_N]);
	tile_parallel(i, BLOCK_M) tile_parallel(j, BLOCK_N) {
		float v = fmaf(x[i][j], 0.5f, b[j]);
		x[i][j] = fminf(fmaxf(v, 0.0f), 6.0f) + sqrtf(fabsf(v)) +
			  rsqrtf(1.0f + v * v);
		z[i][j] = floorf(v) + 2.0f * ceilf(v) + 4.0f * truncf(v) +
			  8.0f * rintf(v);
	}
	tile_copy(&Y[bm * BLOCK_M][bn * BLOCK_N], x);
	tile_copy(&Z[bm * BLOCK_M][bn * BLOCK_N], z);
}
