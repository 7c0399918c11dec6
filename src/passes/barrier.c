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
 */
#include "ir/tilec_int.h"

#include <string.h>

typedef struct State {
	bool *written; /* per var index: written since the last barrier */
	bool *read;    /* per var index: read since the last barrier */
	int n;         /* vars in the kernel */
} State;

typedef struct Barriers {
	TcArena *a;
	TcKernel *k;
	int inserted; /* barriers added in this walk */
} Barriers;

static bool
shared_memory(const TcVar *v)
{
	return v->kind == TC_VAR_TENSOR || tc_in_smem(v);
}

static State
state_new(Barriers *B)
{
	State s = { tc_alloc(B->a, (size_t)B->k->vars.len + 1),
		    tc_alloc(B->a, (size_t)B->k->vars.len + 1), B->k->vars.len };
	return s;
}

static void
state_copy(State *dst, const State *src)
{
	memcpy(dst->written, src->written, (size_t)src->n);
	memcpy(dst->read, src->read, (size_t)src->n);
}

static void
state_join(State *dst, const State *src)
{
	for (int i = 0; i < src->n; i++) {
		dst->written[i] |= src->written[i];
		dst->read[i] |= src->read[i];
	}
}

static void
state_clear(State *s)
{
	memset(s->written, 0, (size_t)s->n);
	memset(s->read, 0, (size_t)s->n);
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

static bool
conflicts(const State *st, const State *acc)
{
	for (int i = 0; i < st->n; i++)
		if ((acc->read[i] && st->written[i]) ||
		    (acc->written[i] && (st->written[i] || st->read[i])))
			return true;
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
		state_join(st, &cond);
		walk_block(B, s->u.cond.then, &then, 0);
		if (s->u.cond.els)
			walk_block(B, s->u.cond.els, &els, 0);
		state_copy(st, &then);
		state_join(st, &els);
		return;
	}
	if (s->kind == TC_ST_FOR && s->u.loop.kind != TC_LOOP_PARALLEL) {
		State head = state_new(B);
		tc_expr_access(s->u.loop.begin, mark, &head);
		tc_expr_access(s->u.loop.end, mark, &head);
		state_join(st, &head);
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
		for (int round = 0; round < 4; round++) {
			state_copy(&cur, &in);
			if (synced && s->u.loop.copies_in_gemm)
				clear_staged(&cur, s); /* the stage barriers */
			else if (synced)
				state_clear(&cur); /* wait_group + barrier */
			int before = B->inserted;
			walk_block(B, s->u.loop.body, &cur, skip);
			state_join(&in, &cur);
			if (B->inserted == before && round > 0)
				break;
		}
		state_copy(st, &in);
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
		if (conflicts(st, &acc)) {
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
		    (s->kind == TC_ST_FOR && s->u.loop.kind != TC_LOOP_PARALLEL))
			walk_stmt(B, s, st);
		else
			state_join(st, &acc);
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
