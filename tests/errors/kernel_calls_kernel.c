// expect: 11:2: error: kernel 'second' calls kernel 'first': kernels cannot call kernels
#include <tilec.h>

TILE_KERNEL void first(int M, f32 Y[M])
{
	tile_threads(64);
}

TILE_KERNEL void second(int M, f32 Y[M])
{
	first(M, Y);
}
