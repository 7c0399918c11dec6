/* A tile op's operands may read elements of buffers: the value of
 * tile_fill(x, x[0][0] + 1.0f), which overwrites the x it reads, and
 * the origin of a tile_copy.  The value is one for the whole op, read
 * before any element is written; the CPU's fill loop read x[0][0] per
 * element, after overwriting it, and the GPU targets, which read a
 * register fragment's element only inside the tile_parallel loops that
 * own it, stopped with an internal error.  Such an operand is now a
 * local declared before the op (the operands pass), as if written
 * `float v = x[0][0] + 1.0f; tile_fill(x, v);`.
 * shape: N=16
 * shape: N=40
 * expect-cuda: const float x_value = x\[
 * expect-cuda: const int X_at = b \* 16 \+ \(x\[
 * expect-cuda: const float s_value = s\[
 * expect-hip: const float x_value = x\[
 */
#include <tilec.h>

TILE_KERNEL void
fill_element(int N, const f32 X[N][64], f32 Y[N][64], f32 Z[N][64],
	     f32 S[N][64])
{
	tile_threads(128);
	int b = tile_grid_x(ceildiv(N, 16));
	tile_fragment f32 x[16][64];
	tile_fragment f32 z[16][64];
	tile_shared f32 s[16][64];
	tile_copy(x, &X[b * 16][0]);
	tile_copy(s, &X[b * 16][0]);
	tile_copy(z, &X[b * 16 + (x[0][1] > 0.0f ? 1 : 0)][0]);
	tile_fill(x, x[0][0] + 1.0f);
	tile_fill(s, s[0][0] * 2.0f);
	tile_copy(&Y[b * 16][0], x);
	tile_copy(&Z[b * 16][0], z);
	tile_copy(&S[b * 16][0], s);
}
