/*
 * software_pipeline.c - turn tile_pipelined loops into multi-stage copy
 * pipelines on targets with asynchronous copies (TcTarget.cp_async).
 *
 * Input: laid-out IR.  Output: for each tile_pipelined(k, n, S) loop whose
 * body starts with copies from tensors, loop.async_copies counts those
 * leading copies.  A shared destination gets S stages (var->stages): the
 * expanded loop issues the copies of iteration k + S - 1 while iteration k
 * computes (cp.async on sm_80 and later), with one wait and one barrier per
 * iteration.  A register destination is prefetched one iteration ahead into
 * a second copy of the fragment, so its loads are in flight while the
 * iteration before computes; that needs no asynchronous copies, so it is
 * done on every GPU target (HIP's too), shared destinations only where
 * TcTarget.cp_async.
 *
 * A copy joins the pipeline only when that cannot change what the program
 * computes: its destination is a whole shared buffer used nowhere outside
 * the loop, element types match (the copy moves bytes), and its origin
 * reads only the loop variable, values the loop does not change and
 * elements of read-only tensors (a page table's entry).
 *
 * Copies issued inside the gemm: when the body's one matrix-instruction
 * gemm (both operands in shared memory) reads every buffer the async
 * copies fill, and each copy is a whole-tile vector copy whose source
 * origin moves by a loop-invariant step per iteration, loop.copies_in_gemm
 * names that gemm (on targets with mbarriers, TcTarget.mbarrier, which
 * those copies complete on) and each copy gets its origin at the first
 * iteration and its step in elements (copy.first, copy.advance).
 * expand_pipeline.c then sets the copies up once (COPY_PLAN) and issues
 * the next stage's from inside the gemm (gemm.issue), after its first
 * instructions, where ptxas overlaps them with the tensor cores' work.
 *
 * With --copy-plans, any other loop's async copies into shared memory of
 * that shape get copy.first and copy.advance too (plan_plain_copies):
 * expand_pipeline.c sets them up once and issues them through the plan
 * wherever the tiles are whole 16-byte vectors.
 *
 * This pass only plans; expand_pipeline.c carries the plan out as IR.
 */
#include "ir/tilec_int.h"

#include <string.h>

/* May this origin expression be evaluated stages - 1 iterations early?
 * Constants, the loop variable, values the loop does not change and
 * elements of read-only tensors at such indices. */
static bool
hoistable(const TcExpr *e, const TcVar *loopvar)
{
	switch (e->kind) {
	case TC_EX_INT:
	case TC_EX_FLOAT:
		return true;
	case TC_EX_VAR: {
		const TcVar *v = e->u.var;
		return v == loopvar || v->kind == TC_VAR_SCALAR ||
		       v->kind == TC_VAR_TUNABLE || v->kind == TC_VAR_BLOCK ||
		       (v->kind == TC_VAR_LOCAL && !v->mutated);
	}
	case TC_EX_BINARY:
		return hoistable(e->u.bin.lhs, loopvar) &&
		       hoistable(e->u.bin.rhs, loopvar);
	case TC_EX_UNARY: return hoistable(e->u.un.arg, loopvar);
	case TC_EX_SELECT:
		return hoistable(e->u.sel.cond, loopvar) &&
		       hoistable(e->u.sel.then, loopvar) &&
		       hoistable(e->u.sel.els, loopvar);
	case TC_EX_CALL:
		for (int i = 0; i < e->u.call.nargs; i++)
			if (!hoistable(e->u.call.args[i], loopvar))
				return false;
		return true;
	case TC_EX_CAST: return hoistable(e->u.cast.arg, loopvar);
	case TC_EX_LOAD:
		/* An element of a read-only tensor (a page table): read early,
		 * it is the value the iteration reads, and the prefetch of
		 * iteration k + 1 runs only where iteration k + 1 does. */
		if (e->u.load.var->kind != TC_VAR_TENSOR || !e->u.load.var->is_const)
			return false;
		for (int i = 0; i < e->u.load.var->rank; i++)
			if (!hoistable(e->u.load.idx[i], loopvar))
				return false;
		return true;
	default: return false;
	}
}

