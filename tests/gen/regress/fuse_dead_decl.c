/*
 * fuse_dead_decl.c - reduced by hand from tests/gen/tilegen.py seed 4
 * (CI seeds) and 2002: an element-wise nest whose buffer nothing reads,
 * fused with a copy out of another buffer into one row loop of fewer
 * than TILEC_VL columns.  The nest's buffer became a local of the loop,
 * and the loop's body, its declaration alone, printed without braces:
 * `for (...) const float t = ...;` is not C (cc error).  Fixed in
 * openmp_fuse.c: a body that declares a local keeps its braces.
 *   tilec run fuse_dead_decl.c --shape M=9,N=8
 */
#include <tilec.h>
TILE_KERNEL void
k(int M, int N, const f32 X[M][N], f32 Y[M][N])
{
	tile_threads(128);
	int b0 = tile_grid_x(ceildiv(M, 8));
	tile_fragment f32 x[8][8];
	tile_fragment f32 t[8][8];
	tile_fragment f32 r[8];
	tile_copy(x, &X[b0 * 8][0]);
	tile_reduce_sum(r, x, 0);
	tile_parallel(i, 8) tile_parallel(j, 8)
		t[i][j] = x[i][j];
	tile_copy(&Y[b0 * 8][0], x);
}
