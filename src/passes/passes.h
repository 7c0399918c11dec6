/*
 * passes.h - the passes of src/passes/, in pipeline order.  Declared
 * apart from tilec_int.h so that no printer reaches them: the pipeline
 * table (pipeline.c) is their one caller.
 */
#ifndef TILEC_PASSES_H
#define TILEC_PASSES_H

#include "ir/tilec_int.h"

/* cpu_frame.c: the bytes of each kernel's buffers in a block's frame
 * (kernel->frame_bytes); a kernel past the target's limit is a located
 * error at the buffer that brings it there. */
bool tc_cpu_frame(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d);

/* cpu_gemm.c (openmp): how each tile_gemm runs (stmt->u.gemm.cpu: the
 * helper, register block and panel depth from the target). */
bool tc_cpu_gemm(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d);

/* bounds.c (every target, last): on every region, which origins are
 * proven non-negative (region->bounded, region->nonneg). */
bool tc_bounds(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d);

/* cpu_fuse.c (openmp, after bounds): the row-wise runs of each kernel
 * (kernel->fusions) and the buffers none stores (var->unstored). */
bool tc_cpu_fuse(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d);

#endif
