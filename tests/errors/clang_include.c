// expect: 4:10: error: 'stdio.h' file not found
#include <tilec.h>

#include <stdio.h>
TILE_KERNEL void k(int M, f32 Y[M])
{
}
