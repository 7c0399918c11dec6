/*
 * decide.c - a block with some of its tests decided, folded (decide.h).
 */
#include "analysis/decide.h"

#include "analysis/walk.h"

#include <string.h>

static bool
const_truth(const TcDecider *D, const TcExpr *e, bool *v)
{
	long long c;
	if ((e->kind != TC_EX_INT && !D->constants) || !tc_expr_const(e, &c))
		return false;
	*v = c != 0;
	return true;
}

/* A literal truth value that replaces e. */
static TcExpr *
truth(TcDecider *D, bool v, const TcExpr *e)
{
	D->changed = true;
	return tc_expr_int(D->a, v, e->loc);
}

/* What replaces e: a subexpression of it that it folds to. */
static TcExpr *
folded(TcDecider *D, TcExpr *to)
{
	D->changed = true;
	return to;
}

static bool
is_comparison(TcBinop op)
{
	return op == TC_OP_LT || op == TC_OP_LE || op == TC_OP_GT ||
	       op == TC_OP_GE || op == TC_OP_EQ || op == TC_OP_NE;
}

TcExpr *
tc_decide_expr(TcDecider *D, const TcExpr *e)
{
	if (!e)
		return NULL;
	TcExpr *c = tc_expr_clone(D->a, e);
	bool v = false, w = false;
	switch (e->kind) {
	case TC_EX_VAR:
		if (D->known && e->u.var->index >= 0 &&
		    e->u.var->index < D->nvars && D->known[e->u.var->index])
			return folded(D, tc_expr_clone(D->a,
						       D->known[e->u.var->index]));
		return c;
	case TC_EX_BINARY: {
		const TcExpr *l = e->u.bin.lhs, *r = e->u.bin.rhs;
		if (is_comparison(e->u.bin.op)) {
			int t = D->decide(D->ctx, e);
			if (t >= 0)
				return truth(D, t != 0, e);
		}
		c->u.bin.lhs = tc_decide_expr(D, l);
		c->u.bin.rhs = tc_decide_expr(D, r);
		bool lc = const_truth(D, c->u.bin.lhs, &v);
		bool rc = const_truth(D, c->u.bin.rhs, &w);
		bool logic = e->u.bin.op == TC_OP_LAND || e->u.bin.op == TC_OP_LOR;
		if (e->u.bin.op == TC_OP_LAND && ((lc && !v) || (rc && !w)))
			return truth(D, false, e);
		if (e->u.bin.op == TC_OP_LOR && ((lc && v) || (rc && w)))
			return truth(D, true, e);
		if (logic && lc)
			return folded(D, c->u.bin.rhs);
		if (logic && rc)
			return folded(D, c->u.bin.lhs);
		return c;
	}
	case TC_EX_UNARY:
		c->u.un.arg = tc_decide_expr(D, e->u.un.arg);
		if (e->u.un.op == TC_UOP_NOT && const_truth(D, c->u.un.arg, &v))
			return truth(D, !v, e);
		return c;
	case TC_EX_SELECT:
		c->u.sel.cond = tc_decide_expr(D, e->u.sel.cond);
		if (const_truth(D, c->u.sel.cond, &v))
			return folded(D, tc_decide_expr(D, v ? e->u.sel.then
							     : e->u.sel.els));
		c->u.sel.then = tc_decide_expr(D, e->u.sel.then);
		c->u.sel.els = tc_decide_expr(D, e->u.sel.els);
		return c;
	case TC_EX_CALL:
		for (int i = 0; i < e->u.call.nargs; i++)
			c->u.call.args[i] = tc_decide_expr(D, e->u.call.args[i]);
		return c;
	case TC_EX_CAST:
		c->u.cast.arg = tc_decide_expr(D, e->u.cast.arg);
		/* A truth value cast to bool or i32 is that value
		 * (`(bool)(1)`, `(i32)keep` once keep is known). */
		long long k;
		if ((e->dtype == TC_DT_BOOL || e->dtype == TC_DT_I32) &&
		    c->u.cast.arg->kind == TC_EX_INT &&
		    tc_expr_const(c->u.cast.arg, &k) && (k == 0 || k == 1))
			return folded(D, c->u.cast.arg);
		return c;
	default:
		return c;
	}
}

