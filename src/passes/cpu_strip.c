/*
 * cpu_strip.c - strips of blocks on the CPU: one thread runs several
 * consecutive blocks of a grid row together, so what they share is copied
 * once (the GotoBLAS/BLIS order of a gemm: A's slice packed once per k
 * step for a row of blocks of C).
 *
 * Input: a program for the openmp target after the fuse and edge passes.
 * Output, on a kernel of the gemm shape, kernel->strip (the blocks a call
 * of the block function runs), kernel->strip_loop, stmt->each_block on
 * the statements each block of the strip runs, var->each_block on the
 * top-level buffers each block keeps its own of; printed by --emit=ir (a
 * `strip` line after the grid, `, each block` after such a statement),
 * checked by the verifier, read by emitters/openmp.c, which prints:
 *
 *   KERNEL_block(..., bx0, nbx, by): buffers each block keeps, nbx of
 *   them; the top level's shared statements once, then its each-block
 *   statements in a loop over the strip's blocks (bx = bx0 + b); the
 *   strip loop's body the same way, once per iteration.
 *
 * The gemm shape: a 2-D (or 3-D) grid whose x index names the block, and
 * at the kernel's top level one serial or pipelined loop holding a
 * tile_gemm among its body's statements.  A row-wise run (fuse) of those
 * sequences must be all shared or all each-block statements.  A statement is each-block when
 * it reads grid x, or a buffer, local or tensor an each-block statement
 * writes (a fixpoint over the top level and the loop's body), adds
 * atomically into a tensor (every block's addition counts, even of the
 * same values), or declares a scalar an each-block statement writes (a
 * tile_max's result: each block keeps its own; one the top level declares
 * before the loop, a sum carried over its iterations, stops the strip);
 * the rest are shared.  Such a buffer is kept once per block (var->each_block)
 * unless it lives only within one block's turn of an iteration: written
 * whole by the loop body's first statement to touch it, touched nowhere
 * else (B's slice, copied for each block).  The strip pays when a shared statement of the loop writes
 * a buffer an each-block one reads (a copy feeding the gemm).  Printing
 * a sequence's shared statements before its each-block ones reorders
 * them, so no shared statement may write what an earlier each-block one
 * of its sequence reads, nor read what it writes.
 *
 * Blocks a strip: opt->cpu_strip where given (--cpu-strip=N; 0 or 1:
 * none); by default 4, and only where the loop's body is the gemm shape
 * proper (copies of tensor regions into whole buffers, their prefetches,
 * gemms).  A strip of N blocks keeps N copies of its each-block buffers
 * on the thread's stack; the frame's bytes grow to match and must stay
 * under 4 times the target's limit (the default takes fewer blocks to
 * fit).  The kernel function shortens the strip at run time where
 * shorter strips spread the grid more evenly over the threads
 * (tilec_strip_blocks: a skinny gemm keeps every thread busy).
 *
 * A kernel of the gemm shape the pass cannot strip gets a note saying
 * why.
 */
#include "passes/passes.h"

#include "analysis/walk.h"

#include <string.h>

/* Blocks a strip by default: A's copy falls to a quarter (docs/perf.md,
 * 2026-12-03: 4 and 2 measured alike, both ahead of none). */
enum { STRIP_DEFAULT = 4 };

typedef struct Strip {
	TcArena *a;
	const TcKernel *k;
	bool *dep;       /* by var index: differs between the strip's blocks */
	bool *written;   /* scratch: what one statement writes */
	bool *read;      /* scratch: what one statement reads */
} Strip;

static void
note_read(void *ctx, const TcVar *v)
{
	Strip *S = ctx;
	if (v->kind != TC_VAR_TUNABLE) /* indexed among the program's */
		S->read[v->index] = true;
}

static TcVisit
read_expr(void *ctx, const TcExpr *e)
{
	if (e->kind == TC_EX_VAR)
		note_read(ctx, e->u.var);
	else if (e->kind == TC_EX_LOAD)
		note_read(ctx, e->u.load.var);
	return TC_VISIT_INTO;
}

static void
note_access(void *ctx, const TcVar *v, int how)
{
	Strip *S = ctx;
	if (how & TC_ROLE_WRITE)
		S->written[v->index] = true;
	if (how & TC_ROLE_READ)
		S->read[v->index] = true;
}

