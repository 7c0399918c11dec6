// expect: 8:1: error: kernel 'k' needs 90112 bytes of shared memory (a 8192, b 16384, 65536 for reductions and barriers); hip gfx90a allows 65536 per block
// args: -t hip --emit=ir
/* The limit message counts what the buffers leave too: a column sum of a
 * register accumulator combines its waves' partial sums in LDS. */
#include <tilec.h>

TILE_KERNEL void
k(int M, int N, const f16 A[M][32], const f16 B[32][N], f32 R[M],
  f32 S[N])
{
	tile_threads(256);
	int bm = tile_grid_x(ceildiv(M, 128));
	int bn = tile_grid_y(ceildiv(N, 256));
	tile_shared f16 a[128][32];
	tile_shared f16 b[32][256];
	tile_fragment f32 acc[128][256];
	tile_fragment f32 r[128];
	tile_fragment f32 c[256];
	tile_clear(acc);
	tile_copy(a, &A[bm * 128][0]);
	tile_copy(b, &B[0][bn * 256]);
	tile_gemm(acc, a, b);
	tile_reduce_sum(r, acc, 1);
	tile_reduce_sum(c, acc, 0);
	tile_atomic_add(&R[bm * 128], r);
	tile_atomic_add(&S[bn * 256], c);
}
