/*
 * expand_pipeline.c - carry out the software pipelines the pipeline pass
 * planned, and decide how every copy is lowered.
 *
 * Input: scheduled GPU IR (layout, pipeline, smem and barrier have run).
 * Output: every COPY (and ASYNC_COPY made here) has copy.lower; every
 * tile_pipelined loop with async copies (loop.async_copies > 0) is
 * replaced by a BLOCK that carries the pipeline out in statements the
 * emitters print one by one:
 *
 *   decl k_end = <the loop's count>
 *   [register destinations: decl X_next; if 0 < k_end { copy X_next <- ..(0) }]
 *     (X_next holds narrow float sources as stored: prefetch_dtype)
 *   for k_pre in 0 .. S - 1 {                       prologue
 *     if k_pre < k_end { async_copy X[stage k_pre] <- ..(k_pre) }
 *     commit_group
 *   }
 *   for k in 0 .. k_end {                           steady state
 *     [copy X <- X_next; if k + 1 < k_end { copy X_next <- ..(k + 1) }]
 *     decl k_stage = k % S
 *     wait_group S - 2; barrier                     this iteration's copies
 *     decl k_next = k + S - 1
 *     if k_next < k_end { async_copy X[stage k_next % S] <- ..(k_next) }
 *     commit_group
 *     stage_view X_stage = X[k_stage]               the rest of the body
 *     ...                                            names the views
 *   }
 *   wait_group 0                                    drain
 *
 * A copy the pipeline pass planned strided (copy.advance) is set up once
 * by a COPY_PLAN before the prologue, and each async_copy of it above is
 *   pipe_select aligned(X_copy) { async_copy .., strided X_copy iteration it }
 *   else { async_copy .., vector }
 *
 * A loop whose copies the pipeline pass planned to issue inside its gemm
 * (loop.copies_in_gemm) keeps that form too: a PIPE_SELECT holds the loop
 * as planned (the mbarrier loop, whose copies are STRIDED) and the
 * expansion above as its fallback, for tensors whose tiles are not whole
 * 16-byte vectors (a run-time property of the pointers and strides).
 *
 * Invariants relied on: the async copies are the body's leading COPY
 * statements, whole shared (staged) or register destinations, tensor
 * sources whose origins may be evaluated early (software_pipeline.c);
 * the loop begins at 0 with step 1 (check.c).
 */
#include "ir/tilec_int.h"

#include <string.h>

static bool
in_registers(const TcVar *v)
{
	return v->kind == TC_VAR_BUFFER &&
	       (tc_layout_is_matrix(v->layout.kind) ||
		v->layout.kind == TC_LAYOUT_BLOCKED);
}

/* --- Copy lowering --------------------------------------------------------- */

static TcCopyLower
lowering(const TcStmt *s)
{
	if (in_registers(s->u.copy.dst.var) || in_registers(s->u.copy.src.var))
		return TC_COPY_REGISTER;
	if (s->kind == TC_ST_ATOMIC_ADD)
		return TC_COPY_GENERIC;
	if (s->u.copy.advance)
		return TC_COPY_STRIDED;
	return tc_copy_g2s_fits(s) ? TC_COPY_VECTOR : TC_COPY_GENERIC;
}

static void
lower_copies(TcStmt *s)
{
	if (!s)
		return;
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++)
			lower_copies(s->u.block.body.items[i]);
		break;
	case TC_ST_FOR:
		lower_copies(s->u.loop.body);
		break;
	case TC_ST_IF:
		lower_copies(s->u.cond.then);
		lower_copies(s->u.cond.els);
		break;
	case TC_ST_COPY:
	case TC_ST_ATOMIC_ADD:
		s->u.copy.lower = lowering(s);
		break;
	default:
		break;
	}
}

/* --- Rewriting ---------------------------------------------------------------
 * A clone of a statement or expression with the loop variable replaced by
 * an expression (its value at another iteration) and staged buffers by
 * their views. */

typedef struct Subst {
	const TcVar *var; /* the loop variable, or NULL */
	const TcExpr *by; /* what it becomes */
	int nviews;
	const TcVar **of; /* staged buffers ... */
	TcVar **view;     /* ... and their views (room for one per copy) */
} Subst;

static TcVar *
mapped(const Subst *m, TcVar *v)
{
	for (int i = 0; i < m->nviews; i++)
		if (m->of[i] == v)
			return m->view[i];
	return v;
}

static bool
is_int(const TcExpr *e, long long v)
{
	return e->kind == TC_EX_INT && e->u.ival == v;
}

/* Binary e without the zeros and ones a constant iteration leaves:
 * 0 * x, x * 0, 0 / x and 0 % x are 0; x + 0, 0 + x, x - 0, x * 1 and
 * 1 * x are x. */
static TcExpr *
fold_identity(TcExpr *e)
{
	TcExpr *l = e->u.bin.lhs, *r = e->u.bin.rhs;
	switch (e->u.bin.op) {
	case TC_OP_MUL:
		if (is_int(l, 0) || is_int(r, 1))
			return l->dtype == e->dtype ? l : e;
		if (is_int(r, 0) || is_int(l, 1))
			return r->dtype == e->dtype ? r : e;
		return e;
	case TC_OP_DIV:
	case TC_OP_REM:
		return is_int(l, 0) && l->dtype == e->dtype ? l : e;
	case TC_OP_ADD:
		if (is_int(l, 0) && r->dtype == e->dtype)
			return r;
		return is_int(r, 0) && l->dtype == e->dtype ? l : e;
	case TC_OP_SUB:
		return is_int(r, 0) && l->dtype == e->dtype ? l : e;
	default:
		return e;
	}
}

static TcExpr *
rewrite(TcArena *a, const TcExpr *e, const Subst *m)
{
	if (!e)
		return NULL;
	if (e->kind == TC_EX_VAR && m->var && e->u.var == m->var)
		return tc_expr_clone(a, m->by);
	TcExpr *c = tc_expr_new(a, e->kind, e->dtype, e->loc);
	c->u = e->u;
	switch (e->kind) {
	case TC_EX_BINARY:
		c->u.bin.lhs = rewrite(a, e->u.bin.lhs, m);
		c->u.bin.rhs = rewrite(a, e->u.bin.rhs, m);
		if (m->var && tc_expr_mentions(e, m->var))
			return fold_identity(c);
		break;
	case TC_EX_UNARY: c->u.un.arg = rewrite(a, e->u.un.arg, m); break;
	case TC_EX_SELECT:
		c->u.sel.cond = rewrite(a, e->u.sel.cond, m);
		c->u.sel.then = rewrite(a, e->u.sel.then, m);
		c->u.sel.els = rewrite(a, e->u.sel.els, m);
		break;
	case TC_EX_CALL:
		c->u.call.args = tc_alloc(a, sizeof(TcExpr *) *
					     (size_t)(e->u.call.nargs ? e->u.call.nargs : 1));
		for (int i = 0; i < e->u.call.nargs; i++)
			c->u.call.args[i] = rewrite(a, e->u.call.args[i], m);
		break;
	case TC_EX_CAST: c->u.cast.arg = rewrite(a, e->u.cast.arg, m); break;
	case TC_EX_LOAD:
		c->u.load.var = mapped(m, e->u.load.var);
		for (int i = 0; i < e->u.load.var->rank; i++)
			c->u.load.idx[i] = rewrite(a, e->u.load.idx[i], m);
		break;
	default:
		break;
	}
	return c;
}

static TcRegion
rewrite_region(TcArena *a, const TcRegion *r, const Subst *m)
{
	TcRegion c = *r;
	if (!r->var)
		return c;
	c.var = mapped(m, r->var);
	for (int i = 0; i < r->var->rank; i++)
		c.origin[i] = rewrite(a, r->origin[i], m);
	return c;
}

static TcStmt *clone_stmt(TcArena *a, const TcStmt *s, const Subst *m);

static TcStmt *
clone_block(TcArena *a, const TcStmt *s, const Subst *m)
{
	TcStmt *c = tc_stmt_new(a, TC_ST_BLOCK, s->loc);
	c->note = s->note;
	c->u.block.cite = s->u.block.cite;
	for (int i = 0; i < s->u.block.body.len; i++)
		tc_vec_push(a, &c->u.block.body,
			    clone_stmt(a, s->u.block.body.items[i], m));
	return c;
}