static TcVisit
written_stmt(void *ctx, const TcStmt *s)
{
	Strip *S = ctx;
	if (s->kind == TC_ST_DECL)
		S->written[s->u.decl.var->index] = true;
	else if (s->kind == TC_ST_ASSIGN && s->u.assign.dst->kind == TC_EX_VAR)
		S->written[s->u.assign.dst->u.var->index] = true;
	else if (s->kind == TC_ST_FOR && s->u.loop.var)
		S->written[s->u.loop.var->index] = true;
	else if (s->kind == TC_ST_REDUCE_ALL)
		S->written[s->u.reduce_all.dst->index] = true;
	return TC_VISIT_INTO;
}

/* S->read and S->written: what s reads and writes (scalars, buffers and
 * tensors; any var it names counts as read). */
static void
accesses(Strip *S, const TcStmt *s)
{
	size_t n = (size_t)S->k->vars.len + 1;
	memset(S->read, 0, n);
	memset(S->written, 0, n);
	TcVisitor vis = { .expr = read_expr, .stmt = written_stmt,
			  .var = note_read, .ctx = S };
	tc_stmt_visit(s, &vis);
	tc_stmt_access(s, NULL, note_access, S);
}

static bool
reads_dep(const Strip *S)
{
	for (int i = 0; i <= S->k->vars.len; i++)
		if (S->read[i] && S->dep[i])
			return true;
	return false;
}

static void
find_atomic(void *ctx, TcStmt *s, int par_depth)
{
	bool *found = ctx;
	(void)par_depth;
	if (s->kind == TC_ST_ATOMIC_ADD)
		*found = true;
}

/* Whether s holds a tile_atomic_add: run once for a strip, it would add
 * once where each block adds. */
static bool
adds_atomically(const TcStmt *s)
{
	bool found = false;
	tc_walk_stmts((TcStmt *)s, 0, find_atomic, &found);
	return found;
}

/* One round of the fixpoint over the statements of seq: returns whether
 * anything changed. */
static bool
spread(Strip *S, const TcStmt *seq, const TcStmt *loop)
{
	bool changed = false;
	for (int i = 0; i < seq->u.block.body.len; i++) {
		TcStmt *s = seq->u.block.body.items[i];
		if (s == loop || s->each_block)
			continue;
		accesses(S, s);
		/* A scalar that differs between blocks is declared for each
		 * block's turn: shared, one block's value would reach the
		 * next. */
		bool own = s->kind == TC_ST_DECL &&
			   s->u.decl.var->kind != TC_VAR_BUFFER &&
			   S->dep[s->u.decl.var->index];
		if (!own && !reads_dep(S) && !adds_atomically(s))
			continue;
		s->each_block = true;
		changed = true;
		for (int v = 0; v <= S->k->vars.len; v++)
			if (S->written[v])
				S->dep[v] = true;
	}
	return changed;
}

/* Whether printing seq's shared statements before its each-block ones
 * keeps every pair's order that matters; else the first shared statement
 * that cannot move. */
static const TcStmt *
unmovable(Strip *S, const TcStmt *seq, const TcStmt *loop)
{
	size_t n = (size_t)S->k->vars.len + 1;
	bool *r = tc_alloc(S->a, n), *w = tc_alloc(S->a, n);
	for (int i = 0; i < seq->u.block.body.len; i++) {
		const TcStmt *s = seq->u.block.body.items[i];
		if (s == loop) {
			/* The loop splits the top level in two parts. */
			memset(r, 0, n);
			memset(w, 0, n);
			continue;
		}
		accesses(S, s);
		if (s->each_block) {
			for (size_t v = 0; v < n; v++) {
				r[v] |= S->read[v];
				w[v] |= S->written[v];
			}
			continue;
		}
		for (size_t v = 0; v < n; v++)
			if ((S->written[v] && (r[v] || w[v])) ||
			    (S->read[v] && w[v]))
				return s;
	}
	return NULL;
}

static bool
holds_gemm(const TcStmt *body)
{
	for (int i = 0; i < body->u.block.body.len; i++) {
		const TcStmt *s = body->u.block.body.items[i];
		if (s->kind == TC_ST_GEMM)
			return true;
	}
	return false;
}

/* Whether a loop body only copies tensor regions into buffers (and
 * prefetches them) and multiplies. */
static bool
plain_gemm_loop(const TcStmt *body)
{
	for (int i = 0; i < body->u.block.body.len; i++) {
		const TcStmt *s = body->u.block.body.items[i];
		if (s->kind == TC_ST_GEMM || s->kind == TC_ST_PREFETCH)
			continue;
		if (s->kind != TC_ST_COPY || !s->u.copy.dst.whole ||
		    s->u.copy.dst.var->kind != TC_VAR_BUFFER ||
		    s->u.copy.src.var->kind != TC_VAR_TENSOR)
			return false;
	}
	return true;
}

