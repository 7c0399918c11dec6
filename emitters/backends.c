/*
 * backends.c - the table of backends compiled into tilec.
 *
 * One entry per TcTargetKind.  A backend is a const struct of function
 * pointers (tilec_int.h); src/ never includes an emitter, it asks this
 * table.  A NULL entry is a backend that is not built yet: the caller
 * reports "not built yet" for it.
 */
#include "ir/tilec_int.h"

/* openmp.c, cuda.c, hip.c */
extern const TcBackend tc_backend_openmp;
extern const TcBackend tc_backend_cuda;
extern const TcBackend tc_backend_hip;

static const TcBackend *const backends[TC_TARGET_COUNT] = {
	[TC_TARGET_OPENMP] = &tc_backend_openmp,
	[TC_TARGET_CUDA] = &tc_backend_cuda,
	[TC_TARGET_HIP] = &tc_backend_hip,
};

const TcBackend *
tc_backend_find(TcTargetKind kind)
{
	if (kind < 0 || kind >= TC_TARGET_COUNT)
		return NULL;
	return backends[kind];
}