static TcStmt *
clone_stmt(TcArena *a, const TcStmt *s, const Subst *m)
{
	if (!s)
		return NULL;
	if (s->kind == TC_ST_BLOCK)
		return clone_block(a, s, m);
	TcStmt *c = tc_stmt_new(a, s->kind, s->loc);
	c->note = s->note;
	c->u = s->u;
	switch (s->kind) {
	case TC_ST_DECL:
		c->u.decl.init = rewrite(a, s->u.decl.init, m);
		break;
	case TC_ST_ASSIGN:
		c->u.assign.dst = rewrite(a, s->u.assign.dst, m);
		c->u.assign.value = rewrite(a, s->u.assign.value, m);
		break;
	case TC_ST_FOR:
		c->u.loop.begin = rewrite(a, s->u.loop.begin, m);
		c->u.loop.end = rewrite(a, s->u.loop.end, m);
		c->u.loop.step = rewrite(a, s->u.loop.step, m);
		c->u.loop.stages = rewrite(a, s->u.loop.stages, m);
		c->u.loop.body = clone_stmt(a, s->u.loop.body, m);
		break;
	case TC_ST_IF:
		c->u.cond.cond = rewrite(a, s->u.cond.cond, m);
		c->u.cond.then = clone_stmt(a, s->u.cond.then, m);
		c->u.cond.els = clone_stmt(a, s->u.cond.els, m);
		break;
	case TC_ST_COPY:
	case TC_ST_ATOMIC_ADD:
	case TC_ST_ASYNC_COPY:
		c->u.copy.dst = rewrite_region(a, &s->u.copy.dst, m);
		c->u.copy.src = rewrite_region(a, &s->u.copy.src, m);
		c->u.copy.stage = rewrite(a, s->u.copy.stage, m);
		c->u.copy.iter = rewrite(a, s->u.copy.iter, m);
		break;
	case TC_ST_STAGE_BAR_ARRIVE:
	case TC_ST_STAGE_BAR_WAIT:
		c->u.bar.stage = rewrite(a, s->u.bar.stage, m);
		c->u.bar.parity = rewrite(a, s->u.bar.parity, m);
		break;
	case TC_ST_GEMM:
		c->u.gemm.c = rewrite_region(a, &s->u.gemm.c, m);
		c->u.gemm.a = rewrite_region(a, &s->u.gemm.a, m);
		c->u.gemm.b = rewrite_region(a, &s->u.gemm.b, m);
		c->u.gemm.issue = clone_stmt(a, s->u.gemm.issue, m);
		c->u.gemm.b_from = clone_stmt(a, s->u.gemm.b_from, m);
		break;
	case TC_ST_FILL:
		c->u.fill.dst = rewrite_region(a, &s->u.fill.dst, m);
		c->u.fill.value = rewrite(a, s->u.fill.value, m);
		break;
	case TC_ST_REDUCE:
		c->u.reduce.dst = rewrite_region(a, &s->u.reduce.dst, m);
		c->u.reduce.src = rewrite_region(a, &s->u.reduce.src, m);
		break;
	case TC_ST_REDUCE_ALL:
		c->u.reduce_all.src = rewrite_region(a, &s->u.reduce_all.src, m);
		break;
	case TC_ST_ARG_REDUCE:
		c->u.arg_reduce.dst = rewrite_region(a, &s->u.arg_reduce.dst, m);
		c->u.arg_reduce.index = rewrite_region(a, &s->u.arg_reduce.index, m);
		c->u.arg_reduce.src = rewrite_region(a, &s->u.arg_reduce.src, m);
		break;
	case TC_ST_STAGE_VIEW:
		c->u.view.stage = rewrite(a, s->u.view.stage, m);
		break;
	case TC_ST_PIPE_SELECT:
		c->u.select.fast = clone_stmt(a, s->u.select.fast, m);
		c->u.select.fallback = clone_stmt(a, s->u.select.fallback, m);
		break;
	default:
		break;
	}
	return c;
}

/* --- Expansion ----------------------------------------------------------------- */

/* Warp specialization's state for one kernel (see "Warp
 * specialization" below). */
typedef struct Ws {
	bool on;            /* asked for, and the target has TMA and wgmma */
	bool persistent;    /* and persistent blocks (--persistent) */
	int top;            /* the index in the kernel body of the statement
			       being expanded; -1 inside a loop or branch */
	const TcStmt *loop; /* the loop it took, or NULL */
	TcStmt *init;       /* that loop's STAGE_BAR_INIT */
	TcStmt *producer;   /* that loop's producer block */
	/* The blocks holding the ring's state (its stage and phase, the
	 * consumers' previous stage: the first pstate / cstate
	 * statements of each), which a persistent kernel carries from
	 * tile to tile; the consumers' previous stage, the loop's end
	 * and stage barriers; whether the consumers release a stage from
	 * inside the next iteration's gemm. */
	TcStmt *pring, *cring;
	int pstate, cstate;
	TcVar *prev, *end, *bars;
	bool in_flight;
} Ws;

typedef struct Expand {
	TcArena *a;
	const TcProgram *p;
	TcKernel *k;
	const TcTarget *t;
	TcTma tma; /* which copies may go by TMA (TC_TMA_OFF: the target
		      has none) */
	TcDiags *d;
	Ws *ws;
} Expand;

static bool
name_taken(const Expand *x, const char *name)
{
	for (int i = 0; i < x->k->vars.len; i++)
		if (strcmp(((const TcVar *)x->k->vars.items[i])->name, name) == 0)
			return true;
	for (int i = 0; i < x->p->tunables.len; i++)
		if (strcmp(((const TcVar *)x->p->tunables.items[i])->name, name) == 0)
			return true;
	return false;
}

/* A new var named `base`, or base with underscores appended until no
 * name of the program has it. */
static TcVar *
new_var(const Expand *x, TcVarKind kind, const char *base, TcDtype t)
{
	const char *n = base;
	while (name_taken(x, n))
		n = tc_fmt(x->a, "%s_", n);
	return tc_var_new(x->a, x->k, kind, n, t, (TcLoc){ 0 });
}

static TcExpr *
ref(const Expand *x, TcVar *v)
{
	TcExpr *e = tc_expr_var(x->a, v, (TcLoc){ 0 });
	e->dtype = v->dtype;
	return e;
}

static TcExpr *
num(const Expand *x, long long v)
{
	return tc_expr_int(x->a, v, (TcLoc){ 0 });
}

static TcExpr *
bin(const Expand *x, TcBinop op, TcExpr *l, TcExpr *r)
{
	return tc_expr_binary(x->a, op, l, r, (TcLoc){ 0 });
}

static TcStmt *
block(const Expand *x)
{
	return tc_stmt_new(x->a, TC_ST_BLOCK, (TcLoc){ 0 });
}

static void
push(const Expand *x, TcStmt *blk, TcStmt *s)
{
	tc_vec_push(x->a, &blk->u.block.body, s);
}

static TcStmt *
decl(const Expand *x, TcVar *v, TcExpr *init)
{
	TcStmt *s = tc_stmt_new(x->a, TC_ST_DECL, (TcLoc){ 0 });
	s->u.decl.var = v;
	s->u.decl.init = init;
	return s;
}

static TcStmt *
if_then(const Expand *x, TcExpr *cond, TcStmt *then)
{
	TcStmt *s = tc_stmt_new(x->a, TC_ST_IF, (TcLoc){ 0 });
	s->u.cond.cond = cond;
	s->u.cond.then = then;
	return s;
}

static TcStmt *
serial_for(const Expand *x, TcVar *v, TcExpr *end, TcStmt *body)
{
	TcStmt *s = tc_stmt_new(x->a, TC_ST_FOR, (TcLoc){ 0 });
	s->u.loop.kind = TC_LOOP_SERIAL;
	s->u.loop.var = v;
	s->u.loop.begin = num(x, 0);
	s->u.loop.end = end;
	s->u.loop.step = num(x, 1);
	s->u.loop.body = body;
	return s;
}

/* A prologue or drain: `for v in 0 .. n { body }` into blk, or, for one
 * iteration, body's statements with v = 0 (no one-trip loops); note on
 * the first statement either way. */
static void
repeat(const Expand *x, TcStmt *blk, TcVar *v, long long n, TcStmt *body,
       const char *note)
{
	if (n != 1) {
		TcStmt *loop = serial_for(x, v, num(x, n), body);
		loop->note = note;
		push(x, blk, loop);
		return;
	}
	Subst m = { .var = v, .by = num(x, 0) };
	TcStmt *once = clone_block(x->a, body, &m);
	for (int i = 0; i < once->u.block.body.len; i++) {
		TcStmt *s = once->u.block.body.items[i];
		if (i == 0)
			s->note = note;
		push(x, blk, s);
	}
}

static TcStmt *
simple(const Expand *x, TcStmtKind kind)
{
	return tc_stmt_new(x->a, kind, (TcLoc){ 0 });
}

static TcStmt *
wait_group(const Expand *x, int pending, const char *note)
{
	TcStmt *s = simple(x, TC_ST_WAIT_GROUP);
	s->u.wait.pending = pending;
	s->note = note;
	return s;
}

/* A pipelined loop's bookkeeping. */
typedef struct Pipe {
	const TcStmt *loop;
	long long stages;
	int ncopies;      /* loop.async_copies */
	bool smem, regs;  /* some copies into shared memory, into registers */
	TcVar *end;       /* k_end */
	/* Register destinations and their prefetch fragments X_next. */
	int nnext;
	TcVar **reg, **next; /* room for one per async copy */
	/* The views' names, per async copy: the mbarrier loop's views
	 * are named as its fallback's (they never share a scope). */
	const char **view_name;
	/* Per async copy: the tensor map the mbarrier loop's TMA copies
	 * go through, or NULL (STRIDED). */
	TcTensorMap **tmap;
} Pipe;

static const TcStmt *
async_copy_at(const Pipe *pp, int i)
{
	return pp->loop->u.loop.body->u.block.body.items[i];
}

static TcVar *
next_of(const Pipe *pp, const TcVar *v)
{
	for (int i = 0; i < pp->nnext; i++)
		if (pp->reg[i] == v)
			return pp->next[i];
	return NULL;
}

/* Async copy c of the loop for iteration `it` (an expression of the
 * loop's) into stage `stage` of its buffer, lowered as its region allows
 * (VECTOR or GENERIC). */
static TcStmt *
async_copy(const Expand *x, const TcStmt *c, const Subst *m, TcExpr *stage)
{
	TcStmt *s = clone_stmt(x->a, c, m);
	s->kind = TC_ST_ASYNC_COPY;
	s->u.copy.stage = tc_expr_clone(x->a, stage);
	memset(s->u.copy.first, 0, sizeof s->u.copy.first);
	s->u.copy.advance = NULL;
	s->u.copy.lower = lowering(s);
	return s;
}

/* The async copies into shared memory for iteration `it`, each into
 * stage `stage` of its buffer.  A copy with a plan (plans[i], or none
 * where plans is NULL) goes through it where its tiles are whole
 * 16-byte vectors, a PIPE_SELECT on the plan's test, and as its region
 * allows otherwise. */
