// expect: 4:26: error: scalar parameter 'M' has type 'short'; scalars are int, long long, float or double
#include <tilec.h>

TILE_KERNEL void k(short M, f32 Y[64])
{
}
