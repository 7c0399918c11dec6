/* A tile_parallel loop of constant extent indexing a smaller buffer with
 * no guard: known at translation, and it would write past 'r' (shared
 * memory on the GPUs, the stack on the CPU).  Under an if, a ?: or the
 * right of && the same index is accepted (the run checks it). */
// expect: 14:5: error: this index of 'r' reaches 31 (tile_parallel 'i' runs to 31), outside its 16 elements along dim 0: guard it with an if, or shrink the loop
#include <tilec.h>

TILE_KERNEL void
k(int M, f32 R[M])
{
	tile_threads(32);
	tile_fragment f32 r[16];
	tile_parallel(i, 32)
		r[i] = 1.0f;
	tile_copy(&R[0], r);
}