static void
issue_smem(const Expand *x, const Pipe *pp, TcStmt *into, TcExpr *it,
	   TcExpr *stage, TcStmt *const *plans)
{
	Subst m = { .var = pp->loop->u.loop.var, .by = it };
	for (int i = 0; i < pp->ncopies; i++) {
		const TcStmt *c = async_copy_at(pp, i);
		if (in_registers(c->u.copy.dst.var))
			continue;
		TcStmt *s = async_copy(x, c, &m, stage);
		if (!plans || !plans[i]) {
			push(x, into, s);
			continue;
		}
		Subst none = { 0 };
		TcStmt *f = clone_stmt(x->a, s, &none);
		f->u.copy.lower = TC_COPY_STRIDED;
		f->u.copy.plan = plans[i]->u.plan.var;
		f->u.copy.iter = tc_expr_clone(x->a, it);
		TcStmt *sel = simple(x, TC_ST_PIPE_SELECT);
		tc_vec_push(x->a, &sel->u.select.plans, plans[i]->u.plan.var);
		sel->u.select.fast = block(x);
		push(x, sel->u.select.fast, f);
		sel->u.select.fallback = block(x);
		push(x, sel->u.select.fallback, s);
		push(x, into, sel);
	}
}

/* The plans of loop pp's planned copies into shared memory (copy.advance:
 * software_pipeline.c, plan_plain_copies), into blk; NULL when none. */
static TcStmt **
plain_plans(const Expand *x, const Pipe *pp, TcStmt *blk)
{
	TcStmt **plans = NULL;
	for (int i = 0; i < pp->ncopies; i++) {
		TcStmt *c = (TcStmt *)async_copy_at(pp, i);
		const TcVar *v = c->u.copy.dst.var;
		if (in_registers(v) || !c->u.copy.advance)
			continue;
		/* A packed i4 tile the smem pass swizzled has no strided
		 * form (G2S's i4 vectors are unswizzled). */
		if (v->dtype == TC_DT_I4 && v->swizzle)
			continue;
		TcStmt *plan = simple(x, TC_ST_COPY_PLAN);
		if (!plans) {
			plans = tc_alloc(x->a, sizeof(TcStmt *) * (size_t)pp->ncopies);
			plan->note = "Each copy's per-thread addresses, computed once: "
				"where its tiles are whole 16-byte vectors (tested "
				"once), the loop issues it without branches.";
		}
		plan->u.plan.var = new_var(x, TC_VAR_HANDLE,
			tc_fmt(x->a, "%s_copy", v->name), TC_DT_I32);
		c->u.copy.lower = TC_COPY_STRIDED;
		plan->u.plan.copy = c;
		plans[i] = plan;
		push(x, blk, plan);
	}
	return plans;
}

/* The copies into register fragments for iteration `it`, each into its
 * fragment's prefetch copy. */
static void
issue_regs(const Expand *x, const Pipe *pp, TcStmt *into, TcExpr *it)
{
	Subst m = { .var = pp->loop->u.loop.var, .by = it };
	for (int i = 0; i < pp->ncopies; i++) {
		const TcStmt *c = async_copy_at(pp, i);
		if (!in_registers(c->u.copy.dst.var))
			continue;
		TcStmt *s = clone_stmt(x->a, c, &m);
		s->u.copy.dst.var = next_of(pp, c->u.copy.dst.var);
		s->u.copy.lower = TC_COPY_REGISTER;
		push(x, into, s);
	}
}

/* A whole-buffer register copy dst <- src. */
static TcStmt *
reg_copy(const Expand *x, TcVar *dst, TcVar *src)
{
	TcStmt *s = simple(x, TC_ST_COPY);
	TcRegion *r[2] = { &s->u.copy.dst, &s->u.copy.src };
	TcVar *v[2] = { dst, src };
	for (int j = 0; j < 2; j++) {
		r[j]->var = v[j];
		r[j]->whole = true;
		r[j]->ndims = v[j]->rank;
		for (int d = 0; d < v[j]->rank; d++) {
			r[j]->origin[d] = num(x, 0);
			r[j]->dims[d] = d;
		}
	}
	s->u.copy.lower = TC_COPY_REGISTER;
	return s;
}

static const char *
iterations(const Expand *x, long long n)
{
	return n == 1 ? "iteration" : tc_fmt(x->a, "%lld iterations", n);
}

/* A view of this iteration's stage (`stage`) of each staged buffer the
 * rest of pp->loop's body uses, into `into`; *views maps them. */
static void
stage_views(const Expand *x, Pipe *pp, TcStmt *into, TcVar *stage,
	    Subst *views)
{
	const TcVec *items = &pp->loop->u.loop.body->u.block.body;
	for (int i = 0; i < pp->ncopies; i++) {
		TcVar *of = ((const TcStmt *)items->items[i])->u.copy.dst.var;
		if (in_registers(of) || of->stages < 2 || mapped(views, of) != of)
			continue;
		bool used = false;
		for (int j = pp->ncopies; j < items->len && !used; j++)
			used = tc_stmt_touches(items->items[j], NULL, of) != 0;
		if (!used)
			continue;
		TcVar *v = pp->view_name[i] ?
			tc_var_new(x->a, x->k, TC_VAR_BUFFER, pp->view_name[i],
				   of->dtype, (TcLoc){ 0 }) :
			new_var(x, TC_VAR_BUFFER, tc_fmt(x->a, "%s_stage", of->name),
				of->dtype);
		pp->view_name[i] = v->name;
		int index = v->index;
		const char *name = v->name;
		*v = *of;
		v->index = index;
		v->name = name;
		v->loc = (TcLoc){ 0 };
		v->stages = 1;
		v->view_of = of;
		TcStmt *s = simple(x, TC_ST_STAGE_VIEW);
		s->u.view.var = v;
		s->u.view.of = of;
		s->u.view.stage = ref(x, stage);
		push(x, into, s);
		views->of[views->nviews] = of;
		views->view[views->nviews++] = v;
	}
}

/* The cp.async expansion of pipelined loop pp->loop (after k_end and the
 * register prefetch set-up): prologue, steady state, drain, into blk.
 * `pre`, `next` and `stage` are its bookkeeping vars. */
static void
expand_loop(const Expand *x, Pipe *pp, TcStmt *blk, TcVar *pre,
	    TcVar *next, TcVar *stage, TcStmt *const *plans)
{
	const TcStmt *loop = pp->loop;
	TcVar *k = loop->u.loop.var;
	long long S = pp->stages;
	if (pp->smem) {
		TcStmt *then = block(x);
		issue_smem(x, pp, then, ref(x, pre), ref(x, pre), plans);
		TcStmt *body = block(x);
		push(x, body, if_then(x, bin(x, TC_OP_LT, ref(x, pre),
					     ref(x, pp->end)), then));
		push(x, body, simple(x, TC_ST_COMMIT_GROUP));
		repeat(x, blk, pre, S - 1, body,
		       tc_fmt(x->a, "Prologue: the copies of the first %s.",
			      iterations(x, S - 1)));
	}
	TcStmt *body = block(x);
	if (pp->regs) {
		for (int i = 0; i < pp->nnext; i++)
			push(x, body, reg_copy(x, pp->reg[i], pp->next[i]));
		TcStmt *then = block(x);
		issue_regs(x, pp, then, bin(x, TC_OP_ADD, ref(x, k), num(x, 1)));
		push(x, body, if_then(x, bin(x, TC_OP_LT,
					     bin(x, TC_OP_ADD, ref(x, k), num(x, 1)),
					     ref(x, pp->end)), then));
	}
	Subst views = { .of = tc_alloc(x->a, sizeof(TcVar *) * (size_t)pp->ncopies),
			.view = tc_alloc(x->a, sizeof(TcVar *) * (size_t)pp->ncopies) };
	if (pp->smem) {
		push(x, body, decl(x, stage, bin(x, TC_OP_REM, ref(x, k), num(x, S))));
		push(x, body, wait_group(x, (int)(S - 2), tc_fmt(x->a,
			"Wait for this iteration's copies; every thread is done "
			"with stage (%s - 1) %% %lld.", k->name, S)));
		push(x, body, simple(x, TC_ST_BARRIER));
		push(x, body, decl(x, next, bin(x, TC_OP_ADD, ref(x, k),
						 num(x, S - 1))));
		TcStmt *then = block(x);
		issue_smem(x, pp, then, ref(x, next),
			   bin(x, TC_OP_REM, ref(x, next), num(x, S)), plans);
		push(x, body, if_then(x, bin(x, TC_OP_LT, ref(x, next),
					     ref(x, pp->end)), then));
		push(x, body, simple(x, TC_ST_COMMIT_GROUP));
		stage_views(x, pp, body, stage, &views);
	}
	const TcVec *items = &loop->u.loop.body->u.block.body;
	for (int i = pp->ncopies; i < items->len; i++)
		push(x, body, clone_stmt(x->a, items->items[i], &views));
	push(x, blk, serial_for(x, k, ref(x, pp->end), body));
	if (pp->smem)
		push(x, blk, wait_group(x, 0, NULL));
}

/* --- The mbarrier loop --------------------------------------------------------- */

static TcStmt *
bar(const Expand *x, TcStmtKind kind, TcVar *bars, bool full, TcVar *stage,
    TcVar *parity)
{
	TcStmt *s = simple(x, kind);
	s->u.bar.bars = bars;
	s->u.bar.full = full;
	s->u.bar.stage = ref(x, stage);
	s->u.bar.parity = parity ? ref(x, parity) : NULL;
	return s;
}

/* The strided copies of iteration `it` into stage `stage`, through the
 * plans, then this thread's arrival on the stage's full barrier. */
