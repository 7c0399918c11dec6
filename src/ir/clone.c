/*
 * clone.c - a deep copy of a parsed program, so one parse serves several
 * compilations (the reference the interpreter runs and each target
 * translation of `tilec run` and `tilec tune`).
 *
 * Input: a program as tc_parse returns it, before any pass (specialize
 * binds tunables and the passes rewrite kernels in place, so the copy is
 * taken first).  Output: the same program in arena a, every kernel, var,
 * statement and expression new; a var reference in the copy names the
 * copy's var (kernel vars by their index in kernel->vars, tunables by
 * their index in program->tunables).  Strings (names, the path, the
 * text) and tunable choice lists are shared with the original: its arena
 * must outlive the copy.
 */
#include "ir/tilec_int.h"

#include <string.h>

/* The vars of the copy, for mapping references. */
typedef struct Clone {
	TcArena *a;
	const TcProgram *from;
	TcProgram *to;
	const TcKernel *kfrom; /* the kernel being copied */
	TcKernel *kto;
} Clone;

static TcVar *
map_var(const Clone *c, const TcVar *v)
{
	if (!v)
		return NULL;
	if (v->kind == TC_VAR_TUNABLE) {
		tc_assert(v->index >= 0 && v->index < c->to->tunables.len &&
			  c->from->tunables.items[v->index] == v);
		return c->to->tunables.items[v->index];
	}
	tc_assert(c->kfrom && v->index >= 0 && v->index < c->kto->vars.len &&
		  c->kfrom->vars.items[v->index] == v);
	return c->kto->vars.items[v->index];
}

static TcExpr *
clone_expr(const Clone *c, const TcExpr *e)
{
	if (!e)
		return NULL;
	TcExpr *n = tc_alloc(c->a, sizeof *n);
	*n = *e;
	switch (e->kind) {
	case TC_EX_INT:
	case TC_EX_FLOAT:
	case TC_EX_SMS:
		break;
	case TC_EX_VAR:
		n->u.var = map_var(c, e->u.var);
		break;
	case TC_EX_BINARY:
		n->u.bin.lhs = clone_expr(c, e->u.bin.lhs);
		n->u.bin.rhs = clone_expr(c, e->u.bin.rhs);
		break;
	case TC_EX_UNARY:
		n->u.un.arg = clone_expr(c, e->u.un.arg);
		break;
	case TC_EX_SELECT:
		n->u.sel.cond = clone_expr(c, e->u.sel.cond);
		n->u.sel.then = clone_expr(c, e->u.sel.then);
		n->u.sel.els = clone_expr(c, e->u.sel.els);
		break;
	case TC_EX_CALL:
		n->u.call.args = tc_alloc(c->a, sizeof(TcExpr *) *
						   (size_t)(e->u.call.nargs + 1));
		for (int i = 0; i < e->u.call.nargs; i++)
			n->u.call.args[i] = clone_expr(c, e->u.call.args[i]);
		break;
	case TC_EX_CAST:
		n->u.cast.arg = clone_expr(c, e->u.cast.arg);
		break;
	case TC_EX_LOAD:
		n->u.load.var = map_var(c, e->u.load.var);
		for (int i = 0; i < TC_MAX_RANK; i++)
			n->u.load.idx[i] = clone_expr(c, e->u.load.idx[i]);
		break;
	case TC_EX_COUNT:
		tc_unreachable();
	}
	return n;
}

static void
clone_region(const Clone *c, TcRegion *to, const TcRegion *from)
{
	*to = *from;
	to->var = map_var(c, from->var);
	for (int i = 0; i < TC_MAX_RANK; i++) {
		to->origin[i] = clone_expr(c, from->origin[i]);
		to->bound[i] = clone_expr(c, from->bound[i]);
	}
	to->mask = from->mask ? map_var(c, from->mask) : NULL;
	to->rows = from->rows ? map_var(c, from->rows) : NULL;
}

