/*
 * runs.c - element loops over a shared tile's rows in runs (GPU targets).
 *
 * Input: scheduled GPU IR (layout has mapped tile_parallel loops to
 * threads, smem has padded and placed the shared buffers, expand_pipeline
 * has put every statement where it runs).  Output: loop.run on the
 * innermost loop of a spread nest (layout.c, "Threads") where each thread
 * may compute `run` consecutive iterations of it and store them into the
 * tile's row as one vector: a dequantization, a conversion or any other
 * element loop `T[..][j] = f(j)` into shared memory.  One element per
 * thread per step stores 1-4 bytes at a time and pays each element's
 * index arithmetic and loop step; a run stores 4-16 bytes at once and
 * shares the rest (a 2.0x faster dequantizing W4A16 gemm on the H200,
 * docs/perf-gpu.md).
 *
 * The loop takes runs when its body is one assignment to an element of a
 * shared buffer (not swizzled: rows of consecutive elements, 8 bits or
 * more each) whose last index is the loop's variable and whose other
 * indices do not name it, and the value reads that buffer only at that
 * element.  What the value reads along the run (a buffer or tensor whose
 * last index is the variable, or the variable plus what does not name
 * it) is read as one vector of the run's elements where the run can be
 * (tc_run_whole_loads: a shared tile whose row pitch the run divides, not
 * swizzled, read unconditionally), at most 16 bytes of it, so a
 * warp's vector reads of consecutive runs are conflict-free; anything
 * else is read element by element, at most 4 bytes of it a run, so a
 * warp's reads of one element still fall in distinct banks (consecutive
 * words).  One read that names the variable elsewhere (a column of a
 * tile) keeps the loop as it is.  The run is the longest power of two up
 * to 16 bytes of the destination within those limits that divides the
 * loop's extent and the tile's row pitch, and leaves every thread of the
 * block a run; it is at least 2 elements and 4 bytes, else none.
 */
#include "analysis/walk.h"
#include "passes/passes.h"

enum { MAX_ALONG = 16 };

typedef struct Runs {
	TcArena *a;
	const TcVar *j;     /* the loop's variable */
	const TcExpr *dst;  /* the assignment's destination (a LOAD) */
	/* What the value reads along the run, each buffer or tensor once. */
	const TcVar *along[MAX_ALONG];
	int nalong;
	const char *why;    /* what keeps the loop as it is, NULL: nothing */
} Runs;

/* Whether e is the variable v itself. */
static bool
is_var(const TcExpr *e, const TcVar *v)
{
	return e->kind == TC_EX_VAR && e->u.var == v;
}

/* Whether index e is the variable v, or v plus what does not name it
 * (a tensor's column `bn * 64 + j`): consecutive along v. */
static bool
at_var(const TcExpr *e, const TcVar *v)
{
	if (is_var(e, v))
		return true;
	if (e->kind != TC_EX_BINARY || e->u.bin.op != TC_OP_ADD)
		return false;
	const TcExpr *l = e->u.bin.lhs, *r = e->u.bin.rhs;
	return (is_var(l, v) && !tc_expr_mentions(r, v)) ||
	       (is_var(r, v) && !tc_expr_mentions(l, v));
}

static TcVisit
check_read(void *ctx, const TcExpr *e)
{
	Runs *r = ctx;
	if (e->kind != TC_EX_LOAD)
		return TC_VISIT_INTO;
	const TcVar *v = e->u.load.var;
	int n = v->rank;
	if (v == r->dst->u.load.var && !tc_expr_equal(e, r->dst)) {
		r->why = tc_fmt(r->a, "its value reads '%s' at another element "
				"than it writes", tc_var_shown(v));
		return TC_VISIT_STOP;
	}
	bool along = n > 0 && tc_expr_mentions(e->u.load.idx[n - 1], r->j);
	for (int d = 0; d + 1 < n; d++)
		if (tc_expr_mentions(e->u.load.idx[d], r->j))
			along = false;
	if (along && at_var(e->u.load.idx[n - 1], r->j)) {
		int i = 0;
		while (i < r->nalong && r->along[i] != v)
			i++;
		if (i == MAX_ALONG) {
			r->why = tc_fmt(r->a, "its value reads more than %d "
					"buffers along the row",
					MAX_ALONG);
			return TC_VISIT_STOP;
		}
		if (i == r->nalong)
			r->along[r->nalong++] = v;
		return TC_VISIT_INTO;
	}
	for (int d = 0; d < n; d++) {
		if (tc_expr_mentions(e->u.load.idx[d], r->j)) {
			r->why = tc_fmt(r->a, "its value reads '%s' other than "
					"along its row at '%s'", tc_var_shown(v),
					r->j->name);
			return TC_VISIT_STOP;
		}
	}
	return TC_VISIT_INTO;
}