static void
issue_strided(const Expand *x, const Pipe *pp, const TcVec *plans,
	      TcStmt *into, TcVar *it, TcVar *stage, TcVar *bars, bool arrive)
{
	Subst m = { .var = pp->loop->u.loop.var, .by = ref(x, it) };
	for (int i = 0; i < pp->ncopies; i++) {
		TcStmt *s = clone_stmt(x->a, async_copy_at(pp, i), &m);
		s->kind = TC_ST_ASYNC_COPY;
		memset(s->u.copy.first, 0, sizeof s->u.copy.first);
		s->u.copy.advance = NULL;
		s->u.copy.lower = pp->tmap[i] ? TC_COPY_TMA : TC_COPY_STRIDED;
		s->u.copy.plan = plans->items[i];
		s->u.copy.iter = ref(x, it);
		s->u.copy.stage = ref(x, stage);
		if (pp->tmap[i]) {
			s->u.copy.tmap = pp->tmap[i];
			s->u.copy.bars = bars;
		}
		push(x, into, s);
	}
	if (arrive)
		push(x, into, bar(x, TC_ST_STAGE_BAR_ARRIVE, bars, true, stage, NULL));
}

static TcStmt *
assign(const Expand *x, TcVar *v, TcExpr *value)
{
	TcStmt *s = simple(x, TC_ST_ASSIGN);
	s->u.assign.dst = ref(x, v);
	s->u.assign.value = value;
	return s;
}

/* phase = stage == S - 1 ? phase ^ 1 : phase; stage = stage + 1 == S ? 0 :
 * stage + 1: one iteration on. */
static void
rotate(const Expand *x, TcStmt *into, TcVar *stage, TcVar *phase, long long S)
{
	TcExpr *flip = tc_expr_new(x->a, TC_EX_SELECT, TC_DT_I32, (TcLoc){ 0 });
	flip->u.sel.cond = bin(x, TC_OP_EQ, ref(x, stage), num(x, S - 1));
	flip->u.sel.then = bin(x, TC_OP_BXOR, ref(x, phase), num(x, 1));
	flip->u.sel.els = ref(x, phase);
	push(x, into, assign(x, phase, flip));
	TcExpr *wrap = tc_expr_new(x->a, TC_EX_SELECT, TC_DT_I32, (TcLoc){ 0 });
	wrap->u.sel.cond = bin(x, TC_OP_EQ, bin(x, TC_OP_ADD, ref(x, stage), num(x, 1)),
			       num(x, S));
	wrap->u.sel.then = num(x, 0);
	wrap->u.sel.els = bin(x, TC_OP_ADD, ref(x, stage), num(x, 1));
	push(x, into, assign(x, stage, wrap));
}

static TcVar *
mutable_local(const Expand *x, const char *base)
{
	TcVar *v = new_var(x, TC_VAR_LOCAL, base, TC_DT_I32);
	v->mutated = true;
	return v;
}

/* The gemm of `body` (a clone of the loop body's copies_in_gemm, whose
 * statements from `from` on `body` holds); recurses nowhere (copies_gemm
 * keeps it at the top level). */
static TcStmt *
cloned_gemm(TcStmt *body, const TcStmt *orig_gemm, const TcVec *orig, int from)
{
	for (int i = 0; i < body->u.block.body.len; i++)
		if (orig->items[from + i] == orig_gemm)
			return body->u.block.body.items[i];
	return NULL;
}

/* Whether the mbarrier loop's gemm g may return with its wgmma group in
 * flight, to be waited for by the next iteration's (the tensor cores
 * then run one group behind the warps, never idle between iterations):
 * when it is wgmma's with both operands in shared memory, summed in
 * place, and nothing else in the loop `body` touches its accumulator. */
static bool
gemm_stays_in_flight(const TcStmt *body, const TcStmt *g)
{
	const TcVar *c = g->u.gemm.c.var, *a = g->u.gemm.a.var;
	return g->u.gemm.wgmma_n > 0 && !g->u.gemm.wgmma_promote &&
	       a->scope == TC_SCOPE_SHARED &&
	       tc_stmt_touches(body, g, c) == 0;
}

/* The mbarrier loop of pipelined loop pp->loop (copies_in_gemm, every
 * copy planned strided), through `plans`: the copies of iteration
 * k + S - 1 issued from inside the gemm, per-stage full and empty
 * barriers instead of a block barrier per iteration, stages rotating. */
static TcStmt *
fast_loop(const Expand *x, Pipe *pp, const TcVec *plans, TcVar *pre,
	  TcVar *next, TcVar *stage)
{
	const TcStmt *loop = pp->loop;
	TcVar *k = loop->u.loop.var;
	long long S = pp->stages;
	TcStmt *blk = block(x);
	TcStmt *init = simple(x, TC_ST_STAGE_BAR_INIT);
	TcVar *bars = new_var(x, TC_VAR_HANDLE, tc_fmt(x->a, "%s_bars", k->name),
			      TC_DT_I32);
	init->u.bars.var = bars;
	init->u.bars.stages = (int)S;
	init->u.bars.offset = loop->u.loop.barriers;
	/* Every thread's cp.async arrival, and thread 0's with each TMA
	 * copy's bytes. */
	long long threads = tc_abi_threads(x->k, x->t);
	init->u.bars.full_arrivals = threads;
	for (int i = 0; i < pp->ncopies; i++)
		init->u.bars.full_arrivals += pp->tmap[i] != NULL;
	init->u.bars.empty_arrivals = (threads + x->t->warp_size - 1) / x->t->warp_size;
	init->u.bars.copiers = threads;
	push(x, blk, init);
	push(x, blk, simple(x, TC_ST_BARRIER));

	TcStmt *pro = block(x);
	issue_strided(x, pp, plans, pro, pre, pre, bars, true);
	repeat(x, blk, pre, S - 1, pro,
	       tc_fmt(x->a, "Prologue: the copies of the first %s (zero-filled "
		      "past the end).", iterations(x, S - 1)));

	TcVar *next_stage = mutable_local(x, tc_fmt(x->a, "%s_next_stage", k->name));
	TcVar *phase = mutable_local(x, tc_fmt(x->a, "%s_phase", k->name));
	TcVar *next_phase = mutable_local(x, tc_fmt(x->a, "%s_next_phase", k->name));
	TcStmt *d = decl(x, stage, num(x, 0));
	d->note = tc_fmt(x->a, "This iteration's stage and its phase's parity; "
			 "iteration %s - 1's, which the gemm refills for "
			 "iteration %s.", k->name, next->name);
	push(x, blk, d);
	push(x, blk, decl(x, next_stage, num(x, S - 1)));
	push(x, blk, decl(x, phase, num(x, 0)));
	push(x, blk, decl(x, next_phase, num(x, 1)));

	TcStmt *body = block(x);
	push(x, body, decl(x, next, bin(x, TC_OP_ADD, ref(x, k), num(x, S - 1))));
	TcStmt *w = bar(x, TC_ST_STAGE_BAR_WAIT, bars, true, stage, phase);
	w->note = "Wait for this iteration's copies.";
	push(x, body, w);
	Subst views = { .of = tc_alloc(x->a, sizeof(TcVar *) * (size_t)pp->ncopies),
			.view = tc_alloc(x->a, sizeof(TcVar *) * (size_t)pp->ncopies) };
	const TcVec *items = &loop->u.loop.body->u.block.body;
	stage_views(x, pp, body, stage, &views);
	TcStmt *rest = block(x);
	for (int i = pp->ncopies; i < items->len; i++)
		push(x, rest, clone_stmt(x->a, items->items[i], &views));
	TcStmt *g = cloned_gemm(rest, loop->u.loop.copies_in_gemm, items,
				pp->ncopies);
	bool in_flight = gemm_stays_in_flight(rest, g);
	TcStmt *issue = block(x);
	if (in_flight) {
		/* The gemm returns once iteration k - 1's group has
		 * completed, and issues the copies after that: that stage
		 * is released there, before the wait for every warp's. */
		g->u.gemm.wgmma_pending = 1;
		TcStmt *then = block(x);
		push(x, then, bar(x, TC_ST_STAGE_BAR_ARRIVE, bars, false,
				  next_stage, NULL));
		TcStmt *c = if_then(x, bin(x, TC_OP_GT, ref(x, k), num(x, 0)),
				    then);
		c->note = tc_fmt(x->a, "This warp's gemm of iteration %s - 1 "
				 "has completed: it is done with stage %s.",
				 k->name, next_stage->name);
		push(x, issue, c);
	}
	w = bar(x, TC_ST_STAGE_BAR_WAIT, bars, false, next_stage, next_phase);
	w->note = tc_fmt(x->a, "Every warp is done with stage %s (iteration %s - 1's).",
			 next_stage->name, k->name);
	push(x, issue, w);
	issue_strided(x, pp, plans, issue, next, next_stage, bars, true);
	g->u.gemm.issue = issue;
	for (int i = 0; i < rest->u.block.body.len; i++)
		push(x, body, rest->u.block.body.items[i]);
	if (!in_flight) {
		TcStmt *arrive = bar(x, TC_ST_STAGE_BAR_ARRIVE, bars, false,
				     stage, NULL);
		arrive->note = "This warp is done with its stage.";
		push(x, body, arrive);
	}
	push(x, body, assign(x, next_stage, ref(x, stage)));
	push(x, body, assign(x, next_phase, ref(x, phase)));
	rotate(x, body, stage, phase, S);
	push(x, blk, serial_for(x, k, ref(x, pp->end), body));
	if (in_flight) {
		TcStmt *done = simple(x, TC_ST_WGMMA_WAIT);
		done->u.wait.pending = 0;
		done->u.wait.acc = g->u.gemm.c.var;
		done->note = "The last iteration's gemm has completed.";
		push(x, blk, done);
	}

	TcStmt *drain = block(x);
	push(x, drain, bar(x, TC_ST_STAGE_BAR_WAIT, bars, true, stage, phase));
	rotate(x, drain, stage, phase, S);
	repeat(x, blk, pre, S - 1, drain, "The copies past the end have landed "
	       "(and arrived) before the block may exit.");
	return blk;
}

