/*
 * gcc_split_loops.c - reduced from tests/gen/tilegen.py seed 9315 kernel k7
 * (the oracle backend: the reference interpreter and the openmp backend
 * agreed, the generator's serial C model did not).  Not tilec's code: GCC
 * 12 (Debian 12's 12.2) at -O3, or -O2 -fsplit-loops, splits the oracle's
 * loop over u on its test `3.0 > u`, then gives x1 and t3 (two arrays of
 * the loop body, both live) one stack slot, so x1's 1.0 reads back as
 * another array's value (2.0).  The runtime now compiles with
 * -fno-split-loops where the C compiler is GCC (runtime/jit_cc.c), which
 * builds tilec's own openmp output too.
 *   tilec run gcc_split_loops.c --kernel k7 --shape M=127,N=125,K=9 --tol 0.25 --source gcc_split_loops.oracle.c
 */
#include <tilec.h>
TILE_KERNEL void
k7(int M, int N, int K, fp8e5m2 Y2[M][K][N])
{
	tile_threads(32);
	int b0 = tile_grid_x(ceildiv(M, 32));
	int b1 = tile_grid_y(ceildiv(N, 32));
	int u = tile_grid_z(K);

	tile_fragment f32 x1[32][32];
	tile_fragment f16 t2[32];
	tile_fragment u8 t3[32][32];
	tile_shared f64 t5[32][32];

	tile_fill(x1, 1.0f);
	tile_fill(t2, 2.0f);
	if (3.0f > (float)(u)) {
		tile_fill(t3, 1);
	} else {
		tile_parallel(i, 32) {
			fp8e5m2 s0 = powf(fabsf(expf(t2[i])) + 1.0f, 2.0f);
			tile_parallel(j, 32) {
				if (((i | b0) != u) || (t2[j] >= t2[i]))
					t3[i][j] = (2 ^ u);
				else
					t3[i][j] = ((-i) & (-i));
			}
		}
	}
	tile_fill(t5, 2.0f);
	tile_fill(t5, 1.0f);
	tile_copy(tile_dims(&Y2[b0 * 32][u][b1 * 32], 0, 2), x1);
}
