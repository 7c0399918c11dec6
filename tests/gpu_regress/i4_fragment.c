/* i4 tensors copied into f32 register fragments, unpacked in registers
 * (tilec::I4Ptr's copy_g2r): a run of even elements moves as whole bytes,
 * any other (odd N, so rows start mid-byte; the ragged last block) element
 * by element; V goes into shared memory element by element
 * (tilec::i4_get).  Y[i][j] = X[i][j] * 2 + V[j], X and V i4, two per
 * byte.
 * (The GPU backends once rejected i4 tensors with a located error.)
 * shape: M=37,N=128
 * shape: M=70,N=300
 * shape: M=5,N=77
 * expect-cuda: tilec::copy_g2r<.*tilec::i4_ptr\(X,
 * expect-hip: tilec::copy_g2r<.*tilec::i4_ptr\(X,
 */
#include <tilec.h>

TILE_KERNEL void
i4_fragment(int M, int N, const i4 X[M][N], const i4 V[N], f32 Y[M][N])
{
	int bm = tile_grid_x(ceildiv(M, 32));
	int bn = tile_grid_y(ceildiv(N, 128));
	tile_fragment f32 x[32][128];
	tile_shared f32 v[128];
	tile_copy(x, &X[bm * 32][bn * 128]);
	tile_copy(v, &V[bn * 128]);
	tile_parallel(i, 32) tile_parallel(j, 128)
		x[i][j] = x[i][j] * 2.0f + v[j];
	tile_copy(&Y[bm * 32][bn * 128], x);
}