/* e with var replaced by `by` (a copy; e itself is left alone). */
static TcExpr *
subst(TcArena *a, const TcExpr *e, const TcVar *var, const TcExpr *by)
{
	if (!e)
		return NULL;
	if (e->kind == TC_EX_VAR && e->u.var == var)
		return tc_expr_clone(a, by);
	TcExpr *c = tc_expr_new(a, e->kind, e->dtype, e->loc);
	c->u = e->u;
	switch (e->kind) {
	case TC_EX_BINARY:
		c->u.bin.lhs = subst(a, e->u.bin.lhs, var, by);
		c->u.bin.rhs = subst(a, e->u.bin.rhs, var, by);
		break;
	case TC_EX_UNARY: c->u.un.arg = subst(a, e->u.un.arg, var, by); break;
	case TC_EX_SELECT:
		c->u.sel.cond = subst(a, e->u.sel.cond, var, by);
		c->u.sel.then = subst(a, e->u.sel.then, var, by);
		c->u.sel.els = subst(a, e->u.sel.els, var, by);
		break;
	case TC_EX_CALL:
		c->u.call.args = tc_alloc(a, sizeof(TcExpr *) *
					     (size_t)(e->u.call.nargs ? e->u.call.nargs : 1));
		for (int i = 0; i < e->u.call.nargs; i++)
			c->u.call.args[i] = subst(a, e->u.call.args[i], var, by);
		break;
	case TC_EX_CAST: c->u.cast.arg = subst(a, e->u.cast.arg, var, by); break;
	case TC_EX_LOAD:
		for (int i = 0; i < e->u.load.var->rank; i++)
			c->u.load.idx[i] = subst(a, e->u.load.idx[i], var, by);
		break;
	default:
		break;
	}
	return c;
}

/* A declaration of a local the loop never assigns, whose value may be
 * computed early (int r = t / (S * cb);). */
static bool
early_decl(const TcStmt *s, const TcVar *loopvar)
{
	return s->kind == TC_ST_DECL && s->u.decl.var->kind == TC_VAR_LOCAL &&
	       !s->u.decl.var->mutated && s->u.decl.init &&
	       hoistable(s->u.decl.init, loopvar);
}

/* What in origin expression e may not be evaluated early (hoistable),
 * as a clause: "reads 'n0', which the loop may change". */
static const char *
hoist_blocker(TcArena *a, const TcExpr *e, const TcVar *loopvar)
{
	if (hoistable(e, loopvar))
		return NULL;
	switch (e->kind) {
	case TC_EX_VAR:
		return tc_fmt(a, "reads '%s', which the loop may change",
			      e->u.var->name);
	case TC_EX_BINARY: {
		const char *w = hoist_blocker(a, e->u.bin.lhs, loopvar);
		return w ? w : hoist_blocker(a, e->u.bin.rhs, loopvar);
	}
	case TC_EX_UNARY: return hoist_blocker(a, e->u.un.arg, loopvar);
	case TC_EX_CAST: return hoist_blocker(a, e->u.cast.arg, loopvar);
	case TC_EX_SELECT: {
		const char *w = hoist_blocker(a, e->u.sel.cond, loopvar);
		if (!w)
			w = hoist_blocker(a, e->u.sel.then, loopvar);
		return w ? w : hoist_blocker(a, e->u.sel.els, loopvar);
	}
	case TC_EX_CALL:
		for (int i = 0; i < e->u.call.nargs; i++) {
			const char *w = hoist_blocker(a, e->u.call.args[i], loopvar);
			if (w)
				return w;
		}
		break;
	case TC_EX_LOAD: {
		const TcVar *v = e->u.load.var;
		if (v->kind != TC_VAR_TENSOR || !v->is_const)
			return tc_fmt(a, "reads an element of '%s', which is not "
				      "a read-only tensor", v->name);
		for (int i = 0; i < v->rank; i++) {
			const char *w = hoist_blocker(a, e->u.load.idx[i], loopvar);
			if (w)
				return w;
		}
		break;
	}
	default:
		break;
	}
	return "cannot be evaluated before its iteration";
}

static bool
in_registers(const TcVar *v)
{
	return v->kind == TC_VAR_BUFFER && (v->layout.kind == TC_LAYOUT_MMA ||
					    v->layout.kind == TC_LAYOUT_WGMMA ||
					    v->layout.kind == TC_LAYOUT_BLOCKED);
}

/* A leading copy joins the pipeline when issuing it early cannot change
 * what the loop computes.  Into shared memory (async, multi-buffered): a
 * whole buffer used nowhere outside the loop, one element type.  Into a
 * register fragment (prefetched into a second copy of it): any whole
 * fragment, since the prefetch lands in a copy of its own. */
