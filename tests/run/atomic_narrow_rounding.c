/* tile_atomic_add into bf16 and f16: the value is converted to the
 * element's type, then added and the sum rounded, as the GPUs' atomic
 * adds of those types do.  Each element is first set to -x (rounded),
 * then x is added: 0 exactly, where adding the unrounded x would leave
 * x's rounding error behind, which Y and Z read back magnified (on the
 * CPU a block's statements run in order, so it reads its own adds).
 */
#include <tilec.h>

TILE_PARAM(BLOCK, 64);

TILE_KERNEL void
atomic_narrow_rounding(int N, const f32 X[N], bf16 D[N], f16 H[N], f32 Y[N],
		       f32 Z[N])
{
	int b = tile_grid_x(ceildiv(N, BLOCK));
	tile_fragment f32 x[BLOCK];
	tile_fragment f32 nx[BLOCK];
	tile_copy(x, &X[b * BLOCK]);
	tile_parallel(i, BLOCK) nx[i] = -x[i];
	tile_copy(&D[b * BLOCK], nx);
	tile_copy(&H[b * BLOCK], nx);
	tile_atomic_add(&D[b * BLOCK], x);
	tile_atomic_add(&H[b * BLOCK], x);
	tile_copy(x, &D[b * BLOCK]);
	tile_copy(nx, &H[b * BLOCK]);
	tile_parallel(i, BLOCK) {
		x[i] = x[i] * 65536.0f;
		nx[i] = nx[i] * 65536.0f;
	}
	tile_copy(&Y[b * BLOCK], x);
	tile_copy(&Z[b * BLOCK], nx);
}
