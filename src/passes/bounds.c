/*
 * bounds.c - which region origins are proven non-negative.
 *
 * Input: the scheduled program, after every pass that makes or moves a
 * tile operand (only the CPU's fuse and edge, which make none, follow
 * it).  Output: on every region of every statement, `bounded` and the
 * `nonneg` bits (bit d: origin[d] >= 0 holds for every launch,
 * analysis/range.c).  A tile op touches only the tensor
 * elements inside the tensor; the lower test (0 <= index) is needed only
 * along the dims without the bit, which the forms of most origins rule
 * out (block indices times tile sizes).  Every backend reads the bits
 * instead of deciding again.
 */
#include "analysis/range.h"
#include "analysis/walk.h"
#include "passes/passes.h"

static void
mark(const TcRanges *rg, TcRegion *r)
{
	r->bounded = true;
	r->nonneg = tc_range_origin_nonneg(rg, r);
}

/* Mark the regions of a tile op. */
static void
mark_regions(void *ctx, TcStmt *s, int par_depth)
{
	const TcRanges *rg = ctx;
	(void)par_depth;
	switch (s->kind) {
	case TC_ST_COPY:
	case TC_ST_ASYNC_COPY:
	case TC_ST_ATOMIC_ADD:
	case TC_ST_PREFETCH:
		mark(rg, &s->u.copy.dst);
		mark(rg, &s->u.copy.src);
		break;
	case TC_ST_GEMM:
		mark(rg, &s->u.gemm.c);
		mark(rg, &s->u.gemm.a);
		mark(rg, &s->u.gemm.b);
		break;
	case TC_ST_FILL:
		mark(rg, &s->u.fill.dst);
		break;
	case TC_ST_REDUCE:
		mark(rg, &s->u.reduce.dst);
		mark(rg, &s->u.reduce.src);
		break;
	case TC_ST_REDUCE_ALL:
		mark(rg, &s->u.reduce_all.src);
		break;
	case TC_ST_ARG_REDUCE:
		mark(rg, &s->u.arg_reduce.dst);
		mark(rg, &s->u.arg_reduce.index);
		mark(rg, &s->u.arg_reduce.src);
		break;
	default:
		break;
	}
}

bool
tc_bounds(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d)
{
	(void)opt;
	(void)d;
	for (int i = 0; i < p->kernels.len; i++) {
		TcKernel *k = p->kernels.items[i];
		TcRanges rg;
		tc_ranges_init(&rg, a, k);
		tc_walk_stmts(k->body, 0, mark_regions, &rg);
	}
	return true;
}
