// expect: 7:10: error: '++' inside an expression is not supported; write the update as its own statement
#include <tilec.h>

TILE_KERNEL void k(int M, f32 Y[M])
{
	int n = 0;
	int m = n++;
}
