/* Element nests that move one buffer's S[i][j] to another's D[j][i] run
 * on the CPU as 8 x 8 blocks through vector registers
 * (passes/cpu_transpose.c) when both extents are whole 8s: f32, i32 and
 * f16 (held as float) buffers, offsets on either side, rectangles.  The
 * nests of 12 and 4 rows stay element loops, as does the copy out of
 * `it` (not a transpose).  Edge tiles read zeros and write nothing past
 * M and N.
 * shape: M=40,N=29
 * shape: M=16,N=24
 * shape: M=5,N=3
 * expect-openmp: tilec_transpose32\(&t\[12\]\[0\], 16, &a\[0\]\[12\], 24, 16, 8\);
 * expect-openmp: tilec_transpose32\(&it\[8\]\[o\], 24, &ia\[0\]\[0\], 24, 16, 24\);
 * expect-openmp: tilec_transpose32\(&ht\[0\]\[0\], 16, &h\[0\]\[0\], 24, 16, 24\);
 * reject-openmp: tilec_transpose32\(&t\[0\]\[0\]
 * reject-openmp: tilec_transpose32\(&t\[20\]
 * reject-openmp: tilec_transpose32\(&jt
 */
#include <tilec.h>

TILE_KERNEL void
transpose_forms(int M, int N, const f32 X[M][N], const i32 I[M][N],
		const f16 H[M][N], f32 Y[N][M], i32 J[N][M], f16 G[N][M])
{
	int bx = tile_grid_x(ceildiv(N, 24));
	int by = tile_grid_y(ceildiv(M, 16));
	tile_fragment f32 a[16][24];
	tile_fragment f32 t[24][16];
	tile_fragment i32 ia[16][24];
	tile_fragment i32 it[32][24];
	tile_fragment i32 jt[24][16];
	tile_fragment f16 h[16][24];
	tile_fragment f16 ht[24][16];
	int o = 4;

	tile_copy(a, &X[by * 16][bx * 24]);
	tile_parallel(j, 12) tile_parallel(i, 16)
		t[j][i] = a[i][j];
	tile_parallel(j, 8) tile_parallel(i, 16)
		t[j + 12][i] = a[i][j + 12];
	tile_parallel(j, 4) tile_parallel(i, 16)
		t[j + 20][i] = a[i][20 + j];
	tile_copy(&Y[bx * 24][by * 16], t);

	tile_copy(ia, &I[by * 16][bx * 24]);
	tile_parallel(j, 24) tile_parallel(i, 16)
		it[j + 8][i + o] = ia[i][j];
	tile_parallel(j, 24) tile_parallel(i, 16)
		jt[j][i] = it[j + 8][i + o];
	tile_copy(&J[bx * 24][by * 16], jt);

	tile_copy(h, &H[by * 16][bx * 24]);
	tile_parallel(j, 24) tile_parallel(i, 16)
		ht[j][i] = h[i][j];
	tile_copy(&G[bx * 24][by * 16], ht);
}
