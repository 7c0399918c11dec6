/*
 * fuse_b.c - a gemm's B operand computed as the gemm loads it, by the
 * element loop that wrote it (CUDA, mma.sync; after layout).
 *
 * A dequantizing gemm writes
 *
 *     tile_parallel(n, BLOCK_N) tile_parallel(j, BLOCK_K)
 *             Ws[n][j] = ((float)Ws4[n][j] - zero[n]) * scale[n];
 *     tile_gemm(acc, As, Ws, TILE_TRANS_B);
 *
 * As written, the loop stores every element of Ws in shared memory, the
 * block meets at a barrier, and the gemm reads the elements back with
 * ldmatrix.  At decode-sized M that round trip, not the multiply, is most
 * of the kernel's work.  Each warp of an mma.sync gemm multiplies the
 * columns of C it owns, that is B's rows n0 .. n0 + 8 TN; when the warps
 * of the block lie in one row (one warp along M) no two of them read the
 * same element of B, and each can compute the elements it multiplies, in
 * registers, as it needs them (tilec::mma_sr): no store, no barrier, no
 * shared memory for B.
 *
 * Input: a program after layout.  Output: where, in one block, a spread
 * loop nest (n over B's rows, then j over its columns, each over the whole
 * extent) whose one statement assigns B[n][j] is followed by a gemm
 * acc += A * B^T, the statements between leaving B alone and writing
 * nothing the loop reads, the nest moves into the gemm (gemm.b_from) and B is
 * folded (var->folded, var->computed: declared, but held nowhere), when:
 *
 *   - the gemm is mma.sync's (layout kind MMA; a wgmma gemm reads B from
 *     shared memory), f32 += f16 x f16 or bf16 x bf16, A a shared tile
 *     read untransposed, K a multiple of 32 (the helper's lanes take runs
 *     of 8 k in each 32-column chunk);
 *   - one warp along M (layout.warps_m): each element is computed once;
 *   - no other statement of the kernel names B;
 *   - the value reads only shared tiles other than B and scalars (the
 *     lanes evaluate it where the gemm runs, after the same barrier).
 *
 * The elements are the same values (the value is evaluated as written,
 * rounded to B's type once, as the store did); the gemm sums each 32-k
 * chunk's products in another order within its two instructions.
 *
 * A near miss, such a nest right before such a gemm that one condition
 * keeps apart, gets the reason in gemm.b_why (explain.c notes it always:
 * a fast path not taken is said).
 */
#include "passes/passes.h"

#include "analysis/walk.h"

#include <string.h>

typedef struct Fuse {
	TcArena *a;
	TcKernel *k;
} Fuse;

/* The innermost statement of a spread nest of two loops over B, or NULL:
 * each loop PARALLEL, spread over the threads, from 0 over the whole
 * extent of B's dim, its body one statement. */
static const TcStmt *
nest_assign(const TcStmt *s, const TcVar *b)
{
	const TcStmt *loops[2] = { s, NULL };
	for (int i = 0; i < 2; i++) {
		const TcStmt *l = loops[i];
		long long begin, end;
		if (!l || l->kind != TC_ST_FOR ||
		    l->u.loop.kind != TC_LOOP_PARALLEL ||
		    l->u.loop.threads != TC_THREADS_SPREAD ||
		    !tc_expr_const(l->u.loop.begin, &begin) || begin != 0 ||
		    !tc_expr_const(l->u.loop.end, &end) ||
		    end != tc_var_extent(b, i) ||
		    l->u.loop.body->u.block.body.len != 1)
			return NULL;
		const TcStmt *in = l->u.loop.body->u.block.body.items[0];
		if (i == 0)
			loops[1] = in;
		else
			s = in;
	}
	const TcExpr *dst = s->kind == TC_ST_ASSIGN ? s->u.assign.dst : NULL;
	if (!dst || dst->kind != TC_EX_LOAD || dst->u.load.var != b)
		return NULL;
	for (int i = 0; i < 2; i++) {
		const TcExpr *x = dst->u.load.idx[i];
		if (x->kind != TC_EX_VAR || x->u.var != loops[i]->u.loop.var)
			return NULL;
	}
	return s;
}

