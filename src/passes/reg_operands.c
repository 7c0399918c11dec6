/*
 * reg_operands.c - a gemm's A operand in registers read from the fragment
 * it was rounded from (GPU targets, after layout).
 *
 * Attention writes
 *
 *     tile_copy(p, s);          f32 scores into an f16 fragment
 *     tile_gemm(o, p, Vs);      p as the A operand, from registers
 *
 * and the gemm helpers that take A from registers (wgmma_rs, mma_rs,
 * mfma_rs) round each element of it to B's type as they pack pairs of
 * them into the instruction's operand.  So p holds nothing those helpers
 * could not take from s: held as values, p is rounded to f16 by the copy,
 * widened back, then rounded again by the packing (three conversions an
 * element where one does), and it takes registers of its own beside s.
 *
 * Input: a program after layout.  Output: where a COPY of a whole f32
 * register fragment into a whole f16 or bf16 register fragment of the
 * same layout is followed, in the same block, by a gemm that reads the
 * latter as its A operand (the statements between neither touch the
 * narrow fragment nor write the f32 one), and no other statement of the
 * kernel names the narrow fragment, the gemm reads the f32 fragment instead
 * (gemm.round_a, printed `(f16)s`), and the copy and the narrow
 * fragment's declaration are gone (var->folded says so).  Rounding to
 * nearest even once, as the copy did: the operand's bits are the same.
 */
#include "passes/passes.h"

#include "analysis/walk.h"

#include <string.h>

static bool
narrow_float(TcDtype t)
{
	return t == TC_DT_F16 || t == TC_DT_BF16;
}

/* The same register layout: the same distribution of each dim (every
 * field of TcDist, ints, the class included: a copy joins its operands'
 * classes, so fragments a copy relates share them). */
static bool
same_layout(const TcVar *a, const TcVar *b)
{
	if (a->rank != b->rank || a->layout.kind != b->layout.kind ||
	    a->layout.warps_m != b->layout.warps_m ||
	    a->layout.warps_n != b->layout.warps_n)
		return false;
	for (int d = 0; d < a->rank; d++)
		if (tc_var_extent(a, d) != tc_var_extent(b, d) ||
		    memcmp(&a->layout.dim[d], &b->layout.dim[d],
			   sizeof a->layout.dim[d]) != 0)
			return false;
	return true;
}

/* A register fragment held as values, named whole. */
static bool
whole_fragment(const TcRegion *r)
{
	const TcVar *v = r->var;
	return r->whole && v && v->kind == TC_VAR_BUFFER && !v->stored &&
	       tc_layout_is_matrix(v->layout.kind);
}

/* Whether `copy` (a COPY) and `gemm` (a later statement of its block,
 * the statements between touching neither the narrow fragment nor
 * writing the f32 one) fold: see the file's comment. */
static bool
folds(const TcStmt *body, const TcStmt *copy, const TcStmt *gemm)
{
	if (copy->kind != TC_ST_COPY || gemm->kind != TC_ST_GEMM ||
	    gemm->u.gemm.round_a || gemm->u.gemm.trans_a)
		return false;
	const TcRegion *dst = &copy->u.copy.dst, *src = &copy->u.copy.src;
	if (!whole_fragment(dst) || !whole_fragment(src) ||
	    gemm->u.gemm.a.var != dst->var || !gemm->u.gemm.a.whole)
		return false;
	const TcVar *p = dst->var, *s = src->var, *b = gemm->u.gemm.b.var;
	if (!narrow_float(p->dtype) || s->dtype != TC_DT_F32 ||
	    b->dtype != p->dtype || !same_layout(p, s) ||
	    gemm->u.gemm.c.var == s)
		return false;
	/* Every other statement reads p only (none writes it), and every
	 * one but the gemm writes it only: so none but the two names it. */
	return tc_stmt_touches(body, copy, p) == TC_ROLE_READ &&
	       tc_stmt_touches(body, gemm, p) == TC_ROLE_WRITE;
}

typedef struct Fold {
	TcKernel *k;
	const TcStmt *body;
	int folded;
} Fold;

static void
fold_block(void *ctx, TcStmt *s, int par_depth)
{
	Fold *F = ctx;
	(void)par_depth;
	if (s->kind != TC_ST_BLOCK)
		return;
	TcVec *list = &s->u.block.body;
	for (int i = 0; i + 1 < list->len; i++) {
		TcStmt *copy = list->items[i];
		if (copy->kind != TC_ST_COPY || !copy->u.copy.dst.var ||
		    !copy->u.copy.src.var)
			continue;
		const TcVar *pv = copy->u.copy.dst.var, *sv = copy->u.copy.src.var;
		/* The first statement after it that touches p; none
		 * between may write s. */
		TcStmt *gemm = NULL;
		for (int j = i + 1; j < list->len; j++) {
			TcStmt *t = list->items[j];
			if (tc_stmt_touches(t, NULL, pv)) {
				gemm = t;
				break;
			}
			if (tc_stmt_touches(t, NULL, sv) & TC_ROLE_WRITE)
				break;
		}
		if (!gemm || !folds(F->body, copy, gemm))
			continue;
		TcVar *p = copy->u.copy.dst.var;
		gemm->u.gemm.a = copy->u.copy.src;
		gemm->u.gemm.a.loc = copy->u.copy.src.loc;
		gemm->u.gemm.round_a = true;
		p->folded = true;
		memmove(&list->items[i], &list->items[i + 1],
			sizeof list->items[0] * (size_t)(list->len - i - 1));
		list->len--;
		i--;
		F->folded++;
	}
}

/* The declarations of the fragments the gemms no longer read. */
static void
drop_decls(void *ctx, TcStmt *s, int par_depth)
{
	(void)ctx;
	(void)par_depth;
	if (s->kind != TC_ST_BLOCK)
		return;
	TcVec *list = &s->u.block.body;
	int n = 0;
	for (int i = 0; i < list->len; i++) {
		TcStmt *d = list->items[i];
		if (d->kind == TC_ST_DECL && d->u.decl.var->folded)
			continue;
		list->items[n++] = d;
	}
	list->len = n;
}

bool
tc_reg_operands(TcArena *a, TcProgram *p, const TcOptions *opt, TcDiags *d)
{
	(void)a;
	(void)opt;
	(void)d;
	for (int i = 0; i < p->kernels.len; i++) {
		TcKernel *k = p->kernels.items[i];
		Fold F = { .k = k, .body = k->body };
		tc_walk_stmts(k->body, 0, fold_block, &F);
		if (F.folded)
			tc_walk_stmts(k->body, 0, drop_decls, NULL);
	}
	return true;
}