/* --- TMA ------------------------------------------------------------------------
 * An async copy of the mbarrier loop goes by TMA (--tma, a target with
 * it) when the hardware's box and swizzle are exactly what the tile's
 * readers expect: a 2-D tile of a dense tensor's innermost dim and one
 * other, into a swizzled shared tile whose rows are 32, 64 or 128 bytes
 * (or 128-byte column panels: one box per panel), each 8-row atom
 * aligned as the hardware swizzles by address bits.  Boxes are at most
 * 256 elements along a dim; coordinates are 32-bit, per dim (a tensor
 * indexed in 64 bits has 32-bit extents all the same). */

/* Why TMA cannot fill shared tile v (a clause), or NULL; *span gets the
 * bytes of a box row. */
static const char *
tma_tile_why(const Expand *x, const TcVar *v, int *span)
{
	long long rows, cols;
	if (v->rank != 2 || !tc_expr_const(v->shape[0], &rows) ||
	    !tc_expr_const(v->shape[1], &cols))
		return "the tile is not 2-D";
	if (!v->swizzle || v->pad)
		return "its shared tile is not swizzled (no gemm reads it)";
	long long e = tc_dtype_storage_bits(v->dtype) / 8;
	long long row = cols * e, s = row < 128 ? row : 128;
	if (!(row == 32 || row == 64 || row == 128 || (v->panels && row % 128 == 0)))
		return tc_fmt(x->a, "its rows are %lld bytes, not 32, 64 or 128 "
			      "(or 128-byte panels)", row);
	long long atom = 8 * s;
	if (rows % 8 || rows > 256 || s / e > 256)
		return tc_fmt(x->a, "a box of %lld rows is not whole 8-row atoms "
			      "of at most 256", rows);
	if (v->smem_offset < 0 || v->smem_offset % atom || rows * row % atom)
		return tc_fmt(x->a, "its stages are not %lld-byte aligned", atom);
	*span = (int)s;
	return NULL;
}

/* Why async copy c cannot go by TMA (a clause), or NULL; *span as
 * tma_tile_why's. */
static const char *
tma_why(const Expand *x, const TcStmt *c, int *span)
{
	const TcRegion *src = &c->u.copy.src;
	const TcVar *v = c->u.copy.dst.var, *t = src->var;
	if (t->kind != TC_VAR_TENSOR || t->dtype != v->dtype ||
	    tc_dtype_storage_bits(t->dtype) % 8)
		return "it converts, or its elements are not whole bytes";
	if (t->rank < 2 || t->rank > 5)
		return tc_fmt(x->a, "'%s' has rank %d, not 2 to 5", t->name, t->rank);
	for (int d = 0; d < t->rank; d++)
		if (t->shape[d]->dtype != TC_DT_I32)
			return tc_fmt(x->a, "'%s''s extents are not 32-bit (a "
				      "box's coordinates are)", t->name);
	if (src->ndims != 2 || src->dims[1] != t->rank - 1 ||
	    src->dims[0] >= t->rank - 1)
		return tc_fmt(x->a, "the tile's rows are not along '%s''s innermost "
			      "dim", t->name);
	if (src->rows || src->mask || src->bound[0] || src->bound[1])
		return "the region is ragged";
	return tma_tile_why(x, v, span);
}


/* Whether the copies of mbarrier loop pp may go by TMA: with --tma all;
 * by default those of a loop that keeps 3 or more stages for a wgmma
 * gemm, where it was measured to pay (docs/perf-gpu.md, 2026-12-02: with
 * 2 stages each copy has one gemm's time to land either way, and on
 * mma.sync the warps wait for thread 0's issue inside the gemm). */
static bool
tma_loop(const Expand *x, const Pipe *pp)
{
	const TcStmt *g = pp->loop->u.loop.copies_in_gemm;
	if (x->tma == TC_TMA_ALL)
		return true;
	return x->tma == TC_TMA_AUTO && pp->stages >= 3 && g && g->u.gemm.wgmma_n > 0;
}

/* The tensor map for async copy c of loop pp, made (or found) in
 * x->k->tmaps, or NULL when c stays STRIDED (a note says why, where the
 * loop's copies go by TMA). */
static TcTensorMap *
tma_map(const Expand *x, const Pipe *pp, const TcStmt *c)
{
	const TcVar *v = c->u.copy.dst.var, *t = c->u.copy.src.var;
	const TcRegion *src = &c->u.copy.src;
	int span = 0;
	if (!tma_loop(x, pp))
		return NULL;
	const char *why = tma_why(x, c, &span);
	if (why) {
		tc_diag(x->d, TC_NOTE, c->loc, "this tile_copy into '%s' stays "
			"cp.async, not TMA: %s", v->name, why);
		return NULL;
	}
	int bits = tc_dtype_storage_bits(t->dtype);
	long long rows;
	tc_expr_const(v->shape[0], &rows);
	TcTensorMap m = { .tensor = (TcVar *)t, .swizzle = span };
	for (int d = 0; d < t->rank; d++)
		m.box[d] = 1;
	m.box[src->dims[0]] = (int)rows;
	m.box[t->rank - 1] = span / (bits / 8);
	for (int i = 0; i < x->k->tmaps.len; i++) {
		TcTensorMap *o = x->k->tmaps.items[i];
		if (o->tensor == t && o->swizzle == span &&
		    memcmp(o->box, m.box, sizeof m.box) == 0)
			return o;
	}
	TcTensorMap *n = tc_alloc(x->a, sizeof *n);
	*n = m;
	n->name = new_var(x, TC_VAR_HANDLE, tc_fmt(x->a, "%s_map", t->name),
			  TC_DT_I32)->name;
	tc_vec_push(x->a, &x->k->tmaps, n);
	return n;
}

static bool
narrow_float(TcDtype t)
{
	return tc_dtype_is_float(t) && tc_dtype_bits(t) < 32;
}

/* The dtype register fragment v's prefetch copy holds, *stored when
 * it is the source's as memory stores it: for a two-dim blocked
 * fragment (tilec::Stored, runs of its columns as vectors), a narrow
 * float source (f16, bf16, fp8) whose every copy into v reads that
 * dtype, into a fragment of that dtype or of one that is no narrow
 * float (f32, integers), so converting on the rotation computes what
 * converting on the load did.  Then the prefetch's loads are neither
 * unpacked nor converted until the next iteration reads them, and
 * nothing waits for them before (a conversion would, at once). */
static TcDtype
prefetch_dtype(const Pipe *pp, const TcVar *v, bool *stored)
{
	TcDtype src = TC_DT_I32;
	bool first = true;
	*stored = false;
	if (v->rank != 2 || v->layout.kind != TC_LAYOUT_BLOCKED)
		return v->dtype;
	for (int i = 0; i < pp->ncopies; i++) {
		const TcStmt *c = async_copy_at(pp, i);
		if (c->u.copy.dst.var != v)
			continue;
		if (!first && c->u.copy.src.var->dtype != src)
			return v->dtype;
		src = c->u.copy.src.var->dtype;
		first = false;
	}
	if (first || !narrow_float(src) ||
	    (narrow_float(v->dtype) && v->dtype != src))
		return v->dtype;
	*stored = true;
	return src;
}

/* --- Warp specialization -------------------------------------------------------
 * On a target with TMA and wgmma, the mbarrier loop whose every copy goes
 * by TMA leaves its copies to a producer warpgroup the compiler adds
 * after the program's threads (kernel.producer_threads): one thread of it
 * issues iteration k's copies into stage k % S once every consumer warp
 * has released that stage (its empty barrier), and the program's threads
 * only wait for the stage's full barrier, multiply, and release the stage
 * once the wgmma that read it has retired.  The producer keeps few
 * registers (setmaxnreg), the consumers take the rest.  The kernel body
 * becomes
 *
 *   stage_bar_init k_bars ..., TMA's only
 *   barrier                                       every thread's
 *   roles producer threads T .. T + 128 (one thread) {
 *     <the declarations the copies need, as the body makes them>
 *     decl k_end; copy plans
 *     pipe_select aligned(...) {
 *       for k in 0 .. k_end { wait empty; the copies of k }
 *     }
 *   } consumer threads 0 .. T {
 *     <the body as before, the loop's fast path:
 *      for k in 0 .. k_end { wait full; gemm, releasing k - 1's stage }
 *      and its barriers the program's threads' only>
 *   }
 *
 * The author's program is unchanged; the launch gives T + 128 threads
 * (tc_abi_launch_threads).  One loop per kernel takes it, a statement of
 * the kernel body (not inside another loop or a branch) whose gemm is
 * wgmma's, with nothing before it in shared memory (its stage barriers
 * are set up first), and whose copies read only what declarations before
 * it make once.  Any other mbarrier loop with TMA copies gets a note. */

/* The register file of an SM, and what the producer warpgroup keeps. */
#define WS_REGISTERS 65536
#define WS_PRODUCER_REGS 40
#define WS_PRODUCER_THREADS 128

/* Registers per consumer thread with `blocks` blocks per SM: what the
 * launch gives every thread (ptxas's bound for that many blocks of all
 * of them, at most 255, whole 8s), less the producer's. */
static int
ws_consumer_regs(long long threads, int blocks)
{
	long long all = threads + WS_PRODUCER_THREADS;
	long long entry = WS_REGISTERS / (blocks * all);
	entry = (entry > 255 ? 255 : entry) / 8 * 8;
	long long regs = (entry * all - WS_PRODUCER_REGS * WS_PRODUCER_THREADS) /
			 threads / 8 * 8;
	return (int)(regs > 248 ? 248 : regs);
}

/* Blocks per SM the launch bounds promise: as many as the SM's shared
 * memory (the opt-in limit and a block's 1 KiB reserve) and its 2048
 * threads hold while each consumer thread keeps room for its share of
 * accumulator `acc` and 64 registers more; at least one. */
