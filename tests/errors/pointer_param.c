// expect: 4:34: error: pointer parameter 'y': declare tensors as arrays with their extents, e.g. const f32 y[N]
#include <tilec.h>

TILE_KERNEL void k(int M, float *y)
{
}
