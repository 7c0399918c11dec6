/* A bool buffer in shared memory takes a byte per element, and the next
 * buffer starts past those bytes (the plan once counted a bit per element
 * and overlapped z with m).  Y[j] = M[j] ? Z[j] : -Z[j].
 * shape: N=256
 * shape: N=100
 * expect-ir: shared bool m\[256\] \(smem \+0\)
 * expect-ir: shared f32 z\[256\] \(smem \+256\)
 */
#include <tilec.h>

TILE_KERNEL void
bool_shared(int N, const bool M[N], const f32 Z[N], f32 Y[N])
{
	tile_shared bool m[256];
	tile_shared f32 z[256];
	tile_copy(m, &M[0]);
	tile_copy(z, &Z[0]);
	tile_parallel(j, 256)
		z[j] = m[j] ? z[j] : -z[j];
	tile_copy(&Y[0], z);
}
