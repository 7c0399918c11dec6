/*
 * operands.c - the operand expressions of tile ops that read buffer
 * elements, evaluated once before the op.
 *
 * Input: a checked program (any target).  Output: the same program where
 * every tile op's expression (tile_fill's value, a region's origin) that
 * reads an element of a fragment or local buffer, or of a buffer the op
 * writes, is a LOCAL declared just before the op, initialized with that
 * expression, as if the program had written
 *
 *     float x_value = x[0][0] + 1.0f;
 *     tile_fill(x, x_value);
 *
 * A tile op's value is one value for the whole op (interp.c evaluates it
 * once), but the backends spread the op over loops and threads:
 *
 *   - the CPU fill loop evaluated the expression per element, and so
 *     read the x[0][0] it had already overwritten;
 *   - on the GPU targets every thread evaluates it while the others
 *     write, and the emitters name an element of a register fragment
 *     only inside the tile_parallel loops that own it (an internal
 *     error at block level).
 *
 * As a declaration the read is what layout.c knows, an element read at
 * block level (the fragment goes to shared memory), and barrier.c orders
 * it before the op's writes.  Reads of other shared buffers and of
 * tensors stay in place, where every thread can evaluate them and the
 * output reads as the program was written.
 *
 * The locals this pass makes get names no var of the kernel and no
 * tunable has (tc_fresh_name).
 */
#include "passes/passes.h"

typedef struct Operands {
	TcArena *a;
	TcKernel *k;
	const TcProgram *p;    /* its tunables: names taken too */
	TcVec *out;            /* the statements of the block being rebuilt */
	const TcVar *writes[2]; /* the buffers the op being looked at writes
				   (NULL where fewer) */
	bool found;            /* an expression reads what must be hoisted */
} Operands;

static TcVisit
find_read(void *ctx, const TcExpr *e)
{
	Operands *O = ctx;
	if (e->kind != TC_EX_LOAD || e->u.load.var->kind != TC_VAR_BUFFER)
		return TC_VISIT_INTO;
	const TcVar *v = e->u.load.var;
	if (v->scope != TC_SCOPE_SHARED || v == O->writes[0] ||
	    v == O->writes[1]) {
		O->found = true;
		return TC_VISIT_STOP;
	}
	return TC_VISIT_INTO;
}

/* *e, when it reads an element of a fragment or local buffer or of one
 * the op writes (O->writes): a LOCAL named after base, declared (in
 * O->out) with *e's value, in its place. */
static void
hoist(Operands *O, TcExpr **e, const char *base)
{
	TcVisitor v = { .expr = find_read, .ctx = O };
	if (!*e)
		return;
	O->found = false;
	tc_expr_visit(*e, &v);
	if (!O->found)
		return;
	TcVar *t = tc_var_new(O->a, O->k, TC_VAR_LOCAL, tc_fresh_name(O->a, O->p, O->k, base),
			      (*e)->dtype, (*e)->loc);
	TcStmt *d = tc_stmt_new(O->a, TC_ST_DECL, (*e)->loc);
	d->u.decl.var = t;
	d->u.decl.init = *e;
	tc_vec_push(O->a, O->out, d);
	*e = tc_expr_var(O->a, t, (*e)->loc);
}

/* A region's origin indices, each as `VAR_at`. */
static void
hoist_region(Operands *O, TcRegion *r)
{
	for (int i = 0; i < r->var->rank; i++)
		hoist(O, &r->origin[i], tc_fmt(O->a, "%s_at", r->var->name));
}

static void hoist_block(Operands *O, TcStmt *block);

/* Tile op s's operand expressions, hoisted into O->out ahead of it; the
 * blocks inside a loop or branch, each rebuilt on its own. */
static void
hoist_stmt(Operands *O, TcStmt *s)
{
	O->writes[0] = O->writes[1] = NULL;
	switch (s->kind) {
	case TC_ST_BLOCK: hoist_block(O, s); break;
	case TC_ST_FOR: hoist_block(O, s->u.loop.body); break;
	case TC_ST_IF:
		hoist_block(O, s->u.cond.then);
		if (s->u.cond.els)
			hoist_block(O, s->u.cond.els);
		break;
	case TC_ST_FILL:
		O->writes[0] = s->u.fill.dst.var;
		hoist_region(O, &s->u.fill.dst);
		hoist(O, &s->u.fill.value, tc_fmt(O->a, "%s_value",
						  s->u.fill.dst.var->name));
		break;
	case TC_ST_COPY:
	case TC_ST_ATOMIC_ADD:
		O->writes[0] = s->u.copy.dst.var;
		hoist_region(O, &s->u.copy.dst);
		hoist_region(O, &s->u.copy.src);
		break;
	case TC_ST_GEMM:
		O->writes[0] = s->u.gemm.c.var;
		hoist_region(O, &s->u.gemm.c);
		hoist_region(O, &s->u.gemm.a);
		hoist_region(O, &s->u.gemm.b);
		break;
	case TC_ST_REDUCE:
		O->writes[0] = s->u.reduce.dst.var;
		hoist_region(O, &s->u.reduce.dst);
		hoist_region(O, &s->u.reduce.src);
		break;
	case TC_ST_REDUCE_ALL:
		hoist_region(O, &s->u.reduce_all.src);
		break;
	case TC_ST_ARG_REDUCE:
		O->writes[0] = s->u.arg_reduce.dst.var;
		O->writes[1] = s->u.arg_reduce.index.var;
		hoist_region(O, &s->u.arg_reduce.dst);
		hoist_region(O, &s->u.arg_reduce.index);
		hoist_region(O, &s->u.arg_reduce.src);
		break;
	default:
		break;
	}
}

/* BLOCK block, rebuilt with the hoisted declarations before their ops. */
static void
hoist_block(Operands *O, TcStmt *block)
{
	TcVec *outer = O->out;
	TcVec body = { 0 };
	O->out = &body;
	for (int i = 0; i < block->u.block.body.len; i++) {
		TcStmt *s = block->u.block.body.items[i];
		hoist_stmt(O, s);
		tc_vec_push(O->a, &body, s);
	}
	block->u.block.body = body;
	O->out = outer;
}

bool
tc_operands(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d)
{
	(void)opt;
	(void)d;
	for (int i = 0; i < p->kernels.len; i++) {
		Operands O = { .a = a, .k = p->kernels.items[i], .p = p };
		hoist_block(&O, O.k->body);
	}
	return true;
}
