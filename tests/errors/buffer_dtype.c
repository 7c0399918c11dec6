// expect: 6:29: error: buffer 'x' has element type 'unsigned short', which is not a tile dtype
#include <tilec.h>

TILE_KERNEL void k(int M, f32 Y[M])
{
	tile_shared unsigned short x[64];
}
