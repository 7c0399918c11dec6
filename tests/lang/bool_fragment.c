/* A bool fragment is held in registers like a u8 one (a bool takes a
 * byte in buffers): written by a comparison in a tile_parallel loop, read
 * back into an f32 tile and stored as a bool tensor, ragged at the end.
 * shape: N=100
 * shape: N=7
 * expect-cuda: bool p\[
 */
#include <tilec.h>

TILE_PARAM(BLOCK, 64);

TILE_KERNEL void
bool_fragment(int N, const f32 X[N], bool P[N], f32 Y[N])
{
	tile_threads(64);
	int b = tile_grid_x(ceildiv(N, BLOCK));
	tile_fragment f32 x[BLOCK];
	tile_fragment bool p[BLOCK];
	tile_copy(x, &X[b * BLOCK]);
	tile_parallel(i, BLOCK) p[i] = x[i] > 0.0f;
	tile_parallel(i, BLOCK) x[i] = p[i] ? x[i] * 2.0f : -1.0f;
	tile_copy(&P[b * BLOCK], p);
	tile_copy(&Y[b * BLOCK], x);
}
