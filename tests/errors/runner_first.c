// expect: 9:2: error: use of undeclared identifier 'first'
// Tests the error runner: only the first of several errors is compared.
#include <tilec.h>

TILE_KERNEL void
two_errors(int M, f32 Y[M])
{
	int b = tile_grid_x(M);
	first = b;
	second = b;
}