/* What the value reads along the run that a run of `run` would read
 * too much of at once: more than 16 bytes of a vector read, more than 4
 * of one read element by element; NULL for nothing. */
static const TcVar *
too_wide(const Runs *r, const TcExpr *value, int run)
{
	const TcExpr *whole[MAX_ALONG];
	int nwhole = tc_run_whole_loads(r->dst, value, r->j, run, whole,
					 MAX_ALONG);
	for (int i = 0; i < r->nalong; i++) {
		const TcVar *v = r->along[i];
		int limit = 32;
		for (int w = 0; w < nwhole; w++)
			if (whole[w]->u.load.var == v)
				limit = 128;
		if (run * tc_dtype_storage_bits(v->dtype) > limit)
			return v;
	}
	return NULL;
}

/* Whether a statement of body assigns an element of a shared tile. */
static bool
assigns_smem(const TcVec *body)
{
	for (int i = 0; i < body->len; i++) {
		const TcStmt *st = body->items[i];
		if (st->kind == TC_ST_ASSIGN && st->u.assign.dst->kind == TC_EX_LOAD &&
		    tc_in_smem(st->u.assign.dst->u.load.var))
			return true;
	}
	return false;
}

/* The run of loop s, the innermost of a spread nest of `total`
 * iterations (its own included) over `threads` threads; 0 for none.  A
 * loop that assigns a shared tile's elements and takes no run gets why
 * in *why (a clause), for --explain (explain.c). */
static int
choose_run(TcArena *a, const TcStmt *s, long long total, long long threads,
	   const char **why)
{
	const TcVec *body = &s->u.loop.body->u.block.body;
	long long extent;
	long long begin, step;
	if (s->u.loop.row_vec)
		return 0;
	if (body->len != 1) {
		if (assigns_smem(body))
			*why = "its body is more than one assignment";
		return 0;
	}
	const TcStmt *as = body->items[0];
	if (as->kind == TC_ST_IF) {
		const TcVec *then = &as->u.cond.then->u.block.body;
		if (assigns_smem(then) || (as->u.cond.els &&
					   assigns_smem(&as->u.cond.els->u.block.body)))
			*why = "its assignment is under an if (a run-time "
			       "extent is one)";
		return 0;
	}
	if (as->kind != TC_ST_ASSIGN || as->u.assign.dst->kind != TC_EX_LOAD ||
	    !tc_in_smem(as->u.assign.dst->u.load.var))
		return 0;
	const TcExpr *dst = as->u.assign.dst;
	const TcVar *t = dst->u.load.var;
	const TcVar *j = s->u.loop.var;
	int n = t->rank, bits = tc_dtype_storage_bits(t->dtype);
	if (!tc_expr_const(s->u.loop.begin, &begin) || begin != 0 ||
	    !tc_expr_const(s->u.loop.step, &step) || step != 1 ||
	    !tc_expr_const(s->u.loop.end, &extent)) {
		*why = "its iterations are not a constant count from 0";
		return 0;
	}
	if (t->swizzle || t->panels) {
		*why = tc_fmt(a, "'%s' is swizzled", tc_var_shown(t));
		return 0;
	}
	if (bits < 8) {
		*why = tc_fmt(a, "'%s' packs elements narrower than a byte",
			      tc_var_shown(t));
		return 0;
	}
	bool along = n > 0 && is_var(dst->u.load.idx[n - 1], j);
	for (int d = 0; d + 1 < n; d++)
		if (tc_expr_mentions(dst->u.load.idx[d], j))
			along = false;
	if (!along) {
		*why = tc_fmt(a, "it writes '%s' other than along its row at "
			      "'%s'", tc_var_shown(t), j->name);
		return 0;
	}
	Runs r = { .a = a, .j = j, .dst = dst };
	TcVisitor vis = { .expr = check_read, .ctx = &r };
	tc_expr_visit(as->u.assign.value, &vis);
	if (r.why) {
		*why = r.why;
		return 0;
	}
	int run = 128 / bits;
	long long pitch = tc_var_extent(t, n - 1) + t->pad;
	while (run >= 2 && (extent % run || pitch % run || total / run < threads ||
			    too_wide(&r, as->u.assign.value, run)))
		run /= 2;
	if (run >= 2 && run * bits >= 32)
		return run;
	/* Blame the reads where the shortest run (4 bytes) fits the loop
	 * and the row but would read too much of one of them. */
	int shortest = bits >= 16 ? 2 : 32 / bits;
	const TcVar *wide = NULL;
	if (!(extent % shortest || pitch % shortest || total / shortest < threads))
		wide = too_wide(&r, as->u.assign.value, shortest);
	if (wide)
		*why = tc_fmt(a, "its value reads '%s' along the row %s, "
			      "element by element: the shortest run, %d "
			      "elements, would read %d bytes of it, and a run "
			      "reads at most 4 bytes of such reads",
			      tc_var_shown(wide),
			      tc_run_reads_whole(wide, 2)
				      ? "only where a condition holds"
				      : "other than from a shared tile's "
					"unswizzled rows",
			      shortest,
			      shortest * tc_dtype_storage_bits(wide->dtype) / 8);
	else if (extent * bits < 64)
		*why = tc_fmt(a, "its row of '%s' is %lld bytes, no two runs of "
			      "4", tc_var_shown(t), extent * bits / 8);
	else
		*why = tc_fmt(a, "no run of 4 bytes or more of '%s' divides its "
			      "%lld iterations and the row's %lld elements and "
			      "leaves each of the %lld threads one", tc_var_shown(t),
			      extent, pitch, threads);
	return 0;
}

