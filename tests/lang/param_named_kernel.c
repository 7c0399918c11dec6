/* A parameter with its kernel's name is valid C (it hides the function
 * inside the body); every backend and the HIP emulator's wrapper take it.
 * (tilec export refuses it with a located error: its launch function
 * calls the kernel by name; tests/cli.sh export-names.)
 * shape: N=300
 * shape: N=7
 */
#include <tilec.h>

TILE_KERNEL void
scale(int N, float scale, const f32 X[N], f32 Y[N])
{
	tile_threads(128);
	int b = tile_grid_x(ceildiv(N, 128));
	tile_fragment f32 x[128];
	tile_copy(x, &X[b * 128]);
	tile_parallel(i, 128)
		x[i] = x[i] * scale;
	tile_copy(&Y[b * 128], x);
}