static int
ws_blocks(const Expand *x, const TcVar *acc)
{
	long long threads = tc_abi_threads(x->k, x->t);
	long long all = threads + WS_PRODUCER_THREADS, elems = 1, n;
	for (int d = 0; d < acc->rank; d++)
		elems *= tc_expr_const(acc->shape[d], &n) ? n : 1;
	long long need = elems / threads + 64;
	long long by_smem = (x->t->smem_limit + 1024) / (x->k->smem_bytes + 1024);
	int blocks = 1;
	for (int b = 2; b <= by_smem && b * all <= 2048; b++)
		if (ws_consumer_regs(threads, b) >= need)
			blocks = b;
	return blocks;
}

/* Whether statement s (recursively) is a barrier or touches a shared
 * buffer of the kernel. */
static bool
uses_shared(const Expand *x, const TcStmt *s)
{
	if (s->kind == TC_ST_BARRIER)
		return true;
	if (s->kind == TC_ST_DECL)
		return false;
	for (int i = 0; i < x->k->vars.len; i++) {
		const TcVar *v = x->k->vars.items[i];
		if (v->kind == TC_VAR_BUFFER && v->scope == TC_SCOPE_SHARED &&
		    tc_stmt_touches(s, NULL, v))
			return true;
	}
	if (s->kind == TC_ST_BLOCK)
		for (int i = 0; i < s->u.block.body.len; i++)
			if (uses_shared(x, s->u.block.body.items[i]))
				return true;
	return false;
}

/* Marks the vars expression e names in need[]. */
static void
need_vars(const Expand *x, const TcExpr *e, bool *need)
{
	for (int i = 0; e && i < x->k->vars.len; i++)
		if (tc_expr_mentions(e, x->k->vars.items[i]))
			need[i] = true;
}

/* Why loop pp (an mbarrier loop with `ntma` of its copies by TMA) cannot
 * be warp-specialized (a clause), or NULL; then keep[i] says which of
 * the kernel body's statements before it the producer repeats (the
 * declarations its copies need). */
static const char *
ws_why(const Expand *x, const Pipe *pp, int ntma, bool *keep)
{
	const TcStmt *loop = pp->loop, *g = loop->u.loop.copies_in_gemm;
	if (ntma < pp->ncopies)
		return "a copy of it stays cp.async";
	if (!g || g->u.gemm.wgmma_n == 0)
		return "its gemm is not wgmma's";
	if (x->ws->loop)
		return tc_fmt(x->a, "the loop at line %d has the kernel's producer "
			      "warpgroup", x->ws->loop->loc.line);
	if (x->ws->top < 0)
		return "it is inside another loop or a branch";
	long long threads = tc_abi_threads(x->k, x->t);
	if (threads % 128)
		return tc_fmt(x->a, "%lld threads are not whole warpgroups", threads);
	const TcVec *items = &x->k->body->u.block.body;
	bool *need = tc_alloc(x->a, sizeof(bool) * (size_t)(x->k->vars.len + 1));
	need_vars(x, loop->u.loop.end, need);
	for (int i = 0; i < pp->ncopies; i++) {
		const TcStmt *c = async_copy_at(pp, i);
		need[c->u.copy.dst.var->index] = true;
		for (int d = 0; d < c->u.copy.src.var->rank; d++) {
			need_vars(x, c->u.copy.src.origin[d], need);
			need_vars(x, c->u.copy.first[d], need);
		}
		need_vars(x, c->u.copy.advance, need);
	}
	need[loop->u.loop.var->index] = false;
	bool *made = tc_alloc(x->a, sizeof(bool) * (size_t)(x->k->vars.len + 1));
	for (int i = x->ws->top - 1; i >= 0; i--) {
		const TcStmt *s = items->items[i];
		if (uses_shared(x, s))
			return "shared memory is used before it (its stage barriers "
			       "are set up first)";
		if (s->kind == TC_ST_DECL && need[s->u.decl.var->index]) {
			const TcVar *v = s->u.decl.var;
			if (v->kind == TC_VAR_LOCAL && v->mutated)
				return tc_fmt(x->a, "its copies read '%s', which the "
					      "kernel assigns", v->name);
			for (int j = 0; j < x->k->vars.len; j++) {
				const TcVar *u = x->k->vars.items[j];
				if (u->kind == TC_VAR_BUFFER &&
				    tc_expr_touches(s->u.decl.init, u))
					return tc_fmt(x->a, "its copies read '%s', "
						      "made from buffer '%s'",
						      v->name, u->name);
			}
			need_vars(x, s->u.decl.init, need);
			made[v->index] = keep[i] = true;
		}
	}
	for (int i = 0; i < x->k->vars.len; i++) {
		const TcVar *v = x->k->vars.items[i];
		if (need[i] && !made[i] && (v->kind == TC_VAR_LOCAL ||
		    v->kind == TC_VAR_BUFFER || v->kind == TC_VAR_LOOP))
			return tc_fmt(x->a, "its copies read '%s', which no "
				      "declaration before it in the kernel body "
				      "makes", v->name);
	}
	return NULL;
}

/* The stage barriers of mbarrier loop pp, `copiers` threads arriving
 * after their cp.async copies, and one arrival per TMA copy. */
static TcStmt *
bars_init(const Expand *x, const Pipe *pp, TcVar *bars, long long copiers)
{
	TcStmt *init = simple(x, TC_ST_STAGE_BAR_INIT);
	long long threads = tc_abi_threads(x->k, x->t);
	init->u.bars.var = bars;
	init->u.bars.stages = (int)pp->stages;
	init->u.bars.offset = pp->loop->u.loop.barriers;
	init->u.bars.copiers = copiers;
	init->u.bars.full_arrivals = copiers;
	for (int i = 0; i < pp->ncopies; i++)
		init->u.bars.full_arrivals += pp->tmap[i] != NULL;
	init->u.bars.empty_arrivals = (threads + x->t->warp_size - 1) / x->t->warp_size;
	return init;
}

/* The producer's loop: iteration k's copies into stage k % S once every
 * consumer warp has released it. */
static TcStmt *
ws_producer_loop(const Expand *x, Pipe *pp, const TcVec *plans, TcVar *bars,
		 const char *stage_name, const char *phase_name)
{
	TcVar *k = pp->loop->u.loop.var;
	long long S = pp->stages;
	TcStmt *blk = block(x);
	TcVar *stage = tc_var_new(x->a, x->k, TC_VAR_LOCAL, stage_name, TC_DT_I32,
				  (TcLoc){ 0 });
	TcVar *phase = tc_var_new(x->a, x->k, TC_VAR_LOCAL, phase_name, TC_DT_I32,
				  (TcLoc){ 0 });
	stage->mutated = phase->mutated = true;
	TcStmt *d = decl(x, stage, num(x, 0));
	d->note = tc_fmt(x->a, "The stage iteration %s fills and its phase's parity.",
			 k->name);
	push(x, blk, d);
	push(x, blk, decl(x, phase, num(x, 0)));
	TcStmt *body = block(x);
	TcStmt *w = bar(x, TC_ST_STAGE_BAR_WAIT, bars, false, stage, NULL);
	w->u.bar.parity = bin(x, TC_OP_BXOR, ref(x, phase), num(x, 1));
	w->note = tc_fmt(x->a, "Every consumer warp is done with the stage "
			 "(iteration %s - %lld's; before the first phase, the "
			 "one before it counts as done).", k->name, S);
	push(x, body, w);
	issue_strided(x, pp, plans, body, k, stage, bars, false);
	rotate(x, body, stage, phase, S);
	push(x, blk, serial_for(x, k, ref(x, pp->end), body));
	x->ws->pring = blk;
	x->ws->pstate = 2;
	return blk;
}

/* The consumers' loop: wait for the stage's copies, run the body, and
 * release the stage once the gemm that read it has completed (from
 * inside the next iteration's gemm when it stays in flight). */
static TcStmt *
ws_consumer_loop(const Expand *x, Pipe *pp, TcVar *bars, TcVar *stage,
		 TcVar **phase_out)
{
	const TcStmt *loop = pp->loop;
	TcVar *k = loop->u.loop.var;
	long long S = pp->stages;
	TcStmt *blk = block(x);
	TcVar *prev = mutable_local(x, tc_fmt(x->a, "%s_prev_stage", k->name));
	TcVar *phase = mutable_local(x, tc_fmt(x->a, "%s_phase", k->name));
	*phase_out = phase;
	TcStmt *d = decl(x, stage, num(x, 0));
	d->note = tc_fmt(x->a, "This iteration's stage and its phase's parity; "
			 "iteration %s - 1's.", k->name);
	push(x, blk, d);
	push(x, blk, decl(x, prev, num(x, S - 1)));
	push(x, blk, decl(x, phase, num(x, 0)));
	TcStmt *body = block(x);
	TcStmt *w = bar(x, TC_ST_STAGE_BAR_WAIT, bars, true, stage, phase);
	w->note = "Wait for this iteration's copies (the producer's).";
	push(x, body, w);
	Subst views = { .of = tc_alloc(x->a, sizeof(TcVar *) * (size_t)pp->ncopies),
			.view = tc_alloc(x->a, sizeof(TcVar *) * (size_t)pp->ncopies) };
	const TcVec *items = &loop->u.loop.body->u.block.body;
	stage_views(x, pp, body, stage, &views);
	TcStmt *rest = block(x);
	for (int i = pp->ncopies; i < items->len; i++)
		push(x, rest, clone_stmt(x->a, items->items[i], &views));
	TcStmt *g = cloned_gemm(rest, loop->u.loop.copies_in_gemm, items,
				pp->ncopies);
	bool in_flight = gemm_stays_in_flight(rest, g);
	if (in_flight) {
		g->u.gemm.wgmma_pending = 1;
		TcStmt *then = block(x);
		push(x, then, bar(x, TC_ST_STAGE_BAR_ARRIVE, bars, false, prev, NULL));
		TcStmt *c = if_then(x, bin(x, TC_OP_GT, ref(x, k), num(x, 0)), then);
		c->note = tc_fmt(x->a, "This warp's gemm of iteration %s - 1 has "
				 "completed: it is done with stage %s.", k->name,
				 prev->name);
		TcStmt *issue = block(x);
		push(x, issue, c);
		g->u.gemm.issue = issue;
	}
	for (int i = 0; i < rest->u.block.body.len; i++)
		push(x, body, rest->u.block.body.items[i]);
	if (!in_flight) {
		TcStmt *arrive = bar(x, TC_ST_STAGE_BAR_ARRIVE, bars, false, stage,
				     NULL);
		arrive->note = "This warp is done with its stage.";
		push(x, body, arrive);
	}
	push(x, body, assign(x, prev, ref(x, stage)));
	rotate(x, body, stage, phase, S);
	push(x, blk, serial_for(x, k, ref(x, pp->end), body));
	if (in_flight) {
		TcStmt *done = simple(x, TC_ST_WGMMA_WAIT);
		done->u.wait.pending = 0;
		done->u.wait.acc = g->u.gemm.c.var;
		done->note = "The last iteration's gemm has completed.";
		push(x, blk, done);
	}
	x->ws->cring = blk;
	x->ws->cstate = 3;
	x->ws->prev = prev;
	x->ws->end = pp->end;
	x->ws->bars = bars;
	x->ws->in_flight = in_flight;
	return blk;
}

