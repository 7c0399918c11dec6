/*
 * decide.h - a block of statements with some of its tests decided, and
 * what they decide folded (analysis/decide.c).
 *
 * Two passes version element loops: the openmp edge pass (cpu_edge.c)
 * for the columns a fused run's main loop knows to lie inside the
 * tensors, the GPU box_tests pass (box_tests.c) for the tiles a test at
 * their corner decides.  Both give a comparison's truth through `decide`;
 * this file rewrites the body: a decided comparison becomes its truth
 * value, selects keep their one arm, `!`, `&&` and `||` fold, an if
 * becomes its branch, `x = x` goes.  With `locals`, a local that never
 * changes and whose initializer folds to a constant is replaced by it,
 * and the locals nothing names any more are dropped.  Depends on the IR
 * only.
 */
#ifndef TILEC_ANALYSIS_DECIDE_H
#define TILEC_ANALYSIS_DECIDE_H

#include "ir/tilec_int.h"

/* The truth of comparison e (a BINARY <, <=, >, >=, == or !=): 1 or 0,
 * or -1 when it is not decided. */
typedef int (*TcDecideFn)(void *ctx, const TcExpr *e);

typedef struct TcDecider {
	TcArena *a;
	TcDecideFn decide;
	void *ctx;
	/* Fold locals: those never assigned whose initializer folds to
	 * an integer constant are replaced by it, and the ones nothing
	 * names after that dropped (their initializers read no memory
	 * that changes). */
	bool locals;
	/* Fold constant tests too: a condition, a select's or an if's,
	 * or an operand of !, && or || that is a constant expression
	 * (tunables included) decides them as a literal would. */
	bool constants;
	bool changed; /* set when the output differs from the input */
	/* With locals: constants known, by var index (NULL: none), and
	 * the kernel's var count; set up by tc_decide_block. */
	TcExpr **known;
	int nvars;
	const bool *fixed; /* by var index: a local never assigned */
} TcDecider;

/* A copy of e with its decided comparisons folded. */
TcExpr *tc_decide_expr(TcDecider *D, const TcExpr *e);

/* Append to `out` (a BLOCK) the statements of block s, decided and
 * folded: an if whose test is decided becomes the statements of its
 * branch; loops are copied with their bodies decided. */
void tc_decide_block(TcDecider *D, const TcStmt *s, TcStmt *out);

/* With D->locals: set D's tables for kernel k (fixed: the locals of k
 * never assigned after their declaration). */
void tc_decide_locals(TcDecider *D, const TcKernel *k);

/* With D->locals: drop from block s (and the blocks inside it) the
 * declarations of locals nothing in s names; true if any went. */
bool tc_decide_drop_unused(TcDecider *D, TcStmt *s);

#endif
