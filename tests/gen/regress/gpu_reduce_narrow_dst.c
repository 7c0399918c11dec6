/*
 * gpu_reduce_narrow_dst.c - reduced from tests/gen/tilegen.py seeds 32
 * k11, 110 k6, 157 k3, 284 k8 and 382 k10 (the H200 run of 2026-12-01,
 * the HIP emulator): an integer reduce into a u8 or i8 tile from an i32
 * one converted each element to the destination's value type, int, and
 * not to the destination's type: |-3| is 3, where docs/language.md has
 * u8(-3) = 253 join the reduction.  Fixed in emitters/gpu.c and
 * tilec::reduce2d / tilec::smem_reduce (reduce_elem), for register,
 * shared and higher-rank sources.  The generator's oracle had the same
 * mistake (tests/gen/tilegen.py, Gen.reduce).
 *   tilec run gpu_reduce_narrow_dst.c --shape M=45,N=21 --tol 0
 */
#include <tilec.h>
TILE_KERNEL void
k(int M, int N, const i32 X[M][N], u8 A[M], i8 B[M], u8 C[N], i8 D[M])
{
	tile_threads(128);
	int b0 = tile_grid_x(ceildiv(M, 16));
	tile_shared i32 xs[16][32];
	tile_fragment i32 xr[16][32];
	tile_shared i32 x3[16][2][16];
	tile_shared u8 a[16];
	tile_fragment i8 b[16];
	tile_shared u8 c[32];
	tile_shared i8 d[16][2];
	tile_shared i8 e[16];
	tile_copy(xs, &X[b0 * 16][0]);
	tile_parallel(i, 16) tile_parallel(j, 32)
		xr[i][j] = xs[i][j] * 37 - 100;
	tile_parallel(i, 16) tile_parallel(j, 2) tile_parallel(l, 16)
		x3[i][j][l] = xs[i][j * 16 + l] - 5;
	tile_reduce_absmax(a, xs, 1);
	tile_reduce_max(b, xr, 1);
	tile_reduce_sum(c, xr, 0);
	tile_reduce_min(d, x3, 2);
	tile_reduce_max(e, d, 1);
	tile_copy(&A[b0 * 16], a);
	tile_copy(&B[b0 * 16], b);
	tile_copy(&D[b0 * 16], e);
	if (b0 == 0)
		tile_copy(&C[0], c);
}