static void
find_gemm(void *ctx, TcStmt *s, int par_depth)
{
	const TcStmt **g = ctx;
	(void)par_depth;
	if (s->kind == TC_ST_GEMM && !*g)
		*g = s;
}

static long long
buffer_bytes(const TcVar *v)
{
	long long n = tc_cpu_elem_bytes(v->dtype);
	for (int d = 0; d < v->rank; d++)
		n *= tc_var_extent(v, d);
	return n;
}

/* Whether buffer b, which differs between blocks, lives only within one
 * block's turn of an iteration of the loop: the top level does not touch
 * it, and the first of the loop body's statements that does writes all
 * of it (a copy or fill into the whole buffer) without reading it.  The
 * strip's blocks then take turns with one of it. */
static bool
turn_local(const TcKernel *k, const TcStmt *loop, const TcVar *b)
{
	for (int i = 0; i < k->body->u.block.body.len; i++) {
		const TcStmt *s = k->body->u.block.body.items[i];
		if (s != loop && s->kind != TC_ST_DECL &&
		    tc_stmt_touches(s, NULL, b))
			return false;
	}
	const TcStmt *body = loop->u.loop.body;
	for (int i = 0; i < body->u.block.body.len; i++) {
		const TcStmt *s = body->u.block.body.items[i];
		int how = tc_stmt_touches(s, NULL, b);
		if (!how)
			continue;
		const TcRegion *dst =
			s->kind == TC_ST_COPY ? &s->u.copy.dst :
			s->kind == TC_ST_FILL ? &s->u.fill.dst : NULL;
		return how == TC_ROLE_WRITE && dst && dst->var == b &&
		       dst->whole;
	}
	return true;
}

static void
clear_marks(TcKernel *k, TcStmt *loop)
{
	for (int i = 0; i < k->body->u.block.body.len; i++)
		((TcStmt *)k->body->u.block.body.items[i])->each_block = false;
	if (loop)
		for (int i = 0; i < loop->u.loop.body->u.block.body.len; i++)
			((TcStmt *)loop->u.loop.body->u.block.body.items[i])
				->each_block = false;
}