/* On a target without asynchronous copies, copies into shared memory
 * run in order: the target's choice, said of no program. */
static const char in_order[] = "the target copies into shared memory in order";

/* Why copy s (a COPY) of pipelined loop `loop` may not be issued early,
 * as a clause, or NULL when it may. */
static const char *
pipeline_why(TcArena *a, const TcKernel *k, const TcTarget *t,
	     const TcStmt *loop, const TcStmt *s)
{
	const TcRegion *dst = &s->u.copy.dst, *src = &s->u.copy.src;
	if (src->var->kind != TC_VAR_TENSOR)
		return "it does not read a tensor";
	if (!dst->whole)
		return "it fills a region of a buffer, not a whole buffer";
	/* i4 into a packed i4 tile moves whole bytes (copy_g2s_i4); into
	 * registers it would need a prefetch that unpacks. */
	bool packed = src->var->dtype == TC_DT_I4 &&
		      dst->var->dtype == TC_DT_I4 && !in_registers(dst->var);
	if ((tc_dtype_bits(dst->var->dtype) < 8 ||
	     tc_dtype_bits(src->var->dtype) < 8) && !packed)
		return "its elements are narrower than a byte";
	for (int i = 0; i < src->var->rank; i++)
		if (!hoistable(src->origin[i], loop->u.loop.var))
			return tc_fmt(a, "its origin %s", hoist_blocker(a,
					  src->origin[i], loop->u.loop.var));
	/* Reading the source early must not overtake a write to it. */
	if (tc_stmt_touches(loop->u.loop.body, NULL, src->var) & TC_ROLE_WRITE)
		return tc_fmt(a, "the loop writes '%s'", src->var->name);
	if (in_registers(dst->var))
		return NULL;
	/* Without asynchronous copies the loop copies into shared memory
	 * in order (a prefetch into registers is plain loads). */
	if (!t->cp_async || dst->var->scope != TC_SCOPE_SHARED)
		return in_order;
	if (src->var->dtype != dst->var->dtype)
		return tc_fmt(a, "it converts %s to %s (the asynchronous "
				  "copies move bytes)", tc_dtype_name(src->var->dtype),
				  tc_dtype_name(dst->var->dtype));
	if (tc_stmt_touches(k->body, loop, dst->var))
		return tc_fmt(a, "'%s' is used outside the loop",
				  dst->var->name);
	return NULL;
}

/* A pipelined loop's body may open with declarations its copies' origins
 * read (int r = t / (S * cb); ...; tile_copy(Xs, &X[..r..])).  When every
 * one may be computed early (early_decl) and every copy that follows them
 * could then be issued early, those copies move to the front with the
 * locals replaced by their values; a declaration stays where the rest of
 * the body still reads it.  The order changes nothing: the declarations
 * read no buffer (hoistable), the copies no longer read the locals. */
static void
copies_first(TcArena *a, const TcKernel *k, const TcTarget *t, TcStmt *loop)
{
	TcVec *body = &loop->u.loop.body->u.block.body;
	const TcVar *kv = loop->u.loop.var;
	int decls = 0, end;
	while (decls < body->len && early_decl(body->items[decls], kv))
		decls++;
	for (end = decls; end < body->len; end++)
		if (((TcStmt *)body->items[end])->kind != TC_ST_COPY)
			break;
	if (decls == 0 || end == decls)
		return;
	TcStmt *moved = tc_alloc(a, sizeof(TcStmt) * (size_t)(end - decls));
	for (int c = decls; c < end; c++) {
		TcStmt *m = &moved[c - decls];
		*m = *(TcStmt *)body->items[c];
		TcRegion *src = &m->u.copy.src;
		/* Latest first: a value may read an earlier local. */
		for (int d = decls - 1; d >= 0; d--) {
			const TcStmt *decl = body->items[d];
			for (int i = 0; i < src->var->rank; i++)
				src->origin[i] = subst(a, src->origin[i],
						       decl->u.decl.var,
						       decl->u.decl.init);
		}
		if (pipeline_why(a, k, t, loop, m))
			return;
	}
	void **items = tc_alloc(a, sizeof(void *) * (size_t)end);
	int n = 0;
	for (int c = decls; c < end; c++) {
		TcStmt *copy = body->items[c];
		*copy = moved[c - decls];
		items[n++] = copy;
	}
	for (int d = 0; d < decls; d++) {
		TcStmt *decl = body->items[d];
		bool used = false;
		for (int i = d + 1; i < body->len && !used; i++)
			used = tc_stmt_mentions(body->items[i], decl->u.decl.var);
		if (used)
			items[n++] = decl;
	}
	memcpy(body->items, items, sizeof(void *) * (size_t)n);
	memmove(&body->items[n], &body->items[end],
		sizeof(void *) * (size_t)(body->len - end));
	body->len -= end - n;
}

