/* A bool tensor copied into an i32 register fragment: its vectors are
 * 16 one-byte elements (the layout once divided by a bool's bits / 8,
 * which is 0).  Y[j] = M[j].
 * shape: N=300
 */
#include <tilec.h>

TILE_KERNEL void
bool_tensor(int N, const bool M[N], i32 Y[N])
{
	int b = tile_grid_x(ceildiv(N, 128));
	tile_fragment i32 m[128];
	tile_copy(m, &M[b * 128]);
	tile_copy(&Y[b * 128], m);
}
