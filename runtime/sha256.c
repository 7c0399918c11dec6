/* sha256.c: not written yet */
#include "tilec_int.h"