/* Record on pipelined loop s why the first copy from a tensor after its
 * n leading async copies is not one of them (loop.pipe_why). */
static void
explain_loop(TcArena *a, const TcKernel *k, const TcTarget *t, TcStmt *s,
	     int n)
{
	const TcVec *body = &s->u.loop.body->u.block.body;
	for (int i = n; i < body->len; i++) {
		const TcStmt *c = body->items[i];
		if (c->kind != TC_ST_COPY ||
		    c->u.copy.src.var->kind != TC_VAR_TENSOR)
			continue;
		const char *why = pipeline_why(a, k, t, s, c);
		if (why == in_order)
			why = NULL;
		else if (!why && i > n) {
			const TcStmt *before = body->items[n];
			why = tc_fmt(a, "only the copies that open the loop's body "
				     "are issued early, and the statement at "
				     "%d:%d comes before it", before->loc.line,
				     before->loc.col);
		}
		if (why) {
			s->u.loop.pipe_why = why;
			s->u.loop.pipe_why_loc = c->loc;
		}
		return;
	}
}

static bool
joins_pipeline(TcArena *a, const TcKernel *k, const TcTarget *t,
	       const TcStmt *loop, const TcStmt *s)
{
	return s->kind == TC_ST_COPY && !pipeline_why(a, k, t, loop, s);
}

/* --- Copies issued inside the gemm ------------------------------------------ */

static bool
is_int(const TcExpr *e, long long v)
{
	return e->kind == TC_EX_INT && e->u.ival == v;
}

/* l op r, folding the zeros and ones that affine() produces. */
static TcExpr *
fold(TcArena *a, TcBinop op, TcExpr *l, TcExpr *r)
{
	switch (op) {
	case TC_OP_ADD:
		if (is_int(l, 0))
			return r;
		if (is_int(r, 0))
			return l;
		break;
	case TC_OP_SUB:
		if (is_int(r, 0))
			return l;
		if (is_int(l, 0))
			return tc_expr_unary(a, TC_UOP_NEG, r, r->loc);
		break;
	case TC_OP_MUL:
		if (is_int(l, 0) || is_int(r, 0))
			return tc_expr_int(a, 0, l->loc);
		if (is_int(l, 1))
			return r;
		if (is_int(r, 1))
			return l;
		break;
	default:
		break;
	}
	return tc_expr_binary(a, op, l, r, l->loc);
}

/* e as base + k * step in the loop variable k, base and step not reading
 * it: false if e is not of that form.  A product by a constant divided by
 * one that divides it, (k0 + s) * BLOCK_K / GROUP with GROUP dividing
 * BLOCK_K, is the product by their quotient: the division is exact. */
static bool
affine(TcArena *a, TcExpr *e, const TcVar *k, TcExpr **base, TcExpr **step)
{
	long long c1, c2;
	if (e->kind == TC_EX_BINARY && e->u.bin.op == TC_OP_DIV &&
	    tc_expr_mentions(e, k) && e->u.bin.lhs->kind == TC_EX_BINARY &&
	    e->u.bin.lhs->u.bin.op == TC_OP_MUL &&
	    tc_expr_const(e->u.bin.lhs->u.bin.rhs, &c1) &&
	    tc_expr_const(e->u.bin.rhs, &c2) && c2 > 0 && c1 % c2 == 0)
		return affine(a, fold(a, TC_OP_MUL, e->u.bin.lhs->u.bin.lhs,
				      tc_expr_int(a, c1 / c2, e->loc)),
			      k, base, step);
	if (!tc_expr_mentions(e, k)) {
		*base = e;
		*step = tc_expr_int(a, 0, e->loc);
		return true;
	}
	if (e->kind == TC_EX_VAR) {
		*base = tc_expr_int(a, 0, e->loc);
		*step = tc_expr_int(a, 1, e->loc);
		return true;
	}
	if (e->kind != TC_EX_BINARY)
		return false;
	TcBinop op = e->u.bin.op;
	TcExpr *lb, *ls, *rb, *rs;
	if (!affine(a, e->u.bin.lhs, k, &lb, &ls) ||
	    !affine(a, e->u.bin.rhs, k, &rb, &rs))
		return false;
	if (op == TC_OP_ADD || op == TC_OP_SUB) {
		*base = fold(a, op, lb, rb);
		*step = fold(a, op, ls, rs);
		return true;
	}
	/* One factor does not read k: it is its own base. */
	if (op == TC_OP_MUL && (is_int(ls, 0) || is_int(rs, 0))) {
		TcExpr *c = is_int(ls, 0) ? lb : rb;
		*base = fold(a, op, lb, rb);
		*step = fold(a, op, is_int(ls, 0) ? rs : ls, c);
		return true;
	}
	return false;
}

