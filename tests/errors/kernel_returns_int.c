// expect: 4:17: error: kernel 'k' must return void
#include <tilec.h>

TILE_KERNEL int k(int M, f32 Y[M])
{
	return M;
}
