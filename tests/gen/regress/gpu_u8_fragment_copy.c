/*
 * gpu_u8_fragment_copy.c - reduced from tests/gen/tilegen.py seed 157
 * kernel k8 (the HIP emulator, with the GPU features on): a u8 register
 * fragment was an array of int, its value type, so a copy from an i32
 * tensor into it kept -3 where the fragment must hold 253 (the copy
 * helpers convert to the fragment's element type).  Fixed in
 * emitters/gpu.c (reg_type): 8-bit integer fragments are arrays of their
 * own type, so every write wraps and every read promotes to int.
 *   tilec run gpu_u8_fragment_copy.c --shape M=213 --tol 0
 */
#include <tilec.h>
TILE_KERNEL void
k(int M, const i32 X[M], i64 Y[M], i8 Z[M])
{
	tile_threads(128);
	int b0 = tile_grid_x(ceildiv(M, 64));
	tile_shared i64 y[64];
	tile_fragment u8 x[64];
	tile_fragment i8 z[64];
	tile_shared i8 t[64];
	tile_copy(x, tile_dims(&X[b0 * 64], 0));
	tile_copy(z, &X[b0 * 64]);
	tile_parallel(i, 64) {
		t[i] = min(x[i], 9);
	}
	tile_parallel(i, 64) {
		y[i] = (i8)(max(t[i], max(3, b0))) + x[i] * 1000;
		z[i] = z[i] * 2 + x[i] / 3;
	}
	tile_copy(&Y[b0 * 64], y);
	tile_copy(&Z[b0 * 64], z);
}
