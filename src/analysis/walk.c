/*
 * walk.c - one statement walk for every pass and printer that visits a
 * kernel's statements with the parallel loops around them (walk.h).
 *
 * Input: a statement tree.  Output: callbacks, in program order; nothing
 * is rewritten here (a callback may rewrite the statement it is given,
 * not the tree's shape).
 */
#include "analysis/walk.h"

void
tc_walk_stmts(TcStmt *s, int par_depth, TcStmtFn fn, void *ctx)
{
	if (!s)
		return;
	fn(ctx, s, par_depth);
	switch (s->kind) {
	case TC_ST_BLOCK:
		for (int i = 0; i < s->u.block.body.len; i++)
			tc_walk_stmts(s->u.block.body.items[i], par_depth, fn,
				      ctx);
		break;
	case TC_ST_FOR:
		tc_walk_stmts(s->u.loop.body,
			      par_depth + (s->u.loop.kind == TC_LOOP_PARALLEL),
			      fn, ctx);
		break;
	case TC_ST_IF:
		tc_walk_stmts(s->u.cond.then, par_depth, fn, ctx);
		tc_walk_stmts(s->u.cond.els, par_depth, fn, ctx);
		break;
	case TC_ST_PIPE_SELECT:
		tc_walk_stmts(s->u.select.fast, par_depth, fn, ctx);
		tc_walk_stmts(s->u.select.fallback, par_depth, fn, ctx);
		break;
	case TC_ST_ROLES:
		tc_walk_stmts(s->u.roles.producer, par_depth, fn, ctx);
		tc_walk_stmts(s->u.roles.consumer, par_depth, fn, ctx);
		break;
	case TC_ST_TILES:
		tc_walk_stmts(s->u.tiles.body, par_depth, fn, ctx);
		break;
	case TC_ST_GEMM:
		tc_walk_stmts(s->u.gemm.issue, par_depth, fn, ctx);
		break;
	default:
		break;
	}
}

static void
hide_parallel_names(void *ctx, TcStmt *s, int par_depth)
{
	bool *visible = ctx;
	if (s->kind == TC_ST_DECL && par_depth > 0)
		visible[s->u.decl.var->index] = false;
	if (s->kind == TC_ST_FOR &&
	    (s->u.loop.kind == TC_LOOP_PARALLEL || par_depth > 0))
		visible[s->u.loop.var->index] = false;
}

void
tc_walk_block_visible(const TcKernel *k, bool *visible)
{
	for (int v = 0; v <= k->vars.len; v++)
		visible[v] = true;
	tc_walk_stmts(k->body, 0, hide_parallel_names, visible);
}