/* The fast path of tilec::copy_g2s (and of tilec::G2S): the tile's rows
 * (one, for a one-dim tile) are whole 16-byte vectors and the block's
 * threads move them in equal rounds, each thread one column, or, where
 * `partial` (the ordinary loop's plans), in one round of fewer vectors
 * than threads. */
static bool
strided_shape(const TcVar *v, long long threads, bool partial)
{
	if (v->rank != 1 && v->rank != 2)
		return false;
	long long vec = 128 / tc_dtype_storage_bits(v->dtype);
	long long rows = v->rank == 2 ? tc_var_extent(v, 0) : 1;
	long long cols = tc_var_extent(v, v->rank - 1);
	if (rows <= 0 || cols <= 0 || cols % vec)
		return false;
	long long vrow = cols / vec;
	return ((rows * vrow) % threads == 0 || (partial && rows * vrow < threads)) &&
	       threads % vrow == 0;
}

/* The async copy c of pipelined loop `loop` as a strided tile copy: its
 * origin at the first iteration and its step per iteration, in elements
 * of the source (copy.first, copy.advance); false if it is not one. */
static bool
plan_strided(TcArena *a, const TcStmt *loop, TcStmt *c, long long threads,
	     bool partial)
{
	const TcVar *k = loop->u.loop.var, *t = c->u.copy.src.var;
	const TcVar *dst = c->u.copy.dst.var;
	if (!tc_copy_g2s_fits(c) || !strided_shape(dst, threads, partial) ||
	    !is_int(loop->u.loop.begin, 0) || !is_int(loop->u.loop.step, 1))
		return false;
	TcExpr *first[TC_MAX_RANK], *advance = tc_expr_int(a, 0, c->loc);
	for (int d = 0; d < t->rank; d++) {
		TcExpr *step;
		if (!affine(a, c->u.copy.src.origin[d], k, &first[d], &step))
			return false;
		/* The source's row-major stride along dim d. */
		for (int i = d + 1; i < t->rank; i++)
			step = fold(a, TC_OP_MUL, step, t->shape[i]);
		advance = fold(a, TC_OP_ADD, advance, step);
	}
	for (int d = 0; d < t->rank; d++)
		c->u.copy.first[d] = first[d];
	c->u.copy.advance = advance;
	return true;
}

/* Why async copy c of `loop` is not a strided tile copy (plan_strided
 * refused it), as a clause. */
static const char *
strided_why(TcArena *a, const TcStmt *c, long long threads, bool partial)
{
	const TcVar *dst = c->u.copy.dst.var;
	if (!strided_shape(dst, threads, partial))
		return tc_fmt(a, "the copy into '%s' at %d:%d is not whole "
			      "16-byte vectors spread evenly over the block's "
			      "%lld threads", dst->name, c->loc.line, c->loc.col,
			      threads);
	if (!tc_copy_g2s_fits(c))
		return tc_fmt(a, "the copy into '%s' at %d:%d converts its "
			      "elements or does not run along the tensor's last "
			      "dim", dst->name, c->loc.line, c->loc.col);
	return tc_fmt(a, "the origin of the copy into '%s' at %d:%d is not a "
		      "fixed start plus a fixed step per iteration of a loop "
		      "from 0 by 1", dst->name, c->loc.line, c->loc.col);
}

/* The one gemm of `loop`'s body that copies may be issued from: at the
 * body's top level (it runs once per iteration), the only gemm in the
 * loop, with a matrix-instruction accumulator and both operands in shared
 * memory; NULL if none. */