/* Warp specialization of loop pp, whose pipe_select `sel` the caller
 * made (its plans declared by the statements plans[0 .. n), its k_end
 * by `end`): sel's fast path becomes the consumers' loop, and x->ws
 * gets the producer block and the stage barriers' init, which
 * tc_expand_pipeline puts around the kernel body. */
static void
ws_split(const Expand *x, Pipe *pp, TcStmt *sel, TcStmt *const *plans, int n,
	 const TcStmt *end, const bool *keep, TcVar *stage)
{
	TcVar *k = pp->loop->u.loop.var;
	TcVar *bars = new_var(x, TC_VAR_HANDLE, tc_fmt(x->a, "%s_bars", k->name),
			      TC_DT_I32);
	TcStmt *init = bars_init(x, pp, bars, 0);
	init->note = tc_fmt(x->a, "The stage barriers of the loop at line %d, "
			    "whose copies a producer warpgroup issues.",
			    pp->loop->loc.line);
	TcVar *phase;
	sel->u.select.fast = ws_consumer_loop(x, pp, bars, stage, &phase);
	TcStmt *prod = block(x);
	Subst none = { 0 };
	const TcVec *items = &x->k->body->u.block.body;
	for (int i = 0; i < x->ws->top; i++)
		if (keep[i])
			push(x, prod, clone_stmt(x->a, items->items[i], &none));
	push(x, prod, clone_stmt(x->a, end, &none));
	for (int i = 0; i < n; i++) {
		TcStmt *plan = clone_stmt(x->a, plans[i], &none);
		plan->note = NULL;
		push(x, prod, plan);
	}
	TcStmt *psel = simple(x, TC_ST_PIPE_SELECT);
	psel->note = "Where the host built the tensor maps; otherwise the "
		     "program's threads copy for themselves.";
	psel->u.select.plans = sel->u.select.plans;
	psel->u.select.fast = ws_producer_loop(x, pp, &sel->u.select.plans, bars,
					       stage->name, phase->name);
	psel->u.select.fallback = block(x);
	push(x, prod, psel);
	x->ws->init = init;
	x->ws->producer = prod;
	x->ws->loop = pp->loop;
}

/* The kernel body around the warp-specialized loop's roles: its stage
 * barriers set up by every thread, then the producer's block and the
 * body as the consumers', whose barriers are theirs alone. */
static void
ws_barriers(TcStmt *s, long long threads)
{
	if (!s)
		return;
	switch (s->kind) {
	case TC_ST_BARRIER:
		s->u.barrier.threads = threads;
		break;
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++)
			ws_barriers(s->u.block.body.items[i], threads);
		break;
	case TC_ST_FOR:
		ws_barriers(s->u.loop.body, threads);
		break;
	case TC_ST_IF:
		ws_barriers(s->u.cond.then, threads);
		ws_barriers(s->u.cond.els, threads);
		break;
	case TC_ST_PIPE_SELECT:
		ws_barriers(s->u.select.fast, threads);
		ws_barriers(s->u.select.fallback, threads);
		break;
	case TC_ST_GEMM:
		ws_barriers(s->u.gemm.issue, threads);
		break;
	default:
		break;
	}
}

static void ws_persist(const Expand *x, TcStmt *roles);

static void
ws_roles(const Expand *x)
{
	long long threads = tc_abi_threads(x->k, x->t);
	TcStmt *roles = simple(x, TC_ST_ROLES);
	roles->note = tc_fmt(x->a, "Warp specialization: a producer warpgroup "
			     "after the program's %lld threads, one thread of "
			     "which issues the TMA copies of the loop at line "
			     "%d; the program's threads wait for them, multiply "
			     "and release each stage.", threads, x->ws->loop->loc.line);
	roles->u.roles.producer = x->ws->producer;
	roles->u.roles.consumer = x->k->body;
	roles->u.roles.threads = threads;
	roles->u.roles.producer_threads = WS_PRODUCER_THREADS;
	roles->u.roles.producer_regs = WS_PRODUCER_REGS;
	roles->u.roles.blocks = ws_blocks(x, x->ws->loop->u.loop.copies_in_gemm->u.gemm.c.var);
	roles->u.roles.consumer_regs = ws_consumer_regs(threads, roles->u.roles.blocks);
	ws_barriers(x->k->body, threads);
	TcStmt *body = block(x);
	push(x, body, x->ws->init);
	push(x, body, simple(x, TC_ST_BARRIER));
	push(x, body, roles);
	x->k->body = body;
	x->k->producer_threads = WS_PRODUCER_THREADS;
	x->k->producer_blocks = roles->u.roles.blocks;
	if (x->ws->persistent)
		ws_persist(x, roles);
}

/* The first n statements of block b, taken out of it. */
static TcStmt *
take_front(const Expand *x, TcStmt *b, int n)
{
	TcStmt *front = block(x);
	TcVec *items = &b->u.block.body;
	for (int i = 0; i < n; i++)
		push(x, front, items->items[i]);
	for (int i = n; i < items->len; i++)
		items->items[i - n] = items->items[i];
	items->len -= n;
	return front;
}

/* A role's block as a persistent one: the ring's state, then the walk
 * over the tiles, each running the rest. */
static TcStmt *
persist_role(const Expand *x, TcStmt *body, TcStmt *ring, int nstate,
	     const char *note)
{
	TcStmt *outer = take_front(x, ring, nstate);
	((TcStmt *)outer->u.block.body.items[0])->note = note;
	TcStmt *tiles = simple(x, TC_ST_TILES);
	tiles->u.tiles.body = body;
	push(x, outer, tiles);
	return outer;
}

/* With --persistent: the warp-specialized kernel launches one wave of
 * blocks (the device's SMs, read at launch (SMS), x the blocks an SM
 * holds, or fewer when there are fewer tiles), each walking the output
 * tiles the grid was, from its index in steps of the grid, in the
 * order tile_rasterize gives (TILES, in each role).  The stage ring
 * runs on across tiles: the producer fills the next tile's stages as
 * soon as the consumers release them, while they still store this
 * tile; the consumers release their last stage at the tile's end. */
static void
ws_persist(const Expand *x, TcStmt *roles)
{
	TcKernel *k = x->k;
	Ws *ws = x->ws;
	if (!k->grid[0] && !k->grid[1] && !k->grid[2]) {
		tc_diag(x->d, TC_NOTE, ws->loop->loc, "this kernel is not made "
			"persistent: its grid is one block");
		return;
	}
	long long threads = roles->u.roles.threads;
	TcStmt *cons = roles->u.roles.consumer;
	if (ws->in_flight) {
		TcStmt *then = block(x);
		push(x, then, bar(x, TC_ST_STAGE_BAR_ARRIVE, ws->bars, false,
				  ws->prev, NULL));
		TcStmt *c = if_then(x, bin(x, TC_OP_GT, ref(x, ws->end), num(x, 0)),
				    then);
		c->note = tc_fmt(x->a, "This warp is done with stage %s, the "
				 "last one: the producer may fill it with the "
				 "next tile's copies.", ws->prev->name);
		push(x, ws->cring, c);
	}
	TcStmt *sync = simple(x, TC_ST_BARRIER);
	sync->u.barrier.threads = threads;
	sync->note = "Every consumer is done with this tile's shared memory "
		     "before the next tile's copies without the producer "
		     "refill it.";
	push(x, cons, sync);
	roles->u.roles.producer = persist_role(x, roles->u.roles.producer,
		ws->pring, ws->pstate, "The stage and phase the next copies "
		"fill, from tile to tile.");
	roles->u.roles.consumer = persist_role(x, cons, ws->cring, ws->cstate,
		"The stage and phase the next iteration reads, from tile to "
		"tile; the last one read.");
	TcExpr *count = NULL;
	for (int d = 0; d < 3; d++) {
		k->tiles[d] = k->grid[d];
		k->grid[d] = NULL;
		if (k->tiles[d])
			count = count ? bin(x, TC_OP_MUL, count,
					    tc_expr_clone(x->a, k->tiles[d])) :
					tc_expr_clone(x->a, k->tiles[d]);
	}
	k->persistent = roles->u.roles.blocks;
	TcExpr *wave = tc_expr_new(x->a, TC_EX_SMS, TC_DT_I32, (TcLoc){ 0 });
	if (k->persistent > 1)
		wave = bin(x, TC_OP_MUL, wave, num(x, k->persistent));
	TcExpr *min = tc_expr_new(x->a, TC_EX_CALL, TC_DT_I32, (TcLoc){ 0 });
	min->u.call.fn = TC_FN_MIN;
	min->u.call.nargs = 2;
	min->u.call.args = tc_alloc(x->a, sizeof(TcExpr *) * 2);
	min->u.call.args[0] = count;
	min->u.call.args[1] = wave;
	k->grid[0] = min;
}

