/*
 * strip_atomic.c - reduced from tests/gen/tilegen.py seed 148 kernel k5
 * (feature +narrow_all, but nothing narrow is needed): the CPU's strip
 * pass (one thread runs 4 blocks of a grid row, sharing what does not
 * depend on grid x) took a tile_atomic_add whose operands do not depend
 * on grid x for a shared statement and ran it once a strip: 1 added
 * where 4 blocks each add 1 (Acc5 off by 3 per element on openmp).
 * Fixed in src/passes/cpu_strip.c (a statement that adds atomically is
 * each block's), bug 29.
 *   tilec run strip_atomic.c --shape M=207,N=3,S=47,U=13,V=7
 */
#include <tilec.h>

TILE_KERNEL void
k(int M, int N, int S, int U, int V, const f16 A2[M][S], const f16 B3[S][N],
  f32 Acc5[U][V])
{
	tile_threads(128);
	int b0 = tile_grid_x(ceildiv(M, 64));
	int b1 = tile_grid_y(ceildiv(N, 2));

	tile_shared f16 a2[64][4];
	tile_fragment f16 b3[4][2];
	tile_fragment f16 acc4[64][2];
	tile_fragment i64 t6[64][2];

	tile_fill(acc4, 2.0f);
	for (int k = 0; k < ceildiv(S, 4); k++) {
		tile_copy(a2, &A2[b0 * 64][k * 4]);
		tile_copy(b3, &B3[k * 4][b1 * 2]);
		tile_gemm(acc4, a2, b3);
	}
	tile_fill(t6, 1);
	tile_atomic_add(&Acc5[0][0], t6);
}