static TcStmt *
copies_gemm(const TcStmt *loop)
{
	const TcVec *body = &loop->u.loop.body->u.block.body;
	TcStmt *gemm = NULL;
	for (int i = loop->u.loop.async_copies; i < body->len; i++) {
		TcStmt *s = body->items[i];
		if (s->kind == TC_ST_GEMM && !gemm)
			gemm = s;
		else if (s->kind != TC_ST_DECL && s->kind != TC_ST_ASSIGN &&
			 s->kind != TC_ST_BARRIER && s->kind != TC_ST_COPY &&
			 s->kind != TC_ST_FILL && s->kind != TC_ST_REDUCE &&
			 s->kind != TC_ST_ATOMIC_ADD)
			return NULL; /* a nested statement may hold a gemm */
	}
	if (!gemm || (gemm->u.gemm.c.var->layout.kind != TC_LAYOUT_MMA &&
		      gemm->u.gemm.c.var->layout.kind != TC_LAYOUT_WGMMA) ||
	    in_registers(gemm->u.gemm.a.var) || in_registers(gemm->u.gemm.b.var) ||
	    gemm->u.gemm.b_from)
		return NULL;
	return gemm;
}

/* The first wgmma gemm of pipelined loop `loop` when the loop would get
 * TMA copies as the mbarrier loop (expand_pipeline.c, tma_loop: --tma,
 * or by default 3 or more stages); NULL when there is none, TMA is off
 * or the loop keeps too few stages for it. */
static const TcStmt *
tma_candidate(const TcStmt *loop, const TcOptions *opt)
{
	long long stages = 0;
	if (!opt->target.tma || opt->tma == TC_TMA_OFF ||
	    !tc_expr_const(loop->u.loop.stages, &stages) ||
	    (opt->tma == TC_TMA_AUTO && stages < 3))
		return NULL;
	const TcVec *body = &loop->u.loop.body->u.block.body;
	for (int i = loop->u.loop.async_copies; i < body->len; i++) {
		const TcStmt *s = body->items[i];
		if (s->kind == TC_ST_GEMM &&
		    s->u.gemm.c.var->layout.kind == TC_LAYOUT_WGMMA)
			return s;
	}
	return NULL;
}

/* The note for a loop whose copies could have gone by TMA from its gemm
 * g but do not (the mbarrier loop takes them only as planned here), with
 * the reason: a fast path not taken is said. */
static void
note_not_mbarrier(TcDiags *d, const TcStmt *loop, const TcStmt *g,
		  const char *why)
{
	tc_diag(d, TC_NOTE, g->loc, "the tile_pipelined loop at %d:%d keeps "
		"cp.async copies and block barriers, not copies issued from "
		"this gemm on stage barriers (nor TMA): %s", loop->loc.line,
		loop->loc.col, why);
}

/* Decide loop.copies_in_gemm for a pipelined loop with async copies. */
static void
plan_copies_in_gemm(TcArena *a, const TcKernel *k, const TcOptions *opt,
		    TcDiags *d, TcStmt *loop)
{
	const TcTarget *t = &opt->target;
	long long threads = tc_abi_threads(k, t);
	TcStmt *gemm = copies_gemm(loop);
	const TcStmt *cand = t->mbarrier ? tma_candidate(loop, opt) : NULL;
	if (!gemm || !t->mbarrier) { /* the copies complete on mbarriers */
		if (cand)
			note_not_mbarrier(d, loop, cand, "the loop's body "
					  "holds another gemm or a nested "
					  "statement after its copies (only "
					  "a loop with one gemm issues them "
					  "from it)");
		return;
	}
	const TcVec *body = &loop->u.loop.body->u.block.body;
	int n = loop->u.loop.async_copies, planned = 0;
	while (planned < n) {
		TcStmt *c = body->items[planned];
		const TcVar *dst = c->u.copy.dst.var;
		if (in_registers(dst) ||
		    (dst != gemm->u.gemm.a.var && dst != gemm->u.gemm.b.var) ||
		    !plan_strided(a, loop, c, threads, false))
			break;
		planned++;
	}
	if (planned == n) {
		loop->u.loop.copies_in_gemm = gemm;
		return;
	}
	if (cand) {
		const TcStmt *c = body->items[planned];
		const TcVar *dst = c->u.copy.dst.var;
		const char *why;
		if (in_registers(dst) ||
		    (dst != gemm->u.gemm.a.var && dst != gemm->u.gemm.b.var))
			why = tc_fmt(a, "the copy into '%s' at %d:%d does not "
				     "fill an operand of the gemm", dst->name,
				     c->loc.line, c->loc.col);
		else
			why = strided_why(a, c, threads, false);
		note_not_mbarrier(d, loop, cand, why);
	}
	for (int i = 0; i < planned; i++) {
		TcStmt *c = body->items[i];
		memset(c->u.copy.first, 0, sizeof c->u.copy.first);
		c->u.copy.advance = NULL;
	}
}

