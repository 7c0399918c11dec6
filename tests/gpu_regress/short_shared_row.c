/* A shared tile whose rows are shorter than a 16-byte vector (3 floats):
 * the copy helper takes the widest vector the rows divide into, here 4
 * bytes (it once divided by zero vectors per row and did not compile).
 * shape: -
 */
#include <tilec.h>

TILE_KERNEL void
short_shared_row(const f32 X[3], f32 Y[3])
{
	tile_shared f32 s[3];
	tile_copy(s, &X[0]);
	tile_copy(&Y[0], s);
}
