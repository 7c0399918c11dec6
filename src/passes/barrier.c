/*
 * barrier.c - block-wide barriers where threads share memory (GPU targets).
 *
 * Input: scheduled IR.  Output: BARRIER statements inserted so that a
 * statement never reads or writes memory that another thread wrote, or
 * writes memory another thread read, since the last barrier.  Tracked
 * memory is everything threads share: buffers in shared memory and tensors.
 * Register fragments are private and need none.
 *
 * Statements at block level are the unit: a tile_parallel nest counts as
 * one statement (its iterations are independent by the checker's rules).
 * Branches at block level are uniform, so barriers inside them are reached
 * by every thread.  Loops are walked until their barriers settle, so a
 * hazard from the end of one iteration to the start of the next gets its
 * barrier too.  The leading async copies of a pipelined loop are
 * expand_pipeline.c's to order: the loop it builds waits and synchronizes
 * at the top of each iteration, which this pass treats as a barrier.  A loop with
 * copies_in_gemm is the exception: its fast form orders only the staged
 * buffers, with per-stage mbarriers instead of a block barrier, so only
 * their state is cleared there and anything else gets a barrier of its own.
 *
 * Two tile stores to one tensor need no barrier between them when their
 * regions cannot share an element (disjoint): along some dim of the
 * tensor their origins differ by a constant at least the extent of the
 * tile that covers it there (two halves of a row: Y[t][h][0] and
 * Y[t][h][64] with 64-wide tiles), or, one from the previous iteration of
 * the loop around both, the origin moves by at least that extent each
 * iteration (Y[t0 + i] in loop i).  Any other write to the tensor, and
 * every read, is ordered as before.
 */
#include "ir/tilec_int.h"

#include <string.h>

/* A tile store to a tensor since the last barrier (a COPY into a tensor
 * region), in a list per tensor. */
typedef struct Store {
	const TcStmt *copy;  /* the store */
	const TcStmt *loop;  /* the innermost serial loop around it, or NULL */
	bool carried;        /* made in an earlier iteration of `loop` */
	struct Store *next;
} Store;

typedef struct State {
	bool *written; /* per var index: written since the last barrier */
	bool *read;    /* per var index: read since the last barrier */
	/* Per tensor var index: the tile stores of `written`, and whether
	 * anything else wrote it (then every write is ordered). */
	Store **stores;
	bool *other;
	int n;         /* vars in the kernel */
} State;

typedef struct Barriers {
	TcArena *a;
	TcKernel *k;
	int inserted; /* barriers added in this walk */
	const TcStmt *loop; /* the serial loop being walked, or NULL */
} Barriers;

static bool
shared_memory(const TcVar *v)
{
	return v->kind == TC_VAR_TENSOR || tc_in_smem(v);
}

static State
state_new(Barriers *B)
{
	size_t n = (size_t)B->k->vars.len + 1;
	State s = { tc_alloc(B->a, n), tc_alloc(B->a, n),
		    tc_alloc(B->a, n * sizeof(Store *)), tc_alloc(B->a, n),
		    B->k->vars.len };
	return s;
}

static void
state_copy(State *dst, const State *src)
{
	memcpy(dst->written, src->written, (size_t)src->n);
	memcpy(dst->read, src->read, (size_t)src->n);
	memcpy(dst->stores, src->stores, sizeof(Store *) * (size_t)src->n);
	memcpy(dst->other, src->other, (size_t)src->n);
}

static bool
has_store(const Store *l, const Store *x)
{
	for (; l; l = l->next)
		if (l->copy == x->copy && l->loop == x->loop &&
		    l->carried == x->carried)
			return true;
	return false;
}

static void
state_join(Barriers *B, State *dst, const State *src)
{
	for (int i = 0; i < src->n; i++) {
		dst->written[i] |= src->written[i];
		dst->read[i] |= src->read[i];
		dst->other[i] |= src->other[i];
		for (const Store *x = src->stores[i]; x; x = x->next) {
			if (has_store(dst->stores[i], x))
				continue;
			Store *c = tc_alloc(B->a, sizeof *c);
			*c = *x;
			c->next = dst->stores[i];
			dst->stores[i] = c;
		}
	}
}

static void
state_clear(State *s)
{
	memset(s->written, 0, (size_t)s->n);
	memset(s->read, 0, (size_t)s->n);
	memset(s->stores, 0, sizeof(Store *) * (size_t)s->n);
	memset(s->other, 0, (size_t)s->n);
}

