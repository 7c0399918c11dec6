// expect: 6:8: error: initializing 'float' with an expression of incompatible type 'f32 *' (aka 'float *'); dereference with *
#include <tilec.h>

TILE_KERNEL void k(int M, f32 Y[M])
{
	float y = Y;
}
