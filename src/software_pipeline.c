/*
 * software_pipeline.c - turn tile_pipelined loops into multi-stage copy
 * pipelines on GPU targets.
 *
 * Input: laid-out IR.  Output: for each tile_pipelined(k, n, S) loop whose
 * body starts with copies from tensors, loop.async_copies counts those
 * leading copies.  A shared destination gets S stages (var->stages): the
 * emitter issues the copies of iteration k + S - 1 while iteration k
 * computes (cp.async on sm_80 and later), with one wait and one barrier per
 * iteration.  A register destination is prefetched one iteration ahead into
 * a second copy of the fragment, so its loads are in flight while the
 * iteration before computes.
 *
 * A copy joins the pipeline only when that cannot change what the program
 * computes: its destination is a whole shared buffer used nowhere outside
 * the loop, element types match (the copy moves bytes), and its origin
 * reads only the loop variable and values the loop does not change.
 */
#include "tilec_int.h"

/* May this origin expression be evaluated stages - 1 iterations early? */
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
	default: return false;
	}
}

static bool
in_registers(const TcVar *v)
{
	return v->kind == TC_VAR_BUFFER && (v->layout.kind == TC_LAYOUT_MMA ||
					    v->layout.kind == TC_LAYOUT_BLOCKED);
}

/* A leading copy joins the pipeline when issuing it early cannot change
 * what the loop computes.  Into shared memory (async, multi-buffered): a
 * whole buffer used nowhere outside the loop, one element type.  Into a
 * register fragment (prefetched into a second copy of it): any whole
 * fragment, since the prefetch lands in a copy of its own. */
static bool
joins_pipeline(const TcKernel *k, const TcStmt *loop, const TcStmt *s)
{
	if (s->kind != TC_ST_COPY)
		return false;
	const TcRegion *dst = &s->u.copy.dst, *src = &s->u.copy.src;
	if (!dst->whole || src->var->kind != TC_VAR_TENSOR ||
	    tc_dtype_bits(dst->var->dtype) < 8 ||
	    tc_dtype_bits(src->var->dtype) < 8)
		return false;
	for (int i = 0; i < src->var->rank; i++)
		if (!hoistable(src->origin[i], loop->u.loop.var))
			return false;
	/* Reading the source early must not overtake a write to it. */
	if (tc_stmt_touches(loop->u.loop.body, NULL, src->var) & TC_ROLE_WRITE)
		return false;
	if (in_registers(dst->var))
		return true;
	if (dst->var->scope != TC_SCOPE_SHARED || src->var->dtype != dst->var->dtype)
		return false;
	return !tc_stmt_touches(k->body, loop, dst->var);
}

static void
pipeline_stmt(const TcKernel *k, TcStmt *s)
{
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++)
			pipeline_stmt(k, s->u.block.body.items[i]);
		break;
	case TC_ST_IF:
		pipeline_stmt(k, s->u.cond.then);
		if (s->u.cond.els)
			pipeline_stmt(k, s->u.cond.els);
		break;
	case TC_ST_FOR: {
		pipeline_stmt(k, s->u.loop.body);
		long long stages = 1;
		if (s->u.loop.kind != TC_LOOP_PIPELINED ||
		    !tc_expr_const(s->u.loop.stages, &stages) || stages < 2)
			break;
		TcVec *body = &s->u.loop.body->u.block.body;
		int n = 0;
		while (n < body->len && joins_pipeline(k, s, body->items[n]))
			n++;
		s->u.loop.async_copies = n;
		for (int i = 0; i < n; i++) {
			TcVar *dst = ((TcStmt *)body->items[i])->u.copy.dst.var;
			if (!in_registers(dst))
				dst->stages = (int)stages;
		}
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
	(void)a;
	(void)d;
	for (int i = 0; i < p->kernels.len; i++) {
		TcKernel *k = p->kernels.items[i];
		for (int j = 0; j < k->vars.len; j++) {
			TcVar *v = k->vars.items[j];
			if (v->kind == TC_VAR_BUFFER)
				v->stages = 1;
		}
		/* cp.async exists from sm_80; other targets copy in order. */
		if (opt->target.kind == TC_TARGET_CUDA)
			pipeline_stmt(k, k->body);
	}
	return true;
}