/* The stores of `loop` seen again at the top of its next iteration. */
static void
carry_stores(Barriers *B, State *s, const TcStmt *loop)
{
	for (int i = 0; i < s->n; i++) {
		Store *out = NULL;
		for (const Store *x = s->stores[i]; x; x = x->next) {
			Store *c = tc_alloc(B->a, sizeof *c);
			*c = *x;
			c->carried |= x->loop == loop;
			if (!has_store(out, c)) {
				c->next = out;
				out = c;
			}
		}
		s->stores[i] = out;
	}
}

/* After `loop`: its stores are compared with nothing any more (their
 * iteration is gone), so the writes count as any others. */
static void
leave_loop(State *s, const TcStmt *loop)
{
	for (int i = 0; i < s->n; i++) {
		Store **p = &s->stores[i];
		while (*p) {
			if ((*p)->loop == loop) {
				s->other[i] = true;
				*p = (*p)->next;
			} else {
				p = &(*p)->next;
			}
		}
	}
}

/* Forget the accesses of the buffers the async copies of pipelined loop
 * `loop` fill: expand_pipeline.c orders those across iterations. */
static void
clear_staged(State *s, const TcStmt *loop)
{
	for (int i = 0; i < loop->u.loop.async_copies; i++) {
		const TcStmt *c = loop->u.loop.body->u.block.body.items[i];
		int v = c->u.copy.dst.var->index;
		if (v >= 0) {
			s->written[v] = false;
			s->read[v] = false;
		}
	}
}

/* --- What a statement touches ---------------------------------------------- */

/* Record one access of shared memory or a tensor (tc_stmt_access). */
static void
mark(void *ctx, const TcVar *v, int how)
{
	State *s = ctx;
	if (v->index < 0 || !shared_memory(v))
		return;
	if (how & TC_ROLE_WRITE)
		s->written[v->index] = true;
	if (how & TC_ROLE_READ)
		s->read[v->index] = true;
}

/* --- Disjoint tile stores ------------------------------------------------------ */

/* e as the sum of up to MAX_TERMS signed terms that are not constants,
 * coef * k (k the loop variable, NULL for none) and a constant. */
enum { MAX_TERMS = 8 };
typedef struct Linear {
	const TcExpr *term[MAX_TERMS];
	int sign[MAX_TERMS];
	int nterms;
	long long coef, cst;
} Linear;

static bool
linear_add(Linear *l, const TcExpr *e, const TcVar *k, int sign)
{
	long long c;
	if (tc_expr_const(e, &c)) {
		l->cst += sign * c;
		return true;
	}
	if (k && e->kind == TC_EX_VAR && e->u.var == k) {
		l->coef += sign;
		return true;
	}
	if (e->kind == TC_EX_BINARY && (e->u.bin.op == TC_OP_ADD ||
					e->u.bin.op == TC_OP_SUB))
		return linear_add(l, e->u.bin.lhs, k, sign) &&
		       linear_add(l, e->u.bin.rhs, k,
				  e->u.bin.op == TC_OP_SUB ? -sign : sign);
	if (k && e->kind == TC_EX_BINARY && e->u.bin.op == TC_OP_MUL) {
		const TcExpr *l0 = e->u.bin.lhs, *r0 = e->u.bin.rhs;
		if (r0->kind == TC_EX_VAR && r0->u.var == k && tc_expr_const(l0, &c)) {
			l->coef += sign * c;
			return true;
		}
		if (l0->kind == TC_EX_VAR && l0->u.var == k && tc_expr_const(r0, &c)) {
			l->coef += sign * c;
			return true;
		}
	}
	if (k && tc_expr_mentions(e, k))
		return false; /* k inside a term: not linear in it */
	if (l->nterms == MAX_TERMS)
		return false;
	l->term[l->nterms] = e;
	l->sign[l->nterms++] = sign;
	return true;
}

static TcVisit
find_decl(void *ctx, const TcStmt *s)
{
	const TcVar **v = ctx;
	if (s->kind == TC_ST_DECL && s->u.decl.var == *v) {
		*v = NULL;
		return TC_VISIT_STOP;
	}
	return TC_VISIT_INTO;
}

/* Whether local v is declared in loop's body (a value per iteration). */
static bool
loop_declares(const TcStmt *loop, const TcVar *v)
{
	TcVisitor vis = { .stmt = find_decl, .ctx = &v };
	tc_stmt_visit(loop->u.loop.body, &vis);
	return v == NULL;
}

