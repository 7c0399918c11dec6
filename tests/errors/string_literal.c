// expect: 6:2: error: this statement is not part of the tile language (a statement is a declaration, assignment, loop, if, or tile operation)
#include <tilec.h>

TILE_KERNEL void k(int M, f32 Y[M])
{
	"hello";
}
