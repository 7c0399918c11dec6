/*
 * gpu_two_reduces_one_dst.c - reduced from tests/gen/tilegen.py seed 590
 * (the H200 run of 2026-12-01: NVRTC "r4_part" redeclared): two reduces
 * of a register fragment into one tile in one scope each declared the
 * partial results as DST_part, so the CUDA and HIP output did not
 * compile.  Fixed in emitters/gpu.c (fresh_decl): names the emitter
 * declares in a statement's scope are distinct across the kernel.
 * The absmax accumulating into a tile that the sum made negative also
 * showed that the GPUs accumulated absmax as max(old, |x|...) where the
 * reference (and openmp) take max(|old|, |x|...): fixed in emit_reduce
 * and tilec::smem_reduce.
 *   tilec run gpu_two_reduces_one_dst.c --shape M=40,N=19
 */
#include <tilec.h>
TILE_KERNEL void
k(int M, int N, const f32 X[M][N], f32 Y[N])
{
	tile_threads(128);
	int b0 = tile_grid_x(ceildiv(N, 16));
	tile_fragment f32 x[16][16];
	tile_shared f32 r[16];
	tile_fill(r, 0.0f);
	for (int t = 0; t < ceildiv(M, 16); t++) {
		tile_parallel(i, 16) tile_parallel(j, 16)
			x[i][j] = t * 16 + i < M && b0 * 16 + j < N ?
				  X[t * 16 + i][b0 * 16 + j] : 0;
		tile_reduce_absmax(r, x, 0, TILE_ACCUMULATE);
		tile_reduce_sum(r, x, 0, TILE_ACCUMULATE);
	}
	tile_copy(&Y[b0 * 16], r);
}
