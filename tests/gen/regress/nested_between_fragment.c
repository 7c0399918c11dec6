/*
 * nested_between_fragment.c - reduced from tests/gen/tilegen.py seed 3,
 * kernel k7 (by hand, from what reduce.py kept): a tile_parallel nest
 * with a declaration between its levels, over fragments.  On HIP (under
 * tests/hip_emu) each thread visits only some elements and the rest of
 * t2 keeps its old contents: the known bug of nested tile_parallel over
 * shared memory (issue 11, class 2) reaches fragments too.  Expected to
 * fail until that fix lands (tests/meson.build, gen_xfail).
 *   tests/hip_emu/hip_emu_run.py build/tilec . tests/gen/regress/nested_between_fragment.c --shape M=5,N=3,K=8
 */
#include <tilec.h>
TILE_KERNEL void
k7(int M, int N, int K, const f64 X[M][N][K], f16 Y[M][N][K])
{
	tile_threads(256);
	int b0 = tile_grid_x(ceildiv(M, 64));
	int b1 = tile_grid_y(ceildiv(N, 1));
	tile_fragment f64 x0[64][1][8];
	tile_fragment f32 t2[64][1][8];
	tile_copy(x0, &X[b0 * 64][b1][0]);
	tile_parallel(i, 64) {
		int s0 = i;
		tile_parallel(j, 1) tile_parallel(l, 8)
			t2[i][j][l] = cosf(-x0[i][j][l]) + s0 * 0.0f;
	}
	tile_copy(&Y[b0 * 64][b1][0], t2);
}