typedef struct Walk {
	TcArena *a;
	long long threads;
} Walk;

static void
visit(void *ctx, TcStmt *s, int par_depth)
{
	Walk *w = ctx;
	(void)par_depth;
	if (s->kind != TC_ST_FOR || s->u.loop.threads != TC_THREADS_SPREAD)
		return;
	/* The nest's innermost loop, the iterations of the whole nest.
	 * Inner spread loops are visited too: only a nest's outermost
	 * (the walk meets it first) sets anything, and its inner loops'
	 * runs are 0 unless set here. */
	long long total = 1, e;
	TcStmt *cur = s;
	for (;;) {
		if (cur->u.loop.run)
			return; /* an inner loop of a nest already seen */
		if (!tc_expr_const(cur->u.loop.end, &e))
			return;
		total *= e;
		const TcVec *body = &cur->u.loop.body->u.block.body;
		TcStmt *inner = body->len == 1 ? body->items[0] : NULL;
		if (!inner || inner->kind != TC_ST_FOR ||
		    inner->u.loop.threads != TC_THREADS_SPREAD)
			break;
		cur = inner;
	}
	cur->u.loop.run = choose_run(w->a, cur, total, w->threads,
				     &cur->u.loop.run_why);
	/* Mark the nest's inner loops seen (run -1 for none). */
	if (!cur->u.loop.run)
		cur->u.loop.run = -1;
}

/* Clear the marks of loops that took no run. */
static void
unmark(void *ctx, TcStmt *s, int par_depth)
{
	(void)ctx;
	(void)par_depth;
	if (s->kind == TC_ST_FOR && s->u.loop.run < 0)
		s->u.loop.run = 0;
}

bool
tc_spread_runs(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d)
{
	(void)d;
	for (int i = 0; i < p->kernels.len; i++) {
		TcKernel *k = p->kernels.items[i];
		Walk w = { .a = a, .threads = tc_abi_threads(k, &opt->target) };
		tc_walk_stmts(k->body, 0, visit, &w);
		tc_walk_stmts(k->body, 0, unmark, NULL);
	}
	return true;
}