typedef struct Reads {
	const TcVar *b;
	const char *why; /* what the value reads that keeps it a loop */
	TcArena *a;
} Reads;

static TcVisit
check_read(void *ctx, const TcExpr *e)
{
	Reads *r = ctx;
	if (e->kind != TC_EX_LOAD)
		return TC_VISIT_INTO;
	const TcVar *v = e->u.load.var;
	if (v == r->b)
		r->why = tc_fmt(r->a, "its value reads '%s' itself", v->name);
	else if (!tc_in_smem(v))
		r->why = tc_fmt(r->a, "its value reads '%s', which is not a "
				"shared tile", tc_var_shown(v));
	return r->why ? TC_VISIT_STOP : TC_VISIT_INTO;
}

/* The statements of the kernel that touch v: its element reads and
 * writes, and the loop bounds and conditions that read it (blocks, and
 * v's declaration, do not count). */
typedef struct Count {
	const TcVar *v;
	int n;
} Count;

static void
count_uses(void *ctx, TcStmt *s, int par_depth)
{
	Count *c = ctx;
	(void)par_depth;
	switch (s->kind) {
	case TC_ST_BLOCK:
		return;
	case TC_ST_FOR:
		c->n += tc_expr_touches(s->u.loop.begin, c->v) ||
			tc_expr_touches(s->u.loop.end, c->v) ||
			tc_expr_touches(s->u.loop.step, c->v);
		return;
	case TC_ST_IF:
		c->n += tc_expr_touches(s->u.cond.cond, c->v) != 0;
		return;
	case TC_ST_DECL:
		if (s->u.decl.var == c->v)
			return;
		break;
	default:
		break;
	}
	c->n += tc_stmt_touches(s, NULL, c->v) != 0;
}

static bool
half_float(TcDtype t)
{
	return t == TC_DT_F16 || t == TC_DT_BF16;
}

/* Why the nest whose assignment is `as` cannot move into `gemm` (a gemm
 * acc += A * B^T that reads the buffer the nest writes whole, after it);
 * NULL when it can. */
static const char *
why_not(Fuse *F, const TcStmt *as, const TcStmt *gemm)
{
	const TcVar *c = gemm->u.gemm.c.var, *av = gemm->u.gemm.a.var,
		    *b = gemm->u.gemm.b.var;
	if (c->layout.kind != TC_LAYOUT_MMA)
		return "the gemm is not mma.sync's";
	if (c->layout.warps_m != 1)
		return tc_fmt(F->a, "the gemm's %d warps along M would each "
			      "compute the same elements",
			      c->layout.warps_m);
	if (c->dtype != TC_DT_F32 || !half_float(b->dtype) ||
	    av->dtype != b->dtype)
		return "the gemm is not f32 += f16 x f16 or bf16 x bf16";
	if (gemm->u.gemm.trans_a || gemm->u.gemm.round_a || !tc_in_smem(av) ||
	    !gemm->u.gemm.a.whole)
		return tc_fmt(F->a, "its A operand '%s' is not a whole shared "
			      "tile read untransposed", tc_var_shown(av));
	if (tc_var_extent(b, 1) % 32 != 0)
		return tc_fmt(F->a, "its K (%lld) is not a multiple of 32",
			      tc_var_extent(b, 1));
	Count n = { b, 0 };
	tc_walk_stmts(F->k->body, 0, count_uses, &n);
	if (n.n != 2)
		return tc_fmt(F->a, "another statement names '%s'", b->name);
	Reads r = { b, NULL, F->a };
	TcVisitor vis = { .expr = check_read, .ctx = &r };
	tc_expr_visit(as->u.assign.value, &vis);
	return r.why;
}

/* What a value names: the buffers it loads and the scalars it reads. */
enum { MAX_NAMED = 32 };
typedef struct Named {
	const TcVar *v[MAX_NAMED];
	int n;
	bool full;     /* more than MAX_NAMED */
	bool assigned; /* a statement assigns one of the scalars */
} Named;

