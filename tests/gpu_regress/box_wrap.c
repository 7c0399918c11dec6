/* The CUDA target decides an epilogue's element test once at the tile's
 * corner (passes/box_tests.c) only where its sides are affine in the
 * nest's indices.  A cast that wraps is not: (i4)i runs 0 .. 7, -8 ..
 * -1, 0 .. as i counts up, yet it was taken as i itself, so the test
 * `(i4)i <= (u8)bm` was decided at i = 63, where (i4)63 is -1 and it
 * holds for every block, so the loop ran nowhere and rows 1 .. 7,
 * 17 .. 23, ... of the first block row kept the wrong arm (seed 16547
 * k7 of +transpose,+fast_gemm_all on an H100: -749.5 where 0.23 was
 * due).  A widening cast, (i64)j, keeps every value and still gets its
 * corner test.
 * shape: M=70,N=130,K=40
 * shape: M=16,N=64,K=32
 * reject-cuda: i4_wrap\(63\)
 * expect-cuda: if \(\(long long\)63 \+ \(long long\)\(bn \* 64\) < \(long long\)N\)
 */
#include <tilec.h>

TILE_KERNEL void
box_wrap(int M, int N, int K, const f16 A[M][K], const f16 B[K][N],
	 f32 C[M][N])
{
	tile_threads(128);
	int bn = tile_grid_x(ceildiv(N, 64));
	int bm = tile_grid_y(ceildiv(M, 64));
	tile_fragment f32 acc[64][64];
	tile_shared f16 a[64][32];
	tile_shared f16 b[32][64];

	tile_fill(acc, 0.0f);
	for (int k = 0; k < ceildiv(K, 32); k++) {
		tile_copy(a, &A[bm * 64][k * 32]);
		tile_copy(b, &B[k * 32][bn * 64]);
		tile_gemm(acc, a, b);
	}
	tile_parallel(i, 64) tile_parallel(j, 64)
		acc[i][j] = (i4)(i) <= (u8)(bm) ? acc[i][j] : -acc[i][j] - 100.0f;
	tile_parallel(i, 64) tile_parallel(j, 64)
		acc[i][j] = (i64)(j) + bn * 64 < N ? acc[i][j] * 2.0f : acc[i][j];
	tile_copy(&C[bm * 64][bn * 64], acc);
}
