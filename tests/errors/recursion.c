// expect: 6:2: error: kernel 'k' calls itself: recursion is not supported
#include <tilec.h>

TILE_KERNEL void k(int M, f32 Y[M])
{
	k(M, Y);
}