static void
strip_kernel(TcArena *a, TcKernel *k, const TcOptions *opt, TcDiags *d)
{
	const TcTarget *t = &opt->target;
	int want = opt->cpu_strip == 0 ? STRIP_DEFAULT : opt->cpu_strip;
	if (want <= 1 || !k->grid[0] || !k->block[0] ||
	    (!k->grid[1] && !k->grid[2]))
		return;
	/* The one top-level loop with a gemm in its body. */
	TcStmt *loop = NULL;
	for (int i = 0; i < k->body->u.block.body.len; i++) {
		TcStmt *s = k->body->u.block.body.items[i];
		if (s->kind == TC_ST_FOR && holds_gemm(s->u.loop.body)) {
			if (loop) {
				tc_diag(d, TC_NOTE, s->loc, "no strip of "
					"blocks for kernel '%s': more than one "
					"loop holds a tile_gemm", k->name);
				return;
			}
			loop = s;
		}
	}
	if (!loop || loop->u.loop.kind == TC_LOOP_PARALLEL) {
		const TcStmt *g = NULL;
		tc_walk_stmts(k->body, 0, find_gemm, &g);
		if (g)
			tc_diag(d, TC_NOTE, g->loc, "no strip of blocks for "
				"kernel '%s': its tile_gemm is not in the body "
				"of one serial or pipelined loop at the "
				"kernel's top level", k->name);
		return;
	}
	TcLoc at = loop->loc;
	/* By default only the gemm shape proper: the loop copies into
	 * buffers and multiplies. */
	if (opt->cpu_strip == 0 && !plain_gemm_loop(loop->u.loop.body))
		return;
	size_t n = (size_t)k->vars.len + 1;
	Strip S = { .a = a, .k = k, .dep = tc_alloc(a, n),
		    .written = tc_alloc(a, n), .read = tc_alloc(a, n) };
	S.dep[k->block[0]->index] = true;
	while (spread(&S, k->body, loop) |
	       spread(&S, loop->u.loop.body, NULL))
		;
	const char *why = NULL;
	const TcStmt *where = NULL;
	/* The loop's own bounds must be the same for every block. */
	TcStmt shell = *loop;
	shell.u.loop.body = NULL;
	accesses(&S, &shell);
	if (reads_dep(&S))
		why = "its loop's bounds depend on grid x";
	/* A scalar the top level declares for one block before the loop
	 * would not outlive the loop over the strip that declares it (after
	 * the loop, the statements that follow run in the same loop over
	 * the strip, or, if shared, cannot run before it: unmovable). */
	for (int i = 0; !why && i < k->body->u.block.body.len; i++) {
		const TcStmt *s = k->body->u.block.body.items[i];
		if (s == loop)
			break;
		if (s->each_block && s->kind == TC_ST_DECL &&
		    s->u.decl.var->kind != TC_VAR_BUFFER) {
			why = tc_fmt(a, "'%s' depends on grid x",
				     s->u.decl.var->name);
			where = s;
		}
	}
	if (!why) {
		where = unmovable(&S, k->body, loop);
		if (!where)
			where = unmovable(&S, loop->u.loop.body, NULL);
		if (where)
			why = "a statement the blocks share cannot run "
			      "before one each block runs";
	}
	/* A row-wise run (fuse) prints as one loop: its statements all
	 * shared or all each-block. */
	for (int f = 0; !why && f < k->fusions.len; f++) {
		const TcFusion *F = k->fusions.items[f];
		if (F->block != k->body && F->block != loop->u.loop.body)
			continue;
		const TcStmt *first = F->block->u.block.body.items[F->first];
		for (int i = 1; i < F->nstmts; i++) {
			const TcStmt *s = F->block->u.block.body.items[F->first + i];
			if (s->each_block != first->each_block) {
				why = "a row-wise run (fuse) holds statements "
				      "each block runs and statements the blocks "
				      "share";
				where = first;
			}
		}
	}
	/* What the blocks share and the loop's each-block statements read:
	 * without it the strip saves nothing. */
	bool pays = false;
	const TcStmt *body = loop->u.loop.body;
	size_t nv = n;
	bool *wanted = tc_alloc(a, nv);
	for (int i = 0; i < body->u.block.body.len; i++) {
		const TcStmt *s = body->u.block.body.items[i];
		if (!s->each_block)
			continue;
		accesses(&S, s);
		for (size_t v = 0; v < nv; v++)
			wanted[v] |= S.read[v];
	}
	for (int i = 0; i < body->u.block.body.len; i++) {
		const TcStmt *s = body->u.block.body.items[i];
		if (s->each_block || s->kind == TC_ST_PREFETCH)
			continue;
		accesses(&S, s);
		for (size_t v = 0; v < nv; v++)
			if (S.written[v] && wanted[v] &&
			    ((const TcVar *)k->vars.items[v])->kind ==
				    TC_VAR_BUFFER)
				pays = true;
	}
	if (!why && !pays)
		why = "no copy of its loop is the same for every block of a "
		      "row";
	/* Each block's own buffers, and the frame they make. */
	long long each = 0;
	for (int i = 0; !why && i < k->body->u.block.body.len; i++) {
		const TcStmt *s = k->body->u.block.body.items[i];
		if (s->kind == TC_ST_DECL &&
		    s->u.decl.var->kind == TC_VAR_BUFFER &&
		    S.dep[s->u.decl.var->index] &&
		    !turn_local(k, loop, s->u.decl.var) &&
		    !s->u.decl.var->unstored)
			each += buffer_bytes(s->u.decl.var);
	}
	/* The default takes fewer blocks where their buffers would pass
	 * 4 times the frame limit on the thread's stack. */
	while (!why && opt->cpu_strip == 0 && want > 2 &&
	       k->stack_bytes + (want - 1) * each > 4 * t->smem_limit)
		want--;
	long long frame = k->stack_bytes + (want - 1) * each;
	if (!why && frame > 4 * t->smem_limit)
		why = tc_fmt(a, "%d blocks' buffers would take %s of the "
			     "thread's stack", want, tc_size_text(a, frame));
	if (why) {
		tc_diag(d, TC_NOTE, where ? where->loc : at,
			"no strip of blocks for kernel '%s': %s", k->name, why);
		clear_marks(k, loop);
		return;
	}
	for (int i = 0; i < k->body->u.block.body.len; i++) {
		TcStmt *s = k->body->u.block.body.items[i];
		if (s->kind == TC_ST_DECL &&
		    s->u.decl.var->kind == TC_VAR_BUFFER &&
		    S.dep[s->u.decl.var->index]) {
			/* Declared once: N of it, or one the blocks take
			 * turns with. */
			s->u.decl.var->each_block =
				!turn_local(k, loop, s->u.decl.var) &&
				!s->u.decl.var->unstored;
			s->each_block = false;
		}
	}
	k->strip = want;
	k->strip_loop = loop;
	k->frame_bytes += (want - 1) * each;
	k->stack_bytes = frame;
}

bool
tc_cpu_strip(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d)
{
	for (int i = 0; i < p->kernels.len; i++)
		strip_kernel(a, p->kernels.items[i], opt, d);
	return true;
}
