/*
 * walk.h - the statement walk the passes and printers share
 * (analysis/walk.c), and the scope fact it gives most of them.
 *
 * tc_walk_stmts visits every statement of a tree in program order, each
 * before the statements it holds, with the number of tile_parallel loops
 * around it; a visitor that needs a statement's expressions walks them
 * itself (tc_expr_visit).  Depends on the IR only.
 */
#ifndef TILEC_ANALYSIS_WALK_H
#define TILEC_ANALYSIS_WALK_H

#include "ir/tilec_int.h"

/* Called on statement s inside `par_depth` PARALLEL loops (s itself not
 * counted when it is one). */
typedef void (*TcStmtFn)(void *ctx, TcStmt *s, int par_depth);

/* Call fn(ctx, ...) on s and every statement inside it: the statements of
 * a BLOCK, a FOR's body, an IF's branches, a PIPE_SELECT's two blocks and
 * a GEMM's issue block.  par_depth is s's own depth (0 for a kernel's
 * body). */
void tc_walk_stmts(TcStmt *s, int par_depth, TcStmtFn fn, void *ctx);

/* visible[v] (by var index, k->vars.len + 1 entries) is false for the
 * vars declared inside a tile_parallel loop and those loops' vars (and
 * any loop's inside one): what is out of scope at block level, where
 * tile ops run.  Every other entry is true. */
void tc_walk_block_visible(const TcKernel *k, bool *visible);

#endif