/* The statement that carries out pipelined loop `loop`. */
static TcStmt *
expand(const Expand *x, TcStmt *loop)
{
	Pipe pp = { .loop = loop, .ncopies = loop->u.loop.async_copies };
	size_t room = sizeof(void *) * (size_t)pp.ncopies;
	pp.reg = tc_alloc(x->a, room);
	pp.next = tc_alloc(x->a, room);
	pp.view_name = tc_alloc(x->a, room);
	pp.tmap = tc_alloc(x->a, room);
	tc_expr_const(loop->u.loop.stages, &pp.stages);
	TcVar *k = loop->u.loop.var;
	for (int i = 0; i < pp.ncopies; i++) {
		if (in_registers(async_copy_at(&pp, i)->u.copy.dst.var))
			pp.regs = true;
		else
			pp.smem = true;
	}
	TcStmt *blk = block(x);
	blk->loc = loop->loc;
	blk->u.block.cite = true;
	pp.end = new_var(x, TC_VAR_LOCAL, tc_fmt(x->a, "%s_end", k->name), TC_DT_I32);
	TcStmt *end = decl(x, pp.end, loop->u.loop.end);
	push(x, blk, end);
	if (pp.regs) {
		for (int i = 0; i < pp.ncopies; i++) {
			TcVar *v = async_copy_at(&pp, i)->u.copy.dst.var;
			if (!in_registers(v) || next_of(&pp, v))
				continue;
			TcVar *n = new_var(x, TC_VAR_BUFFER,
					   tc_fmt(x->a, "%s_next", v->name), v->dtype);
			int index = n->index;
			const char *name = n->name;
			bool stored;
			TcDtype dtype = prefetch_dtype(&pp, v, &stored);
			*n = *v;
			n->index = index;
			n->name = name;
			n->loc = (TcLoc){ 0 };
			n->dtype = dtype;
			n->stored = stored;
			TcStmt *d = decl(x, n, NULL);
			if (pp.nnext == 0)
				d->note = "Register fragments are loaded one iteration ahead.";
			push(x, blk, d);
			pp.reg[pp.nnext] = v;
			pp.next[pp.nnext++] = n;
		}
		TcStmt *then = block(x);
		issue_regs(x, &pp, then, num(x, 0));
		push(x, blk, if_then(x, bin(x, TC_OP_LT, num(x, 0), ref(x, pp.end)),
				     then));
	}
	TcVar *pre = new_var(x, TC_VAR_LOOP, tc_fmt(x->a, "%s_pre", k->name), TC_DT_I32);
	TcVar *next = new_var(x, TC_VAR_LOCAL, tc_fmt(x->a, "%s_next", k->name),
			      TC_DT_I32);
	TcVar *stage = new_var(x, TC_VAR_LOCAL, tc_fmt(x->a, "%s_stage", k->name),
			       TC_DT_I32);
	if (!(loop->u.loop.copies_in_gemm && pp.smem && !pp.regs)) {
		TcStmt **plans = loop->u.loop.copies_in_gemm ? NULL :
				 plain_plans(x, &pp, blk);
		expand_loop(x, &pp, blk, pre, next, stage, plans);
		return blk;
	}
	/* The mbarrier loop and the fallback share the bookkeeping names;
	 * its rotating stage is a var of its own (assigned each
	 * iteration). */
	TcVar *rot = tc_var_new(x->a, x->k, TC_VAR_LOCAL, stage->name, TC_DT_I32,
				(TcLoc){ 0 });
	rot->mutated = true;
	TcStmt *fallback = block(x);
	expand_loop(x, &pp, fallback, pre, next, stage, NULL);
	TcStmt *sel = simple(x, TC_ST_PIPE_SELECT);
	int ntma = 0;
	for (int i = 0; i < pp.ncopies; i++)
		ntma += (pp.tmap[i] = tma_map(x, &pp, async_copy_at(&pp, i))) != NULL;
	bool *keep = tc_alloc(x->a, sizeof(bool) * (size_t)(x->k->body->u.block.body.len + 1));
	bool ws = false;
	if (x->ws->on && ntma > 0) {
		const char *why = ws_why(x, &pp, ntma, keep);
		if (why)
			tc_diag(x->d, TC_NOTE, loop->loc, "this tile_pipelined loop "
				"is not warp-specialized: %s", why);
		ws = !why;
	}
	TcStmt **plans = tc_alloc(x->a, room);
	for (int i = 0; i < pp.ncopies; i++) {
		TcStmt *c = (TcStmt *)async_copy_at(&pp, i);
		TcStmt *plan = simple(x, TC_ST_COPY_PLAN);
		plan->u.plan.var = new_var(x, TC_VAR_HANDLE,
			tc_fmt(x->a, "%s_copy", c->u.copy.dst.var->name), TC_DT_I32);
		plan->u.plan.copy = c;
		plan->u.plan.tmap = pp.tmap[i];
		plans[i] = plan;
		if (i == 0 && ws)
			plan->note = tc_fmt(x->a,
				"The fast loop, where every tensor's rows are whole 16-byte "
				"vectors (tested once): the producer warpgroup issues the "
				"copies by TMA up to %lld iterations ahead, and the "
				"program's threads wait for each stage's copies; the "
				"hardware zero-fills past the tensor's edges.  Otherwise "
				"the loop below, without the producer.", pp.stages);
		else if (i == 0 && ntma == pp.ncopies)
			plan->note = tc_fmt(x->a,
				"The fast loop, where every tensor's rows are whole 16-byte "
				"vectors (tested once): thread 0 issues iteration %s + %lld's "
				"copies by TMA from inside the gemm, while the tensor cores "
				"work on this one; the hardware zero-fills past the tensor's "
				"edges.  Per-stage barriers, not a block barrier per "
				"iteration: a warp waits for its stage's copies, and before "
				"refilling a stage for the warps still reading it.  Otherwise "
				"the loop below.", k->name, pp.stages - 1);
		else if (i == 0)
			plan->note = tc_fmt(x->a,
				"The fast loop, where every tile is whole 16-byte vectors "
				"(tested once): each copy's per-thread addresses are computed "
				"here%s, and the gemm issues iteration %s + %lld's copies without "
				"branches from inside, while the tensor cores work on this "
				"one.  Per-stage barriers, not a block barrier per iteration: "
				"a warp waits for its stage's copies, and before refilling a "
				"stage for the warps still reading it.  Otherwise the loop "
				"below.", ntma ? " (those by TMA: thread 0's)" : "", k->name,
				pp.stages - 1);
		push(x, blk, plan);
		tc_vec_push(x->a, &sel->u.select.plans, plan->u.plan.var);
	}
	if (ws)
		ws_split(x, &pp, sel, plans, pp.ncopies, end, keep, rot);
	else
		sel->u.select.fast = fast_loop(x, &pp, &sel->u.select.plans, pre,
					       next, rot);
	sel->u.select.fallback = fallback;
	push(x, blk, sel);
	return blk;
}

/* Expand every pipelined loop with async copies in s, innermost first;
 * returns what replaces s. */
static TcStmt *
expand_stmt(const Expand *x, TcStmt *s)
{
	int top = x->ws->top;
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++) {
			if (s == x->k->body)
				x->ws->top = i;
			s->u.block.body.items[i] = expand_stmt(x, s->u.block.body.items[i]);
		}
		x->ws->top = top;
		return s;
	case TC_ST_IF:
		x->ws->top = -1;
		s->u.cond.then = expand_stmt(x, s->u.cond.then);
		if (s->u.cond.els)
			s->u.cond.els = expand_stmt(x, s->u.cond.els);
		x->ws->top = top;
		return s;
	case TC_ST_FOR:
		x->ws->top = -1;
		s->u.loop.body = expand_stmt(x, s->u.loop.body);
		x->ws->top = top;
		if (s->u.loop.kind == TC_LOOP_PIPELINED && s->u.loop.async_copies > 0)
			return expand(x, s);
		return s;
	default:
		return s;
	}
}

/* Whether opt asks for warp specialization where it fits: on a target
 * with TMA and wgmma, with --warp-specialize.  Off by default: on the
 * H200 it measured even or 0-4% ahead of the same loop without it, within
 * the runs' spread (docs/perf-gpu.md, 2026-12-03); it is the ground a
 * persistent tile scheduler would build on. */
bool
tc_ws_enabled(const TcOptions *opt)
{
	if (!opt->target.tma || !opt->target.wgmma || opt->wgmma == TC_WGMMA_OFF ||
	    opt->tma == TC_TMA_OFF)
		return false;
	return opt->ws == TC_WS_ON || opt->ws == TC_WS_PERSISTENT;
}

bool
tc_expand_pipeline(TcArena *a, TcProgram *p, const TcOptions *opt,
		   TcDiags *d)
{
	for (int i = 0; i < p->kernels.len; i++) {
		TcKernel *k = p->kernels.items[i];
		Ws ws = { .on = tc_ws_enabled(opt), .top = -1,
			  .persistent = opt->ws == TC_WS_PERSISTENT };
		Expand x = { a, p, k, &opt->target,
			     opt->target.tma ? opt->tma : TC_TMA_OFF, d, &ws };
		lower_copies(k->body);
		k->body = expand_stmt(&x, k->body);
		if (ws.producer)
			ws_roles(&x);
	}
	return true;
}
