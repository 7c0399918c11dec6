// expect: 7:16: error: 'X' has 2 dims but 1 index is given; an element access needs one index per dim
#include <tilec.h>

TILE_KERNEL void k(int M, const f32 X[M][64])
{
	tile_fragment f32 x[64];
	tile_copy(x, &X[3]);
}
