/*
 * range.h - what the form of an index expression proves about its sign,
 * shared by every pass and printer that needs it (analysis/range.c).
 *
 * A TcRanges is built once per kernel from its body: the loop that binds
 * each loop variable and the initializer of each local that is never
 * assigned again.  The questions are then answered from the form of an
 * expression alone; nothing is evaluated.  Depends on the IR only.
 */
#ifndef TILEC_ANALYSIS_RANGE_H
#define TILEC_ANALYSIS_RANGE_H

#include "ir/tilec_int.h"

/* What the range analysis knows of one kernel's vars. */
typedef struct TcRanges {
	const TcKernel *k;     /* the kernel */
	const TcStmt **loop;   /* by var index, LOOP: the FOR binding it */
	const TcExpr **init;   /* by var index, LOCAL never reassigned: its
				  initializer (NULL if it has none) */
	bool *extent;          /* by var index, SCALAR: a tensor's extent
				  (a launch checks it >= 0) */
} TcRanges;

/* Build r for kernel k (the tables allocated from a). */
void tc_ranges_init(TcRanges *r, TcArena *a, const TcKernel *k);

/* Whether e >= 0 follows from its form: literals, tunables, block
 * indices, tensor extents, loop indices counting up by non-negative
 * steps from non-negative starts, locals initialized to such a value and
 * never assigned, a loop's end less its index (and less 1), and sums,
 * products, quotients, remainders, right shifts, ceildiv, min, max,
 * selects and value-keeping casts of those. */
bool tc_range_nonneg(const TcRanges *r, const TcExpr *e);

/* The dims of region g whose origin is proven >= 0 (tc_range_nonneg),
 * as bits: bit d for origin[d], none for a dim without an origin.  What
 * the bounds pass records in g->nonneg, and what decides whether a row's
 * start needs the lower test (0 <= index) at all. */
unsigned tc_range_origin_nonneg(const TcRanges *r, const TcRegion *g);

/* Whether e keeps its value while the loops of the body run: literals,
 * tunables, scalars, block and loop indices, locals never reassigned,
 * and arithmetic, casts, selects and calls over those; no element
 * loads. */
bool tc_range_invariant(const TcRanges *r, const TcExpr *e);

#endif
