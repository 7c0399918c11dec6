/*
 * passes.h - the passes of src/passes/, in pipeline order.  Declared
 * apart from tilec_int.h so that no printer reaches them: the pipeline
 * table (pipeline.c) is their one caller.
 */
#ifndef TILEC_PASSES_H
#define TILEC_PASSES_H

#include "ir/tilec_int.h"

/* operands.c (every target, after check): each tile op's operand
 * expression that reads a buffer element becomes a local declared just
 * before the op, so it is evaluated once, before the op writes. */
bool tc_operands(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d);

/* cpu_frame.c: the bytes of each kernel's buffers in a block's frame
 * (kernel->frame_bytes); a kernel past the target's limit is a located
 * error at the buffer that brings it there. */
bool tc_cpu_frame(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d);
/* cpu_frame.c: bytes a buffer element of dtype t takes in the frame. */
int tc_cpu_elem_bytes(TcDtype t);
/* cpu_frame.c: the bytes of k's buffers that are stored (not
 * var->unstored), as a block's frame holds them (kernel->stack_bytes). */
long long tc_cpu_stored_bytes(const TcKernel *k);

/* cpu_prefetch.c (openmp): PREFETCH statements at the top of pipelined
 * loops, for the rows their next iteration copies in. */
bool tc_cpu_prefetch(TcArena *a, TcProgram *p, const TcOptions *opt,
		     TcDiags *d);

/* cpu_gemm.c (openmp): how each tile_gemm runs (stmt->u.gemm.cpu: the
 * helper, register block and panel depth from the target). */
bool tc_cpu_gemm(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d);

/* reg_operands.c (GPU targets, after layout): a gemm's A operand in
 * registers that a copy only rounded from an f32 fragment is read from
 * that fragment (gemm.round_a); the copy and the narrow fragment go. */
bool tc_reg_operands(TcArena *a, TcProgram *p, const TcOptions *opt,
		     TcDiags *d);

/* fuse_b.c (CUDA, after reg_operands): a gemm's B operand that an
 * element loop right before it writes is computed by the gemm as it loads
 * it (gemm.b_from); B is folded. */
bool tc_fuse_b(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d);

/* tma_store.c (GPU targets with TMA, after expand_pipeline): the stores
 * of wgmma fragments into tensor tiles that go by TMA through shared
 * memory (copy.lower TMA_STORE, copy.tmap, copy.staging). */
bool tc_tma_store(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d);
/* aligned.c (GPU targets, after tma_store): the alignment tests that
 * hold on every aligned launch (launch_aligned) and the tensors such a
 * launch needs aligned (kernel->aligned). */
bool tc_launch_aligned(TcArena *a, TcProgram *p, const TcOptions *opt,
		       TcDiags *d);
/* runs.c: element loops into shared rows in per-thread runs (GPU). */
bool tc_spread_runs(TcArena *a, TcProgram *p, const TcOptions *opt,
		    TcDiags *d);
/* half_pairs.c (CUDA, after runs): runs of i4 dequantized into f16 two
 * at a time in half precision where that is exact (loop.pairs). */
bool tc_half_pairs(TcArena *a, TcProgram *p, const TcOptions *opt,
		   TcDiags *d);

/* box_tests.c (CUDA, after runs): element loops over register
 * fragments whose index tests a test at the tile's corner decides, as
 * `if (corner tests) { decided copy } else { as written }`. */
bool tc_box_tests(TcArena *a, TcProgram *p, const TcOptions *opt,
		  TcDiags *d);

/* bounds.c (every target, after every pass that makes a tile operand):
 * on every region, which origins are proven non-negative
 * (region->bounded, region->nonneg). */
bool tc_bounds(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d);

/* cpu_fuse.c (openmp, after bounds): the row-wise runs of each kernel
 * (kernel->fusions) and the buffers none stores (var->unstored). */
bool tc_cpu_fuse(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d);
/* Whether s is a statement of one of k's fused runs (printed by the run,
 * not on its own). */
bool tc_cpu_fused(const TcKernel *k, const TcStmt *s);

/* cpu_edge.c (openmp, after fuse): each run's nests as its main element
 * loop runs them (TcFuseOp.main), its copies' partial dims and where the
 * main loop ends (TcFuseOp.ends_main, zero_past). */
bool tc_cpu_edge(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d);
/* cpu_edge.c: whether run F's main loop covers the valid columns of copy
 * op exactly (the whole row, or op's columns are where it ends). */
bool tc_cpu_edge_covers(const TcKernel *k, const TcFusion *F,
			const TcFuseOp *op);

/* cpu_vector.c (openmp with explicit lanes, after edge): which fused
 * nests have an explicit vector form (TcFuseOp.vector, TcFusion.lanes),
 * which runs' main loops use them (TcFusion.vec) and which copies out
 * they write (TcFuseOp.streamed). */
bool tc_cpu_vector(TcArena *a, TcProgram *p, const TcOptions *opt,
		   TcDiags *d);

/* cpu_transpose.c (openmp with explicit lanes, after vector): element
 * nests outside fused runs that move S[i][j] to D[j][i] between 32-bit
 * buffers over whole 8s (loop.transpose on the outer loop;
 * tc_transpose_form). */
bool tc_cpu_transpose(TcArena *a, TcProgram *p, const TcOptions *opt,
		      TcDiags *d);

/* cpu_stream.c (openmp, after fuse): copies of float-held buffers into
 * tensors the kernel touches only through such copies, rows along the
 * tensor's (copy.stream). */
bool tc_cpu_stream(TcArena *a, TcProgram *p, const TcOptions *opt,
		   TcDiags *d);

/* cpu_ahead.c (openmp, after vector): the run of each kernel that
 * prefetches the next block's rows, and which (TcFuseOp.next_block,
 * TcFusion.next). */
bool tc_cpu_ahead(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d);

/* cpu_strip.c (openmp): strips of consecutive blocks of a grid row
 * that one thread runs together (kernel->strip, stmt->each_block,
 * var->each_block). */
bool tc_cpu_strip(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d);

/* cpu_bind.c (openmp): whether the grid's threads go one per core, close
 * (kernel->bind_close). */
bool tc_cpu_bind(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d);

#endif
