/* Quantizing to i4: an f32 fragment rounded and clamped to -8 .. 7 into
 * an i32 fragment, then copied into an i4 tensor (element by element
 * through tilec::i4_put: the threads holding the two nibbles of a byte
 * write it at once), and an i4 local wrapping as C's conversion does.
 * Q = clamp(rint(X * 4)), R = (i4)(Q + 9).
 * shape: N=300
 * shape: N=64
 * shape: N=1
 */
#include <tilec.h>

TILE_KERNEL void
i4_store(int N, const f32 X[N], i4 Q[N], i4 R[N])
{
	int b = tile_grid_x(ceildiv(N, 128));
	tile_fragment f32 x[128];
	tile_fragment i32 q[128];
	tile_copy(x, &X[b * 128]);
	tile_parallel(j, 128)
		q[j] = (int)fminf(fmaxf(rintf(x[j] * 4.0f), -8.0f), 7.0f);
	tile_copy(&Q[b * 128], q);
	tile_parallel(j, 128) {
		i4 w = (i4)(q[j] + 9);
		if (b * 128 + j < N)
			R[b * 128 + j] = w;
	}
}
