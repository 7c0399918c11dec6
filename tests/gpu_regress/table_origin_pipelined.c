/*
 * A pipelined loop whose copy's origin reads a read-only tensor (a page
 * table, as paged attention walks its pages): the origin may be read one
 * iteration early, so the copy is prefetched into x_next with the table
 * entry of iteration p + 1 (read only where iteration p + 1 runs).  Each
 * block sums the pages its row of T lists, CNT[b] of them (0 too); pages
 * repeat, and the last one's rows hang past the pool's end (NPAGES * 16
 * rows of X, page NPAGES - 1 is partial when R is not a multiple of 16).
 * shape: B=5,R=300,MAXP=7
 * run: --range T=0:18,CNT=0:7
 * expect-ir: copy x_next <- X\[T\[b\]\[p \+ 1\] \* 16, 0\] dims \(0, 1\).*register
 * expect-cuda: tilec::Stored<__half, x_rows, x_cols> x_next;
 */
#include <tilec.h>

TILE_KERNEL void
table_sum(int B, int R, int MAXP, const f16 X[R][64], const i32 T[B][MAXP],
	  const i32 CNT[B], f32 Y[B][16][64])
{
	tile_threads(128);
	int b = tile_grid_x(B);
	int n = min(CNT[b], MAXP);
	tile_fragment f32 x[16][64], acc[16][64];
	tile_clear(acc);
	tile_pipelined(p, n, 2) {
		tile_copy(x, &X[T[b][p] * 16][0]);
		tile_parallel(i, 16) tile_parallel(j, 64)
			acc[i][j] += x[i][j];
	}
	tile_copy(&Y[b][0][0], acc);
}
