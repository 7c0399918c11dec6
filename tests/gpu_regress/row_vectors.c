/* Gathered and bounded loads into shared tiles whose rows move as 16-byte
 * vectors (ragged.c, loop.row_vec): a run of 8 f16 of a row inside the
 * tensor at an aligned address is one vector; a row outside the gather's
 * range or past the bound, a run past the tensor's last column, or a
 * misaligned row (D odd: rows start at odd elements) goes element by
 * element.  Y[t] = X[ids[t]] (zero where ids[t] is out of range), Z[t] =
 * X[t] for t < n (zero past n and past V).
 * shape: T=70,V=50,D=128,n=61
 * shape: T=70,V=50,D=77,n=5
 * shape: T=9,V=3,D=100,n=100
 * run: --range ids=-2:V+1
 * expect-ir: parallel col in 0 \.\. BLOCK_D, rows in vectors of 8 where
 * expect-cuda: tilec::copy16\(&ys\[
 * expect-cuda: tilec::copy16\(&zs\[
 * expect-hip: tilec::copy16\(&ys\[
 */
#include <tilec.h>

TILE_PARAM(BLOCK_T, 16);
TILE_PARAM(BLOCK_D, 64);

TILE_KERNEL void
row_vectors(int T, int V, int D, int n, const i32 ids[T], const f16 X[V][D],
	    f16 Y[T][D], f16 Z[T][D])
{
	tile_threads(128);
	int bt = tile_grid_x(ceildiv(T, BLOCK_T));
	int bd = tile_grid_y(ceildiv(D, BLOCK_D));
	tile_shared i32 idx[BLOCK_T];
	tile_shared f16 ys[BLOCK_T][BLOCK_D];
	tile_shared f16 zs[BLOCK_T][BLOCK_D];
	tile_copy(idx, &ids[bt * BLOCK_T]);
	tile_copy(ys, tile_rows(&X[0][bd * BLOCK_D], idx));
	tile_copy(zs, tile_bounded(&X[bt * BLOCK_T][bd * BLOCK_D], n - bt * BLOCK_T));
	tile_copy(&Y[bt * BLOCK_T][bd * BLOCK_D], ys);
	tile_copy(&Z[bt * BLOCK_T][bd * BLOCK_D], zs);
}