static TcVisit
collect_named(void *ctx, const TcExpr *e)
{
	Named *m = ctx;
	const TcVar *v = e->kind == TC_EX_LOAD ? e->u.load.var :
			 e->kind == TC_EX_VAR ? e->u.var : NULL;
	if (!v)
		return TC_VISIT_INTO;
	for (int i = 0; i < m->n; i++)
		if (m->v[i] == v)
			return TC_VISIT_INTO;
	if (m->n == MAX_NAMED) {
		m->full = true;
		return TC_VISIT_STOP;
	}
	m->v[m->n++] = v;
	return TC_VISIT_INTO;
}

/* Sets `assigned` where a statement assigns a scalar of the set. */
static TcVisit
assigns_named(void *ctx, const TcStmt *s)
{
	Named *m = ctx;
	const TcVar *v = s->kind == TC_ST_ASSIGN &&
			 s->u.assign.dst->kind == TC_EX_VAR ?
			 s->u.assign.dst->u.var : NULL;
	for (int i = 0; v && i < m->n; i++)
		if (m->v[i] == v) {
			m->assigned = true;
			return TC_VISIT_STOP;
		}
	return TC_VISIT_INTO;
}

/* Whether the value of `as` computes the same at statement `to` of list
 * as at `from`: the statements between write nothing it reads. */
static bool
same_between(const TcVec *list, int from, int to, const TcStmt *as)
{
	Named m = { .n = 0 };
	TcVisitor vis = { .expr = collect_named, .ctx = &m };
	tc_expr_visit(as->u.assign.value, &vis);
	if (m.full)
		return false;
	for (int i = from + 1; i < to; i++) {
		const TcStmt *s = list->items[i];
		for (int j = 0; j < m.n; j++)
			if (tc_stmt_touches(s, NULL, m.v[j]) & TC_ROLE_WRITE)
				return false;
		TcVisitor st = { .stmt = assigns_named, .ctx = &m };
		tc_stmt_visit(s, &st);
		if (m.assigned)
			return false;
	}
	return true;
}

static void
fuse_block(void *ctx, TcStmt *s, int par_depth)
{
	Fuse *F = ctx;
	(void)par_depth;
	if (s->kind != TC_ST_BLOCK)
		return;
	TcVec *list = &s->u.block.body;
	for (int g = 1; g < list->len; g++) {
		TcStmt *gemm = list->items[g];
		if (gemm->kind != TC_ST_GEMM || !gemm->u.gemm.trans_b ||
		    !gemm->u.gemm.b.whole || gemm->u.gemm.b_from)
			continue;
		TcVar *b = gemm->u.gemm.b.var;
		if (!b || b->kind != TC_VAR_BUFFER || b->rank != 2 ||
		    !tc_in_smem(b))
			continue;
		/* The statement before the gemm that last touches B (those
		 * between leave it alone). */
		int i = g - 1;
		while (i >= 0 && !tc_stmt_touches(list->items[i], NULL, b))
			i--;
		if (i < 0)
			continue;
		TcStmt *loop = list->items[i];
		const TcStmt *as = nest_assign(loop, b);
		if (!as)
			continue;
		const char *why = !same_between(list, i, g, as) ?
				  "a statement between them writes what the "
				  "loop reads" : why_not(F, as, gemm);
		if (why) {
			gemm->u.gemm.b_why = tc_fmt(F->a, "the element loop at "
						    "%d:%d stores '%s' in shared "
						    "memory, and this tile_gemm "
						    "reads it back rather than "
						    "computing it as it loads it: "
						    "%s", loop->loc.line,
						    loop->loc.col, b->name, why);
			continue;
		}
		gemm->u.gemm.b_from = loop;
		b->folded = true;
		b->computed = true;
		memmove(&list->items[i], &list->items[i + 1],
			sizeof list->items[0] * (size_t)(list->len - i - 1));
		list->len--;
		g--;
	}
}

bool
tc_fuse_b(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d)
{
	(void)opt;
	(void)d;
	for (int i = 0; i < p->kernels.len; i++) {
		TcKernel *k = p->kernels.items[i];
		Fuse F = { .a = a, .k = k };
		tc_walk_stmts(k->body, 0, fuse_block, &F);
	}
	return true;
}
