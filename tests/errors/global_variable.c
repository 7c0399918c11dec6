// expect: 4:7: error: global variable 'scale': a tile program's data comes in through kernel parameters
#include <tilec.h>

float scale = 2.0f;

TILE_KERNEL void k(int M, f32 Y[M])
{
}