/* Whether every var e reads keeps its value from one statement to another
 * at one loop level (`carried`: from one iteration of `loop` to the next):
 * parameters, tunables, block indices and locals never assigned after
 * their declaration (declared outside `loop` when carried). */
static bool
steady(const TcExpr *e, const TcStmt *loop, bool carried)
{
	switch (e->kind) {
	case TC_EX_INT:
	case TC_EX_FLOAT:
		return true;
	case TC_EX_VAR: {
		const TcVar *v = e->u.var;
		if (v->kind == TC_VAR_SCALAR || v->kind == TC_VAR_TUNABLE ||
		    v->kind == TC_VAR_BLOCK)
			return true;
		if (v->kind == TC_VAR_LOOP)
			return !carried;
		return v->kind == TC_VAR_LOCAL && !v->mutated &&
		       !(carried && loop_declares(loop, v));
	}
	case TC_EX_BINARY:
		return steady(e->u.bin.lhs, loop, carried) &&
		       steady(e->u.bin.rhs, loop, carried);
	case TC_EX_UNARY: return steady(e->u.un.arg, loop, carried);
	case TC_EX_CAST: return steady(e->u.cast.arg, loop, carried);
	default: return false; /* element reads: memory may change */
	}
}

/* Whether tile stores a and b (COPYs into tensor regions of one tensor)
 * write no element in common; a from an earlier iteration of `loop` when
 * carried. */
static bool
disjoint(const TcStmt *a, const TcStmt *b, const TcStmt *loop, bool carried)
{
	const TcRegion *ra = &a->u.copy.dst, *rb = &b->u.copy.dst;
	const TcVar *t = ra->var;
	const TcVar *k = carried ? loop->u.loop.var : NULL;
	for (int d = 0; d < t->rank; d++) {
		/* The extent of each tile along tensor dim d (1: not covered). */
		long long na = 1, nb = 1;
		for (int i = 0; i < ra->ndims; i++)
			if (ra->dims[i] == d)
				na = tc_var_extent(a->u.copy.src.var, i);
		for (int i = 0; i < rb->ndims; i++)
			if (rb->dims[i] == d)
				nb = tc_var_extent(b->u.copy.src.var, i);
		Linear la = { 0 }, lb = { 0 };
		if (na <= 0 || nb <= 0 ||
		    !linear_add(&la, ra->origin[d], k, 1) ||
		    !linear_add(&lb, rb->origin[d], k, 1) ||
		    la.nterms != lb.nterms)
			continue;
		bool same = true;
		for (int i = 0; i < la.nterms && same; i++)
			same = la.sign[i] == lb.sign[i] &&
			       tc_expr_equal(la.term[i], lb.term[i]) &&
			       steady(la.term[i], loop, carried);
		if (!same)
			continue;
		if (!carried) {
			/* a covers [o, o + na), b [o + delta, o + delta + nb). */
			long long delta = lb.cst - la.cst;
			if (delta >= na || -delta >= nb)
				return true;
		} else if (la.coef == lb.coef && la.cst == lb.cst) {
			/* Iterations m >= 1 steps apart are |coef| * step * m
			 * apart along d. */
			long long step = 0, move = la.coef < 0 ? -la.coef : la.coef;
			if (tc_expr_const(loop->u.loop.step, &step) && step >= 1 &&
			    move > 0 && move >= na && move >= nb)
				return true;
		}
	}
	return false;
}

/* A COPY into a tensor region: a tile store the disjointness test knows. */
static bool
tile_store(const TcStmt *s)
{
	return s->kind == TC_ST_COPY && s->u.copy.dst.var->kind == TC_VAR_TENSOR &&
	       !s->u.copy.dst.whole && s->u.copy.src.var->kind == TC_VAR_BUFFER;
}

/* Whether statement s, whose accesses are acc, must wait for a barrier
 * after the accesses st records. */
static bool
conflicts(const State *st, const State *acc, const TcStmt *s)
{
	for (int i = 0; i < st->n; i++) {
		if ((acc->read[i] && st->written[i]) ||
		    (acc->written[i] && st->read[i]))
			return true;
		if (!acc->written[i] || !st->written[i])
			continue;
		/* Two writes: none between threads if both are tile stores
		 * into regions that share no element. */
		if (st->other[i] || !tile_store(s) ||
		    s->u.copy.dst.var->index != i)
			return true;
		for (const Store *x = st->stores[i]; x; x = x->next)
			if (!disjoint(x->copy, s, x->loop, x->carried))
				return true;
	}
	return false;
}

