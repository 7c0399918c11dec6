// expect: 1:1: error: no TILE_KERNEL function in this program
#include <tilec.h>

TILE_PARAM(BLOCK, 64);
