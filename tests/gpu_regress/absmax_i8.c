/* An absmax into i8 takes |x| in i8 (docs/language.md, "Reductions"):
 * an element -128 has |x| -128 there, which never beats the 0 the max
 * starts at (nor any other element).  The OpenMP output took |x| in int
 * and the max of 128 wrapped to -128 when stored, after the lanes had
 * dropped what they held (the result hung on the order they combined
 * in); the GPU helpers combined in int too, so any -128 made the result
 * -128 (tests/gen/FINDINGS.md, bug 23; gen-fast seeds 6025 k1, 6070 k0).
 * Rows of a register fragment into a fragment (reduce2d), into shared
 * memory with TILE_ACCUMULATE, and of a shared tile (smem_reduce).
 * shape: M=300
 * run: --range X=-100:100,Y=-100:100
 * expect-cuda: reduce_value<tilec::REDUCE_ABSMAX, signed char>
 */
#include <tilec.h>

/* x[i][j] = X[i][j] in the first 64 columns, then values that are -128
 * as i8 (-128, -384, -640), read after the others by every lane. */
TILE_KERNEL void
absmax_i8(int M, const i32 X[M][64], const i8 Y[M][32], i8 R[M], i8 S[M],
	  i8 T[M])
{
	int b = tile_grid_x(ceildiv(M, 16));
	tile_fragment i32 x[16][128];
	tile_shared i32 y[16][128];
	tile_fragment i8 r[16];
	tile_shared i8 s[16];
	tile_shared i8 t[16];
	tile_copy(x, &X[b * 16][0]);
	tile_parallel(i, 16) tile_parallel(j, 128)
		x[i][j] = j < 64 ? x[i][j] : -128 - 256 * (j % 3);
	tile_copy(y, x);
	tile_reduce_absmax(r, x, 1);
	tile_copy(s, &Y[b * 16][0]);
	tile_reduce_absmax(s, x, 1, TILE_ACCUMULATE);
	tile_reduce_absmax(t, y, 1);
	tile_copy(&R[b * 16], r);
	tile_copy(&S[b * 16], s);
	tile_copy(&T[b * 16], t);
}
