/* tile_atomic_add of a 2-D tile into f16 and bf16 tensors at a row read
 * from a tensor (an embedding backward's scatter-add): the origin may be
 * negative as far as tilec can tell, so each element is tested, and each
 * addition is the narrow float's (converted, added, rounded), never an
 * integer addition to its bits.  Several tokens share a row, so the adds
 * race and must all land.
 * shape: T=40,V=5,D=70
 * shape: T=3,V=2,D=5
 * run: --range ids=0:V-1
 */
#include <tilec.h>

TILE_PARAM(BD, 32);

TILE_KERNEL void
atomic_rows_narrow(int T, int V, int D, const i32 ids[T], const f32 dY[T][D],
		   f16 dW[V][D], bf16 dU[V][D])
{
	int t = tile_grid_x(T);
	int c = tile_grid_y(ceildiv(D, BD));
	tile_fragment f32 row[1][BD];
	tile_copy(row, &dY[t][c * BD]);
	int id = ids[t];
	tile_atomic_add(&dW[id][c * BD], row);
	tile_atomic_add(&dU[id][c * BD], row);
}