/* A pipelined loop whose copies are not issued from its gemm: each
 * async copy into shared memory that fits copy_g2s's strided fast path
 * (a fixed start plus a fixed step per iteration) gets copy.first and
 * copy.advance all the same, so expand_pipeline.c sets it up once before
 * the loop (COPY_PLAN) and issues it without recomputing a thread's
 * addresses and box tests each iteration.  Packed i4 tiles too (32
 * elements a vector). */
/* Off by default until the plans of the ordinary loop (packed i4 tiles,
 * one-row tiles of fewer vectors than threads) have run on a GPU against
 * the reference; --copy-plans turns them on. */
#define COPY_PLANS_DEFAULT false

static void
plan_plain_copies(TcArena *a, const TcKernel *k, const TcOptions *opt,
		  TcDiags *d, TcStmt *loop)
{
	const TcVec *body = &loop->u.loop.body->u.block.body;
	long long threads = tc_abi_threads(k, &opt->target);
	bool on = opt->copy_plans ? opt->copy_plans > 0 : COPY_PLANS_DEFAULT;
	if (!opt->target.cp_async || !on)
		return;
	for (int i = 0; i < loop->u.loop.async_copies; i++) {
		TcStmt *c = body->items[i];
		if (in_registers(c->u.copy.dst.var) || c->u.copy.advance ||
		    plan_strided(a, loop, c, threads, true) || !opt->explain)
			continue;
		tc_diag(d, TC_NOTE, c->loc, "this tile_copy's threads compute "
			"their addresses and box tests every iteration, not once "
			"before the tile_pipelined loop at %d:%d: %s",
			loop->loc.line, loop->loc.col, strided_why(a, c, threads, true));
	}
}

static void
pipeline_stmt(TcArena *a, const TcKernel *k, const TcOptions *opt,
	      TcDiags *d, TcStmt *s)
{
	const TcTarget *t = &opt->target;
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++)
			pipeline_stmt(a, k, opt, d, s->u.block.body.items[i]);
		break;
	case TC_ST_IF:
		pipeline_stmt(a, k, opt, d, s->u.cond.then);
		if (s->u.cond.els)
			pipeline_stmt(a, k, opt, d, s->u.cond.els);
		break;
	case TC_ST_FOR: {
		pipeline_stmt(a, k, opt, d, s->u.loop.body);
		long long stages = 1;
		if (s->u.loop.kind != TC_LOOP_PIPELINED ||
		    !tc_expr_const(s->u.loop.stages, &stages) || stages < 2)
			break;
		copies_first(a, k, t, s);
		TcVec *body = &s->u.loop.body->u.block.body;
		int n = 0;
		while (n < body->len && joins_pipeline(a, k, t, s, body->items[n]))
			n++;
		s->u.loop.async_copies = n;
		explain_loop(a, k, t, s, n);
		for (int i = 0; i < n; i++) {
			TcVar *dst = ((TcStmt *)body->items[i])->u.copy.dst.var;
			if (!in_registers(dst))
				dst->stages = (int)stages;
		}
		if (n)
			plan_copies_in_gemm(a, k, opt, d, s);
		if (n && !s->u.loop.copies_in_gemm)
			plan_plain_copies(a, k, opt, d, s);
		break;
	}
	default:
		break;
	}
}

bool
tc_software_pipeline(TcArena *a, TcProgram *p, const TcOptions *opt,
		     TcDiags *d)
{
	for (int i = 0; i < p->kernels.len; i++) {
		TcKernel *k = p->kernels.items[i];
		for (int j = 0; j < k->vars.len; j++) {
			TcVar *v = k->vars.items[j];
			if (v->kind == TC_VAR_BUFFER)
				v->stages = 1;
		}
		pipeline_stmt(a, k, opt, d, k->body);
	}
	return true;
}