void
tc_decide_block(TcDecider *D, const TcStmt *s, TcStmt *out)
{
	for (int i = 0; i < s->u.block.body.len; i++) {
		const TcStmt *st = s->u.block.body.items[i];
		TcStmt *c = tc_alloc(D->a, sizeof *c);
		*c = *st;
		bool v;
		switch (st->kind) {
		case TC_ST_DECL: {
			c->u.decl.init = tc_decide_expr(D, st->u.decl.init);
			const TcVar *x = st->u.decl.var;
			long long k;
			if (D->locals && x->kind == TC_VAR_LOCAL && c->u.decl.init &&
			    c->u.decl.init->kind == TC_EX_INT &&
			    tc_expr_const(c->u.decl.init, &k) &&
			    x->index >= 0 && x->index < D->nvars &&
			    D->fixed[x->index]) {
				D->known[x->index] = c->u.decl.init;
				D->changed = true;
				continue;
			}
			break;
		}
		case TC_ST_ASSIGN:
			c->u.assign.value = tc_decide_expr(D, st->u.assign.value);
			/* x = cond ? x : y with cond known: nothing left. */
			if (tc_expr_equal(c->u.assign.value, st->u.assign.dst)) {
				D->changed = true;
				continue;
			}
			break;
		case TC_ST_IF:
			c->u.cond.cond = tc_decide_expr(D, st->u.cond.cond);
			if (const_truth(D, c->u.cond.cond, &v)) {
				D->changed = true;
				if (v)
					tc_decide_block(D, st->u.cond.then, out);
				else if (st->u.cond.els)
					tc_decide_block(D, st->u.cond.els, out);
				continue;
			}
			c->u.cond.then = tc_stmt_new(D->a, TC_ST_BLOCK, st->loc);
			tc_decide_block(D, st->u.cond.then, c->u.cond.then);
			if (st->u.cond.els) {
				c->u.cond.els =
					tc_stmt_new(D->a, TC_ST_BLOCK, st->loc);
				tc_decide_block(D, st->u.cond.els,
						c->u.cond.els);
			}
			break;
		case TC_ST_FOR:
			if (!D->locals)
				break;
			c->u.loop.body = tc_stmt_new(D->a, TC_ST_BLOCK,
						     st->u.loop.body->loc);
			tc_decide_block(D, st->u.loop.body, c->u.loop.body);
			break;
		default:
			break;
		}
		tc_vec_push(D->a, &out->u.block.body, c);
	}
}

static void
mark_assigned(void *ctx, TcStmt *s, int par_depth)
{
	bool *fixed = ctx;
	(void)par_depth;
	if (s->kind == TC_ST_ASSIGN && s->u.assign.dst->kind == TC_EX_VAR &&
	    s->u.assign.dst->u.var->index >= 0)
		fixed[s->u.assign.dst->u.var->index] = false;
}

void
tc_decide_locals(TcDecider *D, const TcKernel *k)
{
	D->nvars = k->vars.len;
	D->known = tc_alloc(D->a, sizeof *D->known * (size_t)(k->vars.len + 1));
	memset(D->known, 0, sizeof *D->known * (size_t)(k->vars.len + 1));
	bool *fixed = tc_alloc(D->a, sizeof *fixed * (size_t)(k->vars.len + 1));
	for (int i = 0; i < k->vars.len; i++)
		fixed[i] = ((const TcVar *)k->vars.items[i])->kind == TC_VAR_LOCAL;
	tc_walk_stmts(k->body, 0, mark_assigned, fixed);
	D->fixed = fixed;
}

typedef struct Unused {
	const TcStmt *root;
	bool dropped;
} Unused;

static void
drop_in_block(void *ctx, TcStmt *s, int par_depth)
{
	Unused *U = ctx;
	(void)par_depth;
	if (s->kind != TC_ST_BLOCK)
		return;
	TcVec *list = &s->u.block.body;
	int n = 0;
	for (int i = 0; i < list->len; i++) {
		TcStmt *d = list->items[i];
		if (d->kind == TC_ST_DECL && d->u.decl.var->kind == TC_VAR_LOCAL &&
		    !tc_stmt_mentions(U->root, d->u.decl.var)) {
			U->dropped = true;
			continue;
		}
		list->items[n++] = d;
	}
	list->len = n;
}

bool
tc_decide_drop_unused(TcDecider *D, TcStmt *s)
{
	(void)D;
	bool any = false;
	for (;;) {
		Unused U = { .root = s };
		tc_walk_stmts(s, 0, drop_in_block, &U);
		if (!U.dropped)
			return any;
		any = true;
	}
}
