/* run.c: not written yet */
#include "tilec_int.h"