static TcStmt *
clone_stmt(const Clone *c, const TcStmt *s)
{
	if (!s)
		return NULL;
	TcStmt *n = tc_alloc(c->a, sizeof *n);
	*n = *s;
	switch (s->kind) {
	case TC_ST_BLOCK:
		memset(&n->u.block.body, 0, sizeof n->u.block.body);
		for (int i = 0; i < s->u.block.body.len; i++)
			tc_vec_push(c->a, &n->u.block.body,
				    clone_stmt(c, s->u.block.body.items[i]));
		break;
	case TC_ST_DECL:
		n->u.decl.var = map_var(c, s->u.decl.var);
		n->u.decl.init = clone_expr(c, s->u.decl.init);
		break;
	case TC_ST_ASSIGN:
		n->u.assign.dst = clone_expr(c, s->u.assign.dst);
		n->u.assign.value = clone_expr(c, s->u.assign.value);
		break;
	case TC_ST_FOR:
		/* The schedule fields (anchor, threads, async copies,
		 * copies_in_gemm, barriers) are the passes'; a parsed
		 * program has none. */
		tc_assert(!s->u.loop.anchor && !s->u.loop.copies_in_gemm &&
			  !s->u.loop.row_vec);
		n->u.loop.var = map_var(c, s->u.loop.var);
		n->u.loop.begin = clone_expr(c, s->u.loop.begin);
		n->u.loop.end = clone_expr(c, s->u.loop.end);
		n->u.loop.step = clone_expr(c, s->u.loop.step);
		n->u.loop.stages = clone_expr(c, s->u.loop.stages);
		n->u.loop.body = clone_stmt(c, s->u.loop.body);
		break;
	case TC_ST_IF:
		n->u.cond.cond = clone_expr(c, s->u.cond.cond);
		n->u.cond.then = clone_stmt(c, s->u.cond.then);
		n->u.cond.els = clone_stmt(c, s->u.cond.els);
		break;
	case TC_ST_COPY:
	case TC_ST_ATOMIC_ADD:
		clone_region(c, &n->u.copy.dst, &s->u.copy.dst);
		clone_region(c, &n->u.copy.src, &s->u.copy.src);
		for (int i = 0; i < TC_MAX_RANK; i++)
			n->u.copy.first[i] = clone_expr(c, s->u.copy.first[i]);
		n->u.copy.advance = clone_expr(c, s->u.copy.advance);
		break;
	case TC_ST_GEMM:
		clone_region(c, &n->u.gemm.c, &s->u.gemm.c);
		clone_region(c, &n->u.gemm.a, &s->u.gemm.a);
		clone_region(c, &n->u.gemm.b, &s->u.gemm.b);
		n->u.gemm.issue = clone_stmt(c, s->u.gemm.issue);
		n->u.gemm.b_from = clone_stmt(c, s->u.gemm.b_from);
		break;
	case TC_ST_FILL:
		clone_region(c, &n->u.fill.dst, &s->u.fill.dst);
		n->u.fill.value = clone_expr(c, s->u.fill.value);
		break;
	case TC_ST_REDUCE:
		clone_region(c, &n->u.reduce.dst, &s->u.reduce.dst);
		clone_region(c, &n->u.reduce.src, &s->u.reduce.src);
		break;
	case TC_ST_REDUCE_ALL:
		n->u.reduce_all.dst = map_var(c, s->u.reduce_all.dst);
		clone_region(c, &n->u.reduce_all.src, &s->u.reduce_all.src);
		break;
	case TC_ST_ARG_REDUCE:
		clone_region(c, &n->u.arg_reduce.dst, &s->u.arg_reduce.dst);
		clone_region(c, &n->u.arg_reduce.index, &s->u.arg_reduce.index);
		clone_region(c, &n->u.arg_reduce.src, &s->u.arg_reduce.src);
		break;
	case TC_ST_BARRIER:
		break;
	case TC_ST_ASYNC_COPY:
	case TC_ST_PREFETCH:
	case TC_ST_COMMIT_GROUP:
	case TC_ST_WAIT_GROUP:
	case TC_ST_WGMMA_WAIT:
	case TC_ST_STAGE_VIEW:
	case TC_ST_COPY_PLAN:
	case TC_ST_PIPE_SELECT:
	case TC_ST_STAGE_BAR_INIT:
	case TC_ST_STAGE_BAR_ARRIVE:
	case TC_ST_STAGE_BAR_WAIT:
	case TC_ST_ROLES:
	case TC_ST_TILES:
	case TC_ST_COUNT:
		/* Made by expand_pipeline and cpu_prefetch, after any copy
		 * is taken. */
		tc_unreachable();
	}
	return n;
}

static TcKernel *
clone_kernel(Clone *c, const TcKernel *k)
{
	TcKernel *n = tc_alloc(c->a, sizeof *n);
	*n = *k;
	c->kfrom = k;
	c->kto = n;
	/* The vars first, so every reference has its target; then what
	 * their fields refer to. */
	memset(&n->vars, 0, sizeof n->vars);
	for (int i = 0; i < k->vars.len; i++) {
		TcVar *v = tc_alloc(c->a, sizeof *v);
		*v = *(const TcVar *)k->vars.items[i];
		tc_vec_push(c->a, &n->vars, v);
	}
	for (int i = 0; i < k->vars.len; i++) {
		TcVar *v = n->vars.items[i];
		for (int j = 0; j < TC_MAX_RANK; j++)
			v->shape[j] = clone_expr(c, v->shape[j]);
	}
	memset(&n->params, 0, sizeof n->params);
	for (int i = 0; i < k->params.len; i++)
		tc_vec_push(c->a, &n->params, map_var(c, k->params.items[i]));
	n->threads = clone_expr(c, k->threads);
	for (int d = 0; d < 3; d++) {
		n->grid[d] = clone_expr(c, k->grid[d]);
		n->block[d] = map_var(c, k->block[d]);
	}
	n->rasterize = clone_expr(c, k->rasterize);
	for (int d = 0; d < 3; d++)
		n->tiles[d] = clone_expr(c, k->tiles[d]);
	n->body = clone_stmt(c, k->body);
	c->kfrom = NULL;
	c->kto = NULL;
	return n;
}

TcProgram *
tc_program_clone(TcArena *a, const TcProgram *p)
{
	Clone c = { .a = a, .from = p };
	TcProgram *n = tc_alloc(a, sizeof *n);
	*n = *p;
	c.to = n;
	memset(&n->tunables, 0, sizeof n->tunables);
	for (int i = 0; i < p->tunables.len; i++) {
		TcVar *v = tc_alloc(a, sizeof *v);
		*v = *(const TcVar *)p->tunables.items[i];
		tc_vec_push(a, &n->tunables, v);
	}
	/* A tunable's shape is empty (it is a scalar); nothing to map. */
	memset(&n->kernels, 0, sizeof n->kernels);
	for (int i = 0; i < p->kernels.len; i++)
		tc_vec_push(a, &n->kernels, clone_kernel(&c, p->kernels.items[i]));
	return n;
}