/* --- The walk ------------------------------------------------------------------- */

static void walk_block(Barriers *B, TcStmt *blk, State *st, int skip);

/* A statement whose parts all run at block level: recurse; others are one
 * unit. */
static void
walk_stmt(Barriers *B, TcStmt *s, State *st)
{
	if (s->kind == TC_ST_IF) {
		State then = state_new(B), els = state_new(B);
		state_copy(&then, st);
		state_copy(&els, st);
		State cond = state_new(B);
		tc_expr_access(s->u.cond.cond, mark, &cond);
		state_join(B, st, &cond);
		walk_block(B, s->u.cond.then, &then, 0);
		if (s->u.cond.els)
			walk_block(B, s->u.cond.els, &els, 0);
		state_copy(st, &then);
		state_join(B, st, &els);
		return;
	}
	if (s->kind == TC_ST_FOR && s->u.loop.kind != TC_LOOP_PARALLEL) {
		State head = state_new(B);
		tc_expr_access(s->u.loop.begin, mark, &head);
		tc_expr_access(s->u.loop.end, mark, &head);
		state_join(B, st, &head);
		int skip = s->u.loop.async_copies;
		/* The expanded loop waits and synchronizes at the top of
		 * each iteration only when some of those copies go to
		 * shared memory. */
		bool synced = false;
		for (int i = 0; i < skip; i++) {
			const TcStmt *c = s->u.loop.body->u.block.body.items[i];
			synced |= tc_in_smem(c->u.copy.dst.var);
		}
		/* Walk the body from the state on entry joined with the state
		 * at the end of the previous iteration, until it settles. */
		State in = state_new(B), cur = state_new(B);
		state_copy(&in, st);
		const TcStmt *outer = B->loop;
		B->loop = s;
		for (int round = 0; round < 4; round++) {
			state_copy(&cur, &in);
			carry_stores(B, &cur, s);
			if (synced && s->u.loop.copies_in_gemm)
				clear_staged(&cur, s); /* the stage barriers */
			else if (synced)
				state_clear(&cur); /* wait_group + barrier */
			int before = B->inserted;
			walk_block(B, s->u.loop.body, &cur, skip);
			state_join(B, &in, &cur);
			if (B->inserted == before && round > 0)
				break;
		}
		B->loop = outer;
		state_copy(st, &in);
		leave_loop(st, s);
		return;
	}
	tc_unreachable();
}

static void
walk_block(Barriers *B, TcStmt *blk, State *st, int skip)
{
	TcVec *body = &blk->u.block.body;
	for (int i = skip; i < body->len; i++) {
		TcStmt *s = body->items[i];
		if (s->kind == TC_ST_BARRIER) {
			state_clear(st);
			continue;
		}
		if (s->kind == TC_ST_BLOCK) {
			walk_block(B, s, st, 0);
			continue;
		}
		State acc = state_new(B);
		tc_stmt_access(s, NULL, mark, &acc);
		if (conflicts(st, &acc, s)) {
			TcStmt *bar = tc_stmt_new(B->a, TC_ST_BARRIER, s->loc);
			tc_vec_push(B->a, body, NULL);
			memmove(&body->items[i + 1], &body->items[i],
				sizeof(void *) * (size_t)(body->len - 1 - i));
			body->items[i] = bar;
			B->inserted++;
			state_clear(st);
			i++;
		}
		if (s->kind == TC_ST_IF ||
		    (s->kind == TC_ST_FOR && s->u.loop.kind != TC_LOOP_PARALLEL)) {
			walk_stmt(B, s, st);
			continue;
		}
		/* What it wrote: a tile store, or anything else. */
		for (int v = 0; v < st->n; v++) {
			if (!acc.written[v])
				continue;
			if (tile_store(s) && s->u.copy.dst.var->index == v) {
				Store *x = tc_alloc(B->a, sizeof *x);
				*x = (Store){ s, B->loop, false, st->stores[v] };
				st->stores[v] = x;
			} else {
				st->other[v] = true;
			}
		}
		state_join(B, st, &acc);
	}
}

bool
tc_barrier(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d)
{
	(void)d;
	if (!opt->target.simt)
		return true;
	for (int i = 0; i < p->kernels.len; i++) {
		Barriers B = { .a = a, .k = p->kernels.items[i] };
		State st = state_new(&B);
		walk_block(&B, B.k->body, &st, 0);
	}
	return true;
}
